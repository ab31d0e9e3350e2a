// The arithmetic of static int8 quantization, SDK-free: the range each calibrated tensor gets (min/max,
// a percentile of |x|, or the threshold that minimises the KL divergence between the float distribution
// and its 128-level quantized form, as TensorRT's entropy calibrator and ONNX Runtime's define it), and
// the scale and zero point that range becomes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace inferbench::models::quant {

enum class CalibrationMethod { minmax, percentile, entropy };
std::string_view to_string(CalibrationMethod method);

// int8: symmetric (zero point 0, what TensorRT runs); uint8: asymmetric over [min(0, lo), max(0, hi)].
enum class ActivationType { int8, uint8 };
std::string_view to_string(ActivationType type);

// Min and max of one tensor over every calibration batch.
struct Range {
    float min = 0;
    float max = 0;
    bool empty = true;

    void add(std::span<const float> values);
    float max_abs() const;
};

// A histogram of |x| over [0, max_abs], for the percentile and entropy methods.
class Histogram {
public:
    static constexpr std::size_t kDefaultBins = 2048;
    explicit Histogram(float max_abs, std::size_t bins = kDefaultBins);

    void add(std::span<const float> values);
    float bin_width() const { return width_; }
    const std::vector<double>& counts() const { return counts_; }

private:
    float width_;
    std::vector<double> counts_;
};

// The smallest t with at least `percentile` % of |x| at or below t (upper edge of the bin reached).
float percentile_threshold(const Histogram& histogram, double percentile);
// TensorRT's entropy calibration: for each candidate bin count i from `levels` up, the distribution P of
// the first i bins (outliers added to the last) against Q, those bins merged into `levels` levels and
// spread back over their non-empty bins; the i of least KL(P || Q) gives the threshold i x bin width.
float entropy_threshold(const Histogram& histogram, std::size_t levels = 128);

struct QuantParams {
    float scale = 1;
    std::int32_t zero_point = 0;
};

// Scale threshold / 127 (a zero threshold gives scale 1, so that zeros quantize to zero).
QuantParams symmetric_int8(float threshold);
// Over [min(0, lo), max(0, hi)]: scale (hi - lo) / 255, zero point round(-lo / scale) in [0, 255].
QuantParams asymmetric_uint8(float lo, float hi);

// The largest |q| of int8 weights: the full range [-127, 127], or ONNX Runtime's reduce_range [-64, 64],
// which keeps the sum of two uint8 x int8 products within int16 (2 x 255 x 64 = 32640): x86 CPUs without VNNI
// form int8 dot products so, saturating at 32767.
enum class WeightRange { full, reduced };
std::int32_t max_weight_level(WeightRange range);

// Per-channel (or, with channels 1, per-tensor) symmetric int8 weights: channel c is every element whose
// index along `axis` of `dims` is c, scaled so that its largest |x| is max_weight_level(range). Returns the
// scales and fills `quantized`.
std::vector<float> quantize_weights(std::span<const float> values, std::span<const std::int64_t> dims,
                                    std::optional<std::size_t> axis, std::vector<std::int8_t>& quantized,
                                    WeightRange range = WeightRange::full);

std::int8_t quantize_int8(float value, QuantParams params);
std::uint8_t quantize_uint8(float value, QuantParams params);

}  // namespace inferbench::models::quant
