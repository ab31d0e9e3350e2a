#include "core/plan/pipeline_plan.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

#include <fmt/format.h>

#include "core/plan/settings.hpp"
#include "core/units.hpp"

namespace inferbench {
namespace {

// Bounds that catch typos: more images than a benchmark reads, more threads than a host has.
constexpr std::int64_t kMaxImageCount = 1'000'000;
constexpr std::int64_t kMaxThreads = 256;
constexpr std::int64_t kMaxQueueDepth = 64;
constexpr std::int64_t kMaxTopK = 1000;
constexpr std::int64_t kMaxDetections = 100'000;

std::optional<std::string> read_count(std::string_view key, std::string_view text, std::int64_t min, std::int64_t max,
                                      std::int64_t& into) {
    const auto value = parse_int(text);
    if (!value || *value < min || *value > max)
        return fmt::format("pipeline.{}: '{}' must be a whole number from {} to {}", key, text, min, max);
    into = *value;
    return std::nullopt;
}

std::optional<std::string> read_real(std::string_view key, std::string_view text, double min, double max, float& into) {
    const auto value = parse_double(text);
    if (!value || *value < min || *value > max)
        return fmt::format("pipeline.{}: '{}' must be a number from {:g} to {:g}", key, text, min, max);
    into = static_cast<float>(*value);
    return std::nullopt;
}

template <typename T>
std::optional<std::string> read_word(std::string_view key, std::string_view text, std::optional<T> (*parse)(std::string_view),
                                     std::string_view choices, T& into) {
    const auto value = parse(text);
    if (!value) return fmt::format("pipeline.{}: unknown value '{}'; valid choices: {}", key, text, choices);
    into = *value;
    return std::nullopt;
}

std::optional<std::string> read_size(std::string_view key, std::string_view text, ImageSize& into) {
    const auto size = parse_image_size(text);
    if (!size)
        return fmt::format("pipeline.{}: '{}' must be WIDTHxHEIGHT, each side from 1 to {}, e.g. 640x480", key, text,
                           kMaxImageSide);
    into = *size;
    return std::nullopt;
}

// Three per-channel numbers (R, G, B), "123.675,116.28,103.53"; std's above 0.
std::optional<std::string> read_channels(std::string_view key, std::string_view text, bool positive,
                                         std::array<float, 3>& into) {
    const std::vector<std::string> items = split_list(text);
    std::array<float, 3> values{};
    bool ok = items.size() == 3;
    for (std::size_t i = 0; ok && i < 3; ++i) {
        const auto value = parse_double(items[i]);
        ok = value && *value >= (positive ? 1e-6 : -1e6) && *value <= 1e6;
        if (ok) values[i] = static_cast<float>(*value);
    }
    if (!ok)
        return fmt::format("pipeline.{}: '{}' must be three numbers (R, G, B){}, e.g. [123.675, 116.28, 103.53]", key,
                           text, positive ? " above 0" : "");
    into = values;
    return std::nullopt;
}

std::string channels_text(const std::array<float, 3>& values) {
    return fmt::format("{},{},{}", values[0], values[1], values[2]);
}

PipelineSteps& steps_of(PipelineSettings& settings) {
    if (!settings.steps) settings.steps = PipelineSteps{};
    return *settings.steps;
}
const PipelineSteps& steps_of(const PipelineSettings& settings) {
    static const PipelineSteps none;
    return settings.steps ? *settings.steps : none;
}

std::optional<std::string> read_images(PipelineSettings& s, std::string_view text) {
    if (text.empty()) return "pipeline.images: give synthetic or a folder of JPEG/PNG images";
    if (text.size() > kMaxTextBytes)
        return fmt::format("pipeline.images: the path is {} bytes long, above the {} bytes a path may have", text.size(),
                           kMaxTextBytes);
    s.images = std::string(text);
    return std::nullopt;
}

}  // namespace

const std::vector<PipelineKey>& pipeline_keys() {
    using S = PipelineSettings;
    static const std::vector<PipelineKey> keys = {
        {"images", "synthetic (images inferbench writes with a real encoder) or a folder of JPEG/PNG files", false,
         read_images, [](const S& s) { return s.images; }},
        {"image_count", "synthetic: the images written; a folder: the most read (0: all)", false,
         [](S& s, std::string_view t) { return read_count("image_count", t, 0, kMaxImageCount, s.image_count); },
         [](const S& s) { return std::to_string(s.image_count); }},
        {"image_size", "synthetic images' size, WIDTHxHEIGHT", false,
         [](S& s, std::string_view t) { return read_size("image_size", t, s.image_size); },
         [](const S& s) { return to_string(s.image_size); }},
        {"image_format", "synthetic images' encoding: jpeg, png", false,
         [](S& s, std::string_view t) { return read_word("image_format", t, parse_image_format, "jpeg, png", s.image_format); },
         [](const S& s) { return std::string(to_string(s.image_format)); }},
        {"jpeg_quality", "synthetic JPEGs' quality (1-100)", false,
         [](S& s, std::string_view t) { return read_count("jpeg_quality", t, 1, 100, s.jpeg_quality); },
         [](const S& s) { return std::to_string(s.jpeg_quality); }},
        {"preprocess", "where read, decode, resize and normalise run: cpu, gpu (a list sweeps it)", true,
         [](S& s, std::string_view t) { return read_word("preprocess", t, parse_stage_place, "cpu, gpu", s.preprocess); },
         [](const S& s) { return std::string(to_string(s.preprocess)); }},
        {"postprocess", "where box decoding, NMS, softmax and argmax run: cpu, gpu (a list sweeps it)", true,
         [](S& s, std::string_view t) { return read_word("postprocess", t, parse_stage_place, "cpu, gpu", s.postprocess); },
         [](const S& s) { return std::string(to_string(s.postprocess)); }},
        {"mode", "sequential (one batch through every stage at a time) or overlapped (stages on threads, batch n+1 "
                 "pre-processed while n infers; a list sweeps it)", true,
         [](S& s, std::string_view t) { return read_word("mode", t, parse_pipeline_mode, "sequential, overlapped", s.mode); },
         [](const S& s) { return std::string(to_string(s.mode)); }},
        {"threads", "the CPU stages' worker threads (1-256)", false,
         [](S& s, std::string_view t) { return read_count("threads", t, 1, kMaxThreads, s.threads); },
         [](const S& s) { return std::to_string(s.threads); }},
        {"queue_depth", "overlapped: batches waiting between two stages at most (1-64)", false,
         [](S& s, std::string_view t) { return read_count("queue_depth", t, 1, kMaxQueueDepth, s.queue_depth); },
         [](const S& s) { return std::to_string(s.queue_depth); }},
        {"steps.resize", "a user's model: shorter_side_crop, letterbox, plain", false,
         [](S& s, std::string_view t) {
             return read_word("steps.resize", t, parse_resize_rule, "shorter_side_crop, letterbox, plain", steps_of(s).resize);
         },
         [](const S& s) { return std::string(to_string(steps_of(s).resize)); }},
        {"steps.input_size", "a user's model: its image input, WIDTHxHEIGHT", false,
         [](S& s, std::string_view t) { return read_size("steps.input_size", t, steps_of(s).input_size); },
         [](const S& s) { return to_string(steps_of(s).input_size); }},
        {"steps.resize_shorter", "shorter_side_crop: the shorter side before the crop (0: the input size)", false,
         [](S& s, std::string_view t) { return read_count("steps.resize_shorter", t, 0, kMaxImageSide, steps_of(s).resize_shorter); },
         [](const S& s) { return std::to_string(steps_of(s).resize_shorter); }},
        {"steps.letterbox_fill", "letterbox: the padding's value (0-255)", false,
         [](S& s, std::string_view t) { return read_real("steps.letterbox_fill", t, 0, 255, steps_of(s).letterbox_fill); },
         [](const S& s) { return fmt::format("{}", steps_of(s).letterbox_fill); }},
        {"steps.mean", "per RGB channel on 0..255, subtracted: three numbers", false,
         [](S& s, std::string_view t) { return read_channels("steps.mean", t, false, steps_of(s).mean); },
         [](const S& s) { return channels_text(steps_of(s).mean); }},
        {"steps.std", "per RGB channel on 0..255, divided by: three numbers above 0", false,
         [](S& s, std::string_view t) { return read_channels("steps.std", t, true, steps_of(s).std); },
         [](const S& s) { return channels_text(steps_of(s).std); }},
        {"steps.bgr", "channels in BGR order: true, false", false,
         [](S& s, std::string_view t) -> std::optional<std::string> {
             if (t != "true" && t != "false") return fmt::format("pipeline.steps.bgr: '{}' is not true or false", t);
             steps_of(s).bgr = t == "true";
             return std::nullopt;
         },
         [](const S& s) { return std::string(steps_of(s).bgr ? "true" : "false"); }},
        {"steps.layout", "nchw, nhwc", false,
         [](S& s, std::string_view t) { return read_word("steps.layout", t, parse_tensor_layout, "nchw, nhwc", steps_of(s).layout); },
         [](const S& s) { return std::string(to_string(steps_of(s).layout)); }},
        {"steps.pixel_type", "the image input's element type: float32, float16, uint8", false,
         [](S& s, std::string_view t) {
             return read_word("steps.pixel_type", t, parse_pixel_type, "float32, float16, uint8", steps_of(s).pixel_type);
         },
         [](const S& s) { return std::string(to_string(steps_of(s).pixel_type)); }},
        {"steps.post", "what the outputs become: none, softmax_topk, ssd_boxes, yolo_boxes, argmax", false,
         [](S& s, std::string_view t) {
             return read_word("steps.post", t, parse_post_process, "none, softmax_topk, ssd_boxes, yolo_boxes, argmax",
                              steps_of(s).post);
         },
         [](const S& s) { return std::string(to_string(steps_of(s).post)); }},
        {"steps.top_k", "softmax_topk: the classes kept per image (1-1000)", false,
         [](S& s, std::string_view t) { return read_count("steps.top_k", t, 1, kMaxTopK, steps_of(s).top_k); },
         [](const S& s) { return std::to_string(steps_of(s).top_k); }},
        {"steps.score_threshold", "boxes: a box scoring below it is dropped before NMS (0-1)", false,
         [](S& s, std::string_view t) { return read_real("steps.score_threshold", t, 0, 1, steps_of(s).score_threshold); },
         [](const S& s) { return fmt::format("{}", steps_of(s).score_threshold); }},
        {"steps.iou_threshold", "NMS: a box overlapping a kept one of its class by more is dropped (0-1)", false,
         [](S& s, std::string_view t) { return read_real("steps.iou_threshold", t, 0, 1, steps_of(s).iou_threshold); },
         [](const S& s) { return fmt::format("{}", steps_of(s).iou_threshold); }},
        {"steps.max_detections", "boxes kept per image after NMS (1-100000)", false,
         [](S& s, std::string_view t) {
             return read_count("steps.max_detections", t, 1, kMaxDetections, steps_of(s).max_detections);
         },
         [](const S& s) { return std::to_string(steps_of(s).max_detections); }},
    };
    return keys;
}

const PipelineKey* find_pipeline_key(std::string_view key) {
    for (const PipelineKey& entry : pipeline_keys())
        if (entry.key == key) return &entry;
    return nullptr;
}

std::string pipeline_key_names() {
    std::vector<std::string> names;
    for (const PipelineKey& entry : pipeline_keys()) names.emplace_back(entry.key);
    return join(names, ", ");
}

std::optional<std::string> set_pipeline_key(PipelinePlan& plan, std::string_view key,
                                            const std::vector<std::string>& values) {
    const PipelineKey* entry = find_pipeline_key(key);
    if (!entry) return fmt::format("unknown key 'pipeline.{}'; valid keys: {}", key, pipeline_key_names());
    if (values.empty()) return fmt::format("pipeline.{} is empty; give a value", key);
    if (values.size() > 1 && !entry->axis)
        return fmt::format("pipeline.{} takes one value; only preprocess, postprocess and mode take lists", key);
    std::vector<std::string> texts;
    for (const std::string& value : values) {
        PipelineSettings probe = plan.settings;
        if (auto why = entry->set(probe, value)) return why;
        std::string text = entry->get(probe);
        if (std::find(texts.begin(), texts.end(), text) != texts.end())
            return fmt::format("pipeline.{} lists '{}' twice; list each value once", key, value);
        texts.push_back(std::move(text));
    }
    entry->set(plan.settings, texts.front());
    if (texts.size() > 1) plan.axes[std::string(key)] = std::move(texts);
    else plan.axes.erase(std::string(key));
    return std::nullopt;
}

std::vector<PipelineSettings> pipeline_points(const PipelinePlan& plan) {
    std::vector<PipelineSettings> points = {plan.active() ? plan.settings : PipelineSettings{}};
    if (!plan.active()) return points;
    for (const PipelineKey& entry : pipeline_keys()) {
        const auto axis = plan.axes.find(entry.key);
        if (axis == plan.axes.end()) continue;
        std::vector<PipelineSettings> next;
        for (const PipelineSettings& point : points) {
            for (const std::string& text : axis->second) {
                PipelineSettings cell = point;
                entry.set(cell, text);
                next.push_back(std::move(cell));
            }
        }
        points = std::move(next);
    }
    return points;
}

std::map<std::string, std::vector<std::string>> pipeline_plan_texts(const PipelinePlan& plan) {
    std::map<std::string, std::vector<std::string>> texts;
    for (const auto& [key, text] : pipeline_texts(plan.settings)) texts[key] = {text};
    for (const auto& [key, values] : plan.axes) texts[key] = values;
    return texts;
}

std::map<std::string, std::string> pipeline_texts(const PipelineSettings& settings) {
    std::map<std::string, std::string> texts;
    for (const PipelineKey& entry : pipeline_keys()) {
        if (entry.key.starts_with("steps.") && !settings.steps) continue;
        texts[std::string(entry.key)] = entry.get(settings);
    }
    return texts;
}

PipelineSettings pipeline_from_texts(const std::map<std::string, std::string>& texts) {
    PipelineSettings settings;
    for (const auto& [key, text] : texts) {
        const PipelineKey* entry = find_pipeline_key(key);
        if (!entry) throw std::runtime_error(fmt::format("malformed benchmark spec: pipeline key '{}'", key));
        if (auto why = entry->set(settings, text)) throw std::runtime_error("malformed benchmark spec: " + *why);
    }
    return settings;
}

}  // namespace inferbench
