#include "core/pipeline.hpp"

#include <charconv>
#include <span>

#include <fmt/format.h>

namespace inferbench {

namespace {

// The one word list of an enum: to_string walks it, parse_word reads it back.
template <typename E>
struct Word {
    E value;
    std::string_view word;
};

template <typename E>
std::string_view word_of(std::span<const Word<E>> words, E value) {
    for (const auto& w : words)
        if (w.value == value) return w.word;
    return "?";
}

template <typename E>
std::optional<E> parse_word(std::span<const Word<E>> words, std::string_view text) {
    for (const auto& w : words)
        if (w.word == text) return w.value;
    return std::nullopt;
}

constexpr Word<StagePlace> kPlaces[] = {{StagePlace::cpu, "cpu"}, {StagePlace::gpu, "gpu"}};
constexpr Word<PipelineMode> kModes[] = {{PipelineMode::sequential, "sequential"},
                                                              {PipelineMode::overlapped, "overlapped"}};
constexpr Word<ImageFormat> kFormats[] = {{ImageFormat::jpeg, "jpeg"}, {ImageFormat::png, "png"}};
constexpr Word<ResizeRule> kRules[] = {{ResizeRule::shorter_side_crop, "shorter_side_crop"},
                                                            {ResizeRule::letterbox, "letterbox"},
                                                            {ResizeRule::plain, "plain"}};
constexpr Word<TensorLayout> kLayouts[] = {{TensorLayout::nchw, "nchw"},
                                                                {TensorLayout::nhwc, "nhwc"}};
constexpr Word<PixelType> kPixelTypes[] = {
    {PixelType::f32, "float32"}, {PixelType::f16, "float16"}, {PixelType::u8, "uint8"}};
constexpr Word<PostProcess> kPosts[] = {{PostProcess::none, "none"},
                                                             {PostProcess::softmax_topk, "softmax_topk"},
                                                             {PostProcess::ssd_boxes, "ssd_boxes"},
                                                             {PostProcess::yolo_boxes, "yolo_boxes"},
                                                             {PostProcess::argmax, "argmax"}};
constexpr Word<PipelineStage> kStages[] = {
    {PipelineStage::read, "read"},         {PipelineStage::decode, "decode"},
    {PipelineStage::resize, "resize"},     {PipelineStage::normalize, "normalize"},
    {PipelineStage::infer, "infer"},       {PipelineStage::postprocess, "postprocess"},
    {PipelineStage::nms, "nms"}};

std::optional<std::int64_t> parse_side(std::string_view text) {
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc{} || end != text.data() + text.size() || value < 1 || value > kMaxImageSide)
        return std::nullopt;
    return value;
}

}  // namespace

std::string_view to_string(StagePlace place) { return word_of<decltype(kPlaces[0].value)>(kPlaces, place); }
std::string_view to_string(PipelineMode mode) { return word_of<decltype(kModes[0].value)>(kModes, mode); }
std::string_view to_string(ImageFormat format) { return word_of<decltype(kFormats[0].value)>(kFormats, format); }
std::string_view to_string(ResizeRule rule) { return word_of<decltype(kRules[0].value)>(kRules, rule); }
std::string_view to_string(TensorLayout layout) { return word_of<decltype(kLayouts[0].value)>(kLayouts, layout); }
std::string_view to_string(PixelType type) { return word_of<decltype(kPixelTypes[0].value)>(kPixelTypes, type); }
std::string_view to_string(PostProcess post) { return word_of<decltype(kPosts[0].value)>(kPosts, post); }
std::string_view to_string(PipelineStage stage) { return word_of<decltype(kStages[0].value)>(kStages, stage); }

std::optional<StagePlace> parse_stage_place(std::string_view text) { return parse_word<decltype(kPlaces[0].value)>(kPlaces, text); }
std::optional<PipelineMode> parse_pipeline_mode(std::string_view text) { return parse_word<decltype(kModes[0].value)>(kModes, text); }
std::optional<ImageFormat> parse_image_format(std::string_view text) { return parse_word<decltype(kFormats[0].value)>(kFormats, text); }
std::optional<ResizeRule> parse_resize_rule(std::string_view text) { return parse_word<decltype(kRules[0].value)>(kRules, text); }
std::optional<TensorLayout> parse_tensor_layout(std::string_view text) { return parse_word<decltype(kLayouts[0].value)>(kLayouts, text); }
std::optional<PixelType> parse_pixel_type(std::string_view text) { return parse_word<decltype(kPixelTypes[0].value)>(kPixelTypes, text); }
std::optional<PostProcess> parse_post_process(std::string_view text) { return parse_word<decltype(kPosts[0].value)>(kPosts, text); }
std::optional<PipelineStage> parse_pipeline_stage(std::string_view text) { return parse_word<decltype(kStages[0].value)>(kStages, text); }

std::optional<ImageSize> parse_image_size(std::string_view text) {
    const auto x = text.find('x');
    if (x == std::string_view::npos) return std::nullopt;
    const auto width = parse_side(text.substr(0, x));
    const auto height = parse_side(text.substr(x + 1));
    if (!width || !height) return std::nullopt;
    return ImageSize{*width, *height};
}

std::string to_string(ImageSize size) { return fmt::format("{}x{}", size.width, size.height); }

}  // namespace inferbench
