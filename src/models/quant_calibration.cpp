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

std::string_view to_string(ActivationType type) { return type == ActivationType::int8 ? "int8" : "uint8"; }

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

std::vector<float> quantize_weights(std::span<const float> values, std::span<const std::int64_t> dims,
                                    std::optional<std::size_t> axis, std::vector<std::int8_t>& quantized,
                                    WeightRange range) {
    std::size_t channels = 1;
    std::size_t inner = values.size();
    if (axis && *axis < dims.size()) {
        channels = static_cast<std::size_t>(dims[*axis]);
        inner = 1;
        for (std::size_t d = *axis + 1; d < dims.size(); ++d) inner *= static_cast<std::size_t>(dims[d]);
    }
    const auto channel_of = [&](std::size_t i) { return channels == 1 ? 0 : (i / inner) % channels; };
    std::vector<float> max_abs(channels, 0.0F);
    for (std::size_t i = 0; i < values.size(); ++i)
        if (std::isfinite(values[i])) max_abs[channel_of(i)] = std::max(max_abs[channel_of(i)], std::fabs(values[i]));
    std::vector<float> scales(channels);
    const float level = static_cast<float>(max_weight_level(range));
    for (std::size_t c = 0; c < channels; ++c)
        scales[c] = max_abs[c] > 0 && std::isfinite(max_abs[c]) ? max_abs[c] / level : 1.0F;
    quantized.resize(values.size());
    const long limit = max_weight_level(range);
    for (std::size_t i = 0; i < values.size(); ++i)
        quantized[i] = static_cast<std::int8_t>(
            std::clamp<long>(quantize_int8(values[i], {scales[channel_of(i)], 0}), -limit, limit));
    return scales;
}

}  // namespace inferbench::models::quant
