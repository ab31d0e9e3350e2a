// Expands a plan's axes into benchmark cells (Cartesian product, batch size innermost but for the swept
// settings: a batch size's points of them side by side).
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>
#include <vector>

#include "core/plan/plan.hpp"
#include "core/spec.hpp"

namespace inferbench {

// Far more than a day of benchmarks at the default settings: a larger matrix is a mistake in the plan.
inline constexpr std::size_t kMaxBenchmarks = 10'000;

// Whether a plan's model entry is a decoder language model (models/decoder_models: a zoo decoder, a GGUF file,
// an ONNX decoder with past key/values, a Hugging Face folder); its cells then sweep the token axes too.
using GenerativeModelTest = std::function<bool(std::string_view model)>;

// Cells removed by exclude rules are dropped; the rest keep their plan order. Throws UserError when
// the axes multiply to more than kMaxBenchmarks cells (counted before exclude rules). A generative model's
// cells take every input_tokens x output_tokens pair, innermost but for the swept settings; no test: none is.
std::vector<BenchmarkSpec> expand_matrix(const Plan& plan, const GenerativeModelTest& is_generative = {});

// One benchmark of a run: a cell of the matrix (its position, from 0) and which of its repeats.
struct CellRepeat {
    std::size_t ordinal = 0;
    std::int64_t repeat = 0;
    friend auto operator<=>(const CellRepeat&, const CellRepeat&) = default;
};

// The order a run measures its benchmarks in: every cell once, then every cell again, `repeats` times
// (A B C A B C), so that slow drift (temperature, clocks, other load) reaches all cells alike rather
// than the last repeats of one cell.
std::vector<CellRepeat> run_order(std::size_t cells, std::int64_t repeats);

}  // namespace inferbench
