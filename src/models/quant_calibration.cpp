#include "models/quant_calibration.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace inferbench::models::quant {

std::string_view to_string(CalibrationMethod method) {
    switch (method) {
        case CalibrationMethod::minmax: return "minmax";
        case CalibrationMethod::percentile: return "percentile";
        case CalibrationMethod::entropy: return "entropy";
    }
    return "minmax";
}

std::string_view to_string(ActivationType type) {
    switch (type) {
        case ActivationType::int8: return "int8";
        case ActivationType::uint8: return "uint8";
        case ActivationType::float8e4m3: return "float8e4m3";
    }
    return "int8";
}

void Range::add(std::span<const float> values) {
    for (const float v : values) {
        if (!std::isfinite(v)) continue;
        if (empty) {
            min = max = v;
            empty = false;
        }
        min = std::min(min, v);
        max = std::max(max, v);
    }
}

float Range::max_abs() const { return std::max(std::fabs(min), std::fabs(max)); }

Histogram::Histogram(float max_abs, std::size_t bins)
    : width_(max_abs > 0 ? max_abs / static_cast<float>(bins) : 1.0F), counts_(bins, 0.0) {}

void Histogram::add(std::span<const float> values) {
    const std::size_t last = counts_.size() - 1;
    for (const float v : values) {
        if (!std::isfinite(v)) continue;
        const float bin = std::fabs(v) / width_;
        counts_[bin >= static_cast<float>(last) ? last : static_cast<std::size_t>(bin)] += 1.0;
    }
}

float percentile_threshold(const Histogram& histogram, double percentile) {
    const auto& counts = histogram.counts();
    const double total = std::accumulate(counts.begin(), counts.end(), 0.0);
    if (total == 0) return 0;
    const double wanted = total * std::clamp(percentile, 0.0, 100.0) / 100.0;
    double cumulative = 0;
    for (std::size_t i = 0; i < counts.size(); ++i) {
        cumulative += counts[i];
        if (cumulative >= wanted) return static_cast<float>(i + 1) * histogram.bin_width();
    }
    return static_cast<float>(counts.size()) * histogram.bin_width();
}

namespace {

// KL(P || Q) of two unnormalised distributions over the same bins; bins where P is zero add nothing,
// bins where only Q is zero get Q a small share, as the calibrators smooth it.
double kl_divergence(const std::vector<double>& p, const std::vector<double>& q) {
    const double p_sum = std::accumulate(p.begin(), p.end(), 0.0);
    const double q_sum = std::accumulate(q.begin(), q.end(), 0.0);
    if (p_sum == 0 || q_sum == 0) return std::numeric_limits<double>::infinity();
    constexpr double kEpsilon = 1e-4;
    double kl = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
        if (p[i] == 0) continue;
        const double pi = p[i] / p_sum;
        const double qi = q[i] > 0 ? q[i] / q_sum : kEpsilon / q_sum;
        kl += pi * std::log(pi / qi);
    }
    return kl;
}

// The first `bins` counts merged into `levels` levels, each level's count spread evenly over the
// non-empty bins it covers.
std::vector<double> quantized_distribution(std::span<const double> counts, std::size_t levels) {
    const std::size_t bins = counts.size();
    std::vector<double> q(bins, 0.0);
    for (std::size_t level = 0; level < levels; ++level) {
        const std::size_t begin = level * bins / levels;
        const std::size_t end = (level + 1) * bins / levels;
        double sum = 0;
        std::size_t non_empty = 0;
        for (std::size_t i = begin; i < end; ++i) {
            sum += counts[i];
            if (counts[i] > 0) ++non_empty;
        }
        if (non_empty == 0) continue;
        for (std::size_t i = begin; i < end; ++i)
            if (counts[i] > 0) q[i] = sum / static_cast<double>(non_empty);
    }
    return q;
}

}  // namespace

float entropy_threshold(const Histogram& histogram, std::size_t levels) {
    const auto& counts = histogram.counts();
    if (counts.size() <= levels) return static_cast<float>(counts.size()) * histogram.bin_width();
    double best = std::numeric_limits<double>::infinity();
    std::size_t best_bins = counts.size();
    for (std::size_t bins = levels; bins <= counts.size(); ++bins) {
        const std::span<const double> kept(counts.data(), bins);
        std::vector<double> p(kept.begin(), kept.end());
        p.back() += std::accumulate(counts.begin() + static_cast<std::ptrdiff_t>(bins), counts.end(), 0.0);
        const double kl = kl_divergence(p, quantized_distribution(kept, levels));
        if (kl < best) {
            best = kl;
            best_bins = bins;
        }
    }
    return static_cast<float>(best_bins) * histogram.bin_width();
}

QuantParams symmetric_int8(float threshold) {
    return {threshold > 0 && std::isfinite(threshold) ? threshold / 127.0F : 1.0F, 0};
}

QuantParams symmetric_fp8(float threshold) {
    return {threshold > 0 && std::isfinite(threshold) ? threshold / kFloat8E4M3Max : 1.0F, 0};
}

QuantParams asymmetric_uint8(float lo, float hi) {
    lo = std::min(lo, 0.0F);
    hi = std::max(hi, 0.0F);
    if (hi - lo <= 0) return {1.0F, 0};
    const float scale = (hi - lo) / 255.0F;
    const auto zero = static_cast<std::int32_t>(std::lround(-lo / scale));
    return {scale, std::clamp(zero, 0, 255)};
}

std::int8_t quantize_int8(float value, QuantParams params) {
    const long q = std::lrint(value / params.scale) + params.zero_point;
    return static_cast<std::int8_t>(std::clamp<long>(q, -128, 127));
}

std::uint8_t quantize_uint8(float value, QuantParams params) {
    const long q = std::lrint(value / params.scale) + params.zero_point;
    return static_cast<std::uint8_t>(std::clamp<long>(q, 0, 255));
}

std::int32_t max_weight_level(WeightRange range) {
    return range == WeightRange::reduced ? 64 : 127;
}

namespace {

// Which channel each element of a weight tensor belongs to: every element whose index along `axis` is c.
struct ChannelLayout {
    std::size_t channels = 1;
    std::size_t inner = 1;

    ChannelLayout(std::size_t count, std::span<const std::int64_t> dims, std::optional<std::size_t> axis) : inner(count) {
        if (!axis || *axis >= dims.size()) return;
        channels = static_cast<std::size_t>(dims[*axis]);
        inner = 1;
        for (std::size_t d = *axis + 1; d < dims.size(); ++d) inner *= static_cast<std::size_t>(dims[d]);
    }
    std::size_t channel_of(std::size_t i) const { return channels == 1 ? 0 : (i / inner) % channels; }
};

// Each channel's scale: its largest finite |x| over `level` (1 for a channel of zeros).
std::vector<float> channel_scales(std::span<const float> values, const ChannelLayout& layout, float level) {
    std::vector<float> max_abs(layout.channels, 0.0F);
    for (std::size_t i = 0; i < values.size(); ++i)
        if (std::isfinite(values[i]))
            max_abs[layout.channel_of(i)] = std::max(max_abs[layout.channel_of(i)], std::fabs(values[i]));
    std::vector<float> scales(layout.channels);
    for (std::size_t c = 0; c < layout.channels; ++c)
        scales[c] = max_abs[c] > 0 && std::isfinite(max_abs[c]) ? max_abs[c] / level : 1.0F;
    return scales;
}

}  // namespace

std::vector<float> quantize_weights(std::span<const float> values, std::span<const std::int64_t> dims,
                                    std::optional<std::size_t> axis, std::vector<std::int8_t>& quantized,
                                    WeightRange range) {
    const ChannelLayout layout(values.size(), dims, axis);
    const std::vector<float> scales = channel_scales(values, layout, static_cast<float>(max_weight_level(range)));
    quantized.resize(values.size());
    const long limit = max_weight_level(range);
    for (std::size_t i = 0; i < values.size(); ++i)
        quantized[i] = static_cast<std::int8_t>(
            std::clamp<long>(quantize_int8(values[i], {scales[layout.channel_of(i)], 0}), -limit, limit));
    return scales;
}

namespace {

// E4M3FN: 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinities, 0x7F/0xFF NaN, largest finite 448;
// subnormals are m x 2^-9.
constexpr int kFp8Bias = 7;
constexpr float kFp8SmallestNormal = 0.015625F;  // 2^-6

std::uint8_t fp8_magnitude(float a) {
    if (a >= kFloat8E4M3Max) return 0x7E;
    if (a < kFp8SmallestNormal) return static_cast<std::uint8_t>(std::nearbyint(a * 512.0F));  // may reach 8 = 2^-6
    int exponent = 0;
    const float fraction = std::frexp(a, &exponent);  // a = fraction x 2^exponent, fraction in [0.5, 1)
    const float mantissa = std::nearbyint((fraction * 2.0F - 1.0F) * 8.0F);  // 3 bits, may carry to 8
    int e = exponent - 1 + kFp8Bias;
    int m = static_cast<int>(mantissa);
    if (m == 8) {
        m = 0;
        ++e;
    }
    if (e > 15 || (e == 15 && m == 7)) return 0x7E;  // saturate (0x7F is NaN)
    return static_cast<std::uint8_t>((e << 3) | m);
}

}  // namespace

std::uint8_t to_float8e4m3fn(float value) {
    if (std::isnan(value)) return 0x7F;
    const std::uint8_t sign = std::signbit(value) ? 0x80 : 0x00;
    return static_cast<std::uint8_t>(sign | fp8_magnitude(std::fabs(value)));
}

float from_float8e4m3fn(std::uint8_t bits) {
    const int e = (bits >> 3) & 0xF;
    const int m = bits & 0x7;
    if (e == 15 && m == 7) return std::numeric_limits<float>::quiet_NaN();
    const float magnitude = e == 0 ? std::ldexp(static_cast<float>(m), -9)
                                   : std::ldexp(1.0F + static_cast<float>(m) / 8.0F, e - kFp8Bias);
    return (bits & 0x80) != 0 ? -magnitude : magnitude;
}

std::vector<float> quantize_weights_fp8(std::span<const float> values, std::span<const std::int64_t> dims,
                                        std::optional<std::size_t> axis, std::vector<std::uint8_t>& quantized) {
    const ChannelLayout layout(values.size(), dims, axis);
    const std::vector<float> scales = channel_scales(values, layout, kFloat8E4M3Max);
    quantized.resize(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) quantized[i] = to_float8e4m3fn(values[i] / scales[layout.channel_of(i)]);
    return scales;
}

namespace {

float threshold_of(const Range& range, const Histogram* histogram, const CalibrationSettings& settings) {
    switch (settings.method) {
        case CalibrationMethod::percentile: return percentile_threshold(*histogram, settings.percentile);
        case CalibrationMethod::entropy: return entropy_threshold(*histogram);
        case CalibrationMethod::minmax: break;
    }
    return range.max_abs();
}

QuantParams params_of(const Range& range, float threshold, ActivationType type) {
    switch (type) {
        case ActivationType::int8: return symmetric_int8(threshold);
        case ActivationType::float8e4m3: return symmetric_fp8(threshold);
        case ActivationType::uint8: break;
    }
    return asymmetric_uint8(std::max(range.min, -threshold), std::min(range.max, threshold));
}

}  // namespace

std::map<std::string, QuantParams, std::less<>> calibrate_activations(std::span<const std::string> names,
                                                                      const CalibrationSettings& settings,
                                                                      const CalibrationPass& each_tensor) {
    std::map<std::string, Range, std::less<>> ranges;
    for (const auto& name : names) ranges[name];
    each_tensor([&](const std::string& name, std::span<const float> values) {
        if (auto it = ranges.find(name); it != ranges.end()) it->second.add(values);
    });
    std::map<std::string, Histogram, std::less<>> histograms;
    if (settings.method != CalibrationMethod::minmax) {
        for (const auto& [name, range] : ranges) histograms.emplace(name, Histogram(range.max_abs()));
        each_tensor([&](const std::string& name, std::span<const float> values) {
            if (auto it = histograms.find(name); it != histograms.end()) it->second.add(values);
        });
    }
    std::map<std::string, QuantParams, std::less<>> result;
    for (const auto& [name, range] : ranges) {
        if (range.empty) continue;
        const auto h = histograms.find(name);
        result.emplace(name, params_of(range, threshold_of(range, h == histograms.end() ? nullptr : &h->second, settings),
                                       settings.activation));
    }
    return result;
}

}  // namespace inferbench::models::quant
