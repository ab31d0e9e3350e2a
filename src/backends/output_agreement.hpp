// How far one backend's outputs are from a reference backend's on the same inputs: per output the
// largest absolute difference, relative to max(1, max |reference|) so that a tolerance means the same
// for logits near 1 and for activations in the hundreds, and the elements where only one side is NaN
// or infinite. Integer and boolean outputs (labels, indices) are compared exactly.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "backends/backend.hpp"

namespace inferbench {

struct OutputAgreement {
    std::string name;
    DType dtype = DType::f32;            // the checked side's
    std::vector<std::int64_t> shape;     // the checked side's
    std::int64_t elements = 0;
    double max_abs_error = 0;            // floating outputs: max |checked - reference| over finite pairs
    double reference_max = 0;            // max |reference| over finite elements
    std::int64_t mismatched = 0;         // elements NaN/inf on one side only, or unequal integers
    std::string problem;                 // why the two could not be compared (shape, count); empty if they were

    // Below 1 the error is absolute: an output whose values are all tiny (random weights shrink
    // activations) agrees easily, which reference_max shows.
    double relative_error() const { return max_abs_error / std::max(1.0, reference_max); }
    bool within(double tolerance) const { return problem.empty() && mismatched == 0 && relative_error() <= tolerance; }
};

// Output i against reference output i (a missing or extra output is a problem of its own row).
std::vector<OutputAgreement> compare_outputs(std::span<const HostTensor> checked, std::span<const HostTensor> reference);

// The verdict on a whole model: at least one output, and every output within the tolerance.
bool all_agree(const std::vector<OutputAgreement>& outputs, double tolerance);
// The largest relative_error() of the outputs; 0 for none.
double largest_relative_error(const std::vector<OutputAgreement>& outputs);

// Outputs whose reference values are all this small agree within any tolerance however wrong they
// are (random weights can shrink a network's logits to 1e-14): said, not hidden.
inline constexpr double kNearlyZeroReference = 1e-3;
// The outputs that agree trivially: compared, with every reference value (if any: a detector that
// keeps no box) below kNearlyZeroReference in magnitude.
std::vector<std::string> nearly_zero_outputs(const std::vector<OutputAgreement>& outputs);

// The default tolerance on relative_error() for outputs computed at `precision` against an fp32
// reference: fp32 2e-3 (cuDNN convolutions run on TF32 tensor cores), fp16 2e-2, bf16 8e-2 (8 bits of
// mantissa, through a whole network), int8 and fp8 2e-1.
double default_output_tolerance(Precision precision);

// Cosine similarity of two float outputs, accumulated over several batches: 1 for outputs that point the
// same way, whatever their scale; 1 when both are all zeros, 0 when only one is.
class CosineSimilarity {
public:
    void add(std::span<const float> checked, std::span<const float> reference);
    double value() const;

private:
    double dot_ = 0;
    double checked_norm_ = 0;
    double reference_norm_ = 0;
};

// Rows of a [rows, classes] output whose largest class is the same on both sides (classifier logits).
std::int64_t top1_matches(std::span<const float> checked, std::span<const float> reference, std::int64_t classes);

// One element as a double (f16 and bf16 widened exactly).
double element_as_double(const HostTensor& t, std::int64_t i);

}  // namespace inferbench
