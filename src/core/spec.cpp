#include "core/spec.hpp"

#include <charconv>

#include <fmt/format.h>

namespace inferbench {

std::string_view to_string(Precision p) {
    switch (p) {
        case Precision::fp32: return "fp32";
        case Precision::fp16: return "fp16";
        case Precision::bf16: return "bf16";
        case Precision::int8: return "int8";
        case Precision::fp8: return "fp8";
        case Precision::int4: return "int4";
    }
    return "?";
}

std::optional<Precision> parse_precision(std::string_view text) {
    for (Precision p : kAllPrecisions) {
        if (to_string(p) == text) return p;
    }
    return std::nullopt;
}

std::string to_string(const Device& d) {
    return d.kind == DeviceKind::cpu ? std::string("cpu") : fmt::format("cuda:{}", d.index);
}

std::optional<Device> parse_device(std::string_view text) {
    if (text == "cpu") return Device{DeviceKind::cpu, 0};
    if (text == "cuda" || text == "gpu") return Device{DeviceKind::cuda, 0};
    for (std::string_view prefix : {"cuda:", "gpu:"}) {
        if (!text.starts_with(prefix)) continue;
        std::string_view digits = text.substr(prefix.size());
        int index = -1;
        auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
        if (ec == std::errc() && end == digits.data() + digits.size() && index >= 0 && !digits.empty())
            return Device{DeviceKind::cuda, index};
    }
    return std::nullopt;
}

std::string BenchmarkSpec::label() const {
    std::string text = fmt::format("{} {} {} {} b{}", model, backend, to_string(device), to_string(precision), batch_size);
    if (generation.active()) text += fmt::format(" in{} out{}", generation.input_tokens, generation.output_tokens);
    if (pipeline.active())
        text += fmt::format(" pipeline {}/{} {}", to_string(pipeline.preprocess), to_string(pipeline.postprocess),
                            to_string(pipeline.mode));
    if (!variant.empty()) text += " [" + variant + "]";
    return text;
}

}  // namespace inferbench
