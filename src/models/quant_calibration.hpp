// The arithmetic of static int8 quantization, SDK-free: the range each calibrated tensor gets (min/max,
// a percentile of |x|, or the threshold that minimises the KL divergence between the float distribution
// and its 128-level quantized form, as TensorRT's entropy calibrator and ONNX Runtime's define it), and
// the scale and zero point that range becomes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace inferbench::models::quant {

enum class CalibrationMethod { minmax, percentile, entropy };
std::string_view to_string(CalibrationMethod method);

// int8: symmetric (zero point 0, what TensorRT runs); uint8: asymmetric over [min(0, lo), max(0, hi)];
// float8e4m3: symmetric FP8 E4M3FN (largest finite 448), TensorRT's FP8 Q/DQ.
enum class ActivationType { int8, uint8, float8e4m3 };
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
// The largest finite FP8 E4M3FN value.
inline constexpr float kFloat8E4M3Max = 448.0F;
// Scale threshold / 448, zero point 0 (a zero threshold gives scale 1).
QuantParams symmetric_fp8(float threshold);
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
// FP8 E4M3FN bits of `value`, rounded to nearest even and saturated to +-448 (ONNX's QuantizeLinear with
// saturate=1); NaN stays NaN (0x7F).
std::uint8_t to_float8e4m3fn(float value);
float from_float8e4m3fn(std::uint8_t bits);
// Per-channel (or per-tensor) symmetric FP8 weights, as quantize_weights: each channel's largest |x| maps to 448.
std::vector<float> quantize_weights_fp8(std::span<const float> values, std::span<const std::int64_t> dims,
                                        std::optional<std::size_t> axis, std::vector<std::uint8_t>& quantized);

// Static calibration of activations from a float32 reference run: which method, and the type they become.
struct CalibrationSettings {
    CalibrationMethod method = CalibrationMethod::entropy;
    double percentile = 99.99;  // the percentile method's
    ActivationType activation = ActivationType::int8;
};

// Calls `visit` with every calibrated tensor's float32 values on every calibration batch (graph inputs and the
// reference run's outputs alike). It is called once for the ranges and, for the percentile and entropy
// methods, once more for their histograms over those ranges.
using TensorVisit = std::function<void(const std::string& name, std::span<const float> values)>;
using CalibrationPass = std::function<void(const TensorVisit& visit)>;

// The parameters of each of `names` that the pass gave values for, by `settings`.
std::map<std::string, QuantParams, std::less<>> calibrate_activations(std::span<const std::string> names,
                                                                      const CalibrationSettings& settings,
                                                                      const CalibrationPass& each_tensor);
std::uint8_t quantize_uint8(float value, QuantParams params);

}  // namespace inferbench::models::quant
