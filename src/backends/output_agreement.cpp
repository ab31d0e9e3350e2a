#include "backends/output_agreement.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace inferbench {
namespace {

template <typename T>
T load(const HostTensor& t, std::int64_t i) {
    T value;
    std::memcpy(&value, t.data.data() + static_cast<std::size_t>(i) * sizeof(T), sizeof(T));
    return value;
}

double half_to_double(std::uint16_t h) {
    const int exponent = (h >> 10) & 0x1f;
    const int mantissa = h & 0x3ff;
    const double sign = (h & 0x8000) != 0 ? -1.0 : 1.0;
    if (exponent == 0x1f) return mantissa != 0 ? std::nan("") : sign * INFINITY;
    if (exponent == 0) return sign * std::ldexp(mantissa, -24);  // subnormal
    return sign * std::ldexp(mantissa + 1024, exponent - 25);
}

bool is_floating(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16 || t == DType::f64; }

OutputAgreement compare_one(const HostTensor& checked, const HostTensor& reference) {
    OutputAgreement a;
    a.name = checked.info.name;
    a.dtype = checked.info.dtype;
    a.shape = checked.info.shape;
    a.elements = checked.info.element_count();
    if (checked.info.shape != reference.info.shape) {
        a.problem = fmt::format("shape [{}], reference [{}]", fmt::join(checked.info.shape, ","),
                                fmt::join(reference.info.shape, ","));
        return a;
    }
    if (checked.data.size() != checked.info.byte_size() || reference.data.size() != reference.info.byte_size()) {
        a.problem = "the data does not fill the declared shape";
        return a;
    }
    const bool floating = is_floating(checked.info.dtype) || is_floating(reference.info.dtype);
    for (std::int64_t i = 0; i < a.elements; ++i) {
        const double x = element_as_double(checked, i);
        const double r = element_as_double(reference, i);
        if (!floating) {
            a.mismatched += x != r ? 1 : 0;
            continue;
        }
        const bool x_finite = std::isfinite(x);
        const bool r_finite = std::isfinite(r);
        if (x_finite && r_finite) {
            a.max_abs_error = std::max(a.max_abs_error, std::abs(x - r));
            a.reference_max = std::max(a.reference_max, std::abs(r));
        } else if (!(std::isnan(x) && std::isnan(r)) && x != r) {
            ++a.mismatched;  // NaN or inf on one side only, or infinities of opposite sign
        }
    }
    return a;
}

}  // namespace

double element_as_double(const HostTensor& t, std::int64_t i) {
    switch (t.info.dtype) {
        case DType::f32:
            return load<float>(t, i);
        case DType::f64:
            return load<double>(t, i);
        case DType::f16:
            return half_to_double(load<std::uint16_t>(t, i));
        case DType::bf16:
            return std::bit_cast<float>(static_cast<std::uint32_t>(load<std::uint16_t>(t, i)) << 16);
        case DType::i8:
            return load<std::int8_t>(t, i);
        case DType::u8:
            return load<std::uint8_t>(t, i);
        case DType::i32:
            return load<std::int32_t>(t, i);
        case DType::i64:
            return static_cast<double>(load<std::int64_t>(t, i));
        case DType::boolean:
            return load<std::uint8_t>(t, i) != 0 ? 1.0 : 0.0;
    }
    return 0;
}

std::vector<OutputAgreement> compare_outputs(std::span<const HostTensor> checked, std::span<const HostTensor> reference) {
    std::vector<OutputAgreement> rows;
    const std::size_t n = std::max(checked.size(), reference.size());
    for (std::size_t i = 0; i < n; ++i) {
        if (i < checked.size() && i < reference.size()) {
            rows.push_back(compare_one(checked[i], reference[i]));
            continue;
        }
        OutputAgreement& missing = rows.emplace_back();
        missing.name = i < checked.size() ? checked[i].info.name : reference[i].info.name;
        missing.problem = i < checked.size() ? "the reference has no such output" : "missing on the checked side";
    }
    return rows;
}

bool all_agree(const std::vector<OutputAgreement>& outputs, double tolerance) {
    return !outputs.empty() && std::ranges::all_of(outputs, [&](const auto& o) { return o.within(tolerance); });
}

double largest_relative_error(const std::vector<OutputAgreement>& outputs) {
    double worst = 0;
    for (const auto& o : outputs) worst = std::max(worst, o.relative_error());
    return worst;
}

std::vector<std::string> nearly_zero_outputs(const std::vector<OutputAgreement>& outputs) {
    std::vector<std::string> names;
    for (const auto& o : outputs) {
        if (o.problem.empty() && o.reference_max < kNearlyZeroReference) names.push_back(o.name);
    }
    return names;
}

double default_output_tolerance(Precision precision) {
    switch (precision) {
        case Precision::fp32:
            return 2e-3;
        case Precision::fp16:
            return 2e-2;
        case Precision::bf16:
            return 8e-2;
        case Precision::int8:
        case Precision::fp8:
        case Precision::int4:
            return 2e-1;
    }
    return 2e-3;
}

void CosineSimilarity::add(std::span<const float> checked, std::span<const float> reference) {
    const std::size_t n = std::min(checked.size(), reference.size());
    for (std::size_t i = 0; i < n; ++i) {
        const double a = checked[i];
        const double b = reference[i];
        if (!std::isfinite(a) || !std::isfinite(b)) continue;
        dot_ += a * b;
        checked_norm_ += a * a;
        reference_norm_ += b * b;
    }
}

double CosineSimilarity::value() const {
    if (checked_norm_ == 0 && reference_norm_ == 0) return 1.0;
    if (checked_norm_ == 0 || reference_norm_ == 0) return 0.0;
    return dot_ / (std::sqrt(checked_norm_) * std::sqrt(reference_norm_));
}

std::int64_t top1_matches(std::span<const float> checked, std::span<const float> reference, std::int64_t classes) {
    if (classes <= 0) return 0;
    const auto width = static_cast<std::size_t>(classes);
    const std::size_t rows = std::min(checked.size(), reference.size()) / width;
    std::int64_t matches = 0;
    for (std::size_t r = 0; r < rows; ++r) {
        const auto a = checked.subspan(r * width, width);
        const auto b = reference.subspan(r * width, width);
        matches += std::max_element(a.begin(), a.end()) - a.begin() == std::max_element(b.begin(), b.end()) - b.begin()
                       ? 1
                       : 0;
    }
    return matches;
}

}  // namespace inferbench
