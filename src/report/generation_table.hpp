// The generative benchmarks' own table (analysis/generation_metrics, analysis/generation_bounds): TTFT and TPOT
// percentiles, token rates, tokens per joule, peak memory and the fraction of the physical bounds, one row per
// benchmark that generated. `summary` and `run` print it beside the per-iteration table, which leaves these
// benchmarks out (a generation's end-to-end latency is not an inference's).
#pragma once

#include <optional>
#include <vector>

#include "analysis/generation_bounds.hpp"
#include "analysis/summary.hpp"
#include "report/table.hpp"

namespace inferbench::report {

// `bounds`: per summary, in the same order (analysis/roofline_placement's generation_bounds), or empty: every
// bound unknown. A figure that does not exist says why in its cell: "not defined" (TPOT with one output token),
// "not measured" (no telemetry for it), "unknown" (a bound without the device's figure or the decoder's facts).
Table generation_table(const std::vector<analysis::BenchmarkSummary>& summaries,
                       const std::vector<std::optional<analysis::GenerationBounds>>& bounds = {});

// A generative benchmark's summary that is not a serving cell's (report/serving_rows' is_serving): a generation
// table row. A serving cell's TTFT and TPOT are per request, in the serving table.
bool generative_not_serving(const analysis::BenchmarkSummary& summary);

// The summaries that are not generation table rows: the per-iteration summary table's rows (a serving cell's
// iterations are its ok requests).
std::vector<analysis::BenchmarkSummary> per_iteration_summaries(const std::vector<analysis::BenchmarkSummary>& summaries);

}  // namespace inferbench::report
