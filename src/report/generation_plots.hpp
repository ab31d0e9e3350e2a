// The figures of a report's generative benchmarks, drawn as the report's other figures (plots.hpp: gnuplot, PNG and
// SVG) and shown on the HTML page from the same Figure values:
//   ttft-vs-batch, tpot-vs-batch, decode-tokens-per-s-vs-batch
//                      p50 TTFT, p50 TPOT and decode tokens/s against batch size, one line per model / backend /
//                      precision / device and lengths, its bound dashed beside it where known (the TTFT floor, the
//                      TPOT floor 1 / the decode steps/s ceiling, the decode tokens/s ceiling)
//   ttft-vs-input, tpot-vs-input
//                      the same against input tokens, one line per series, batch size and output tokens
//   per-token-latency-<group key>
//                      each decode step's duration over the run (the prefill excluded: TTFT is its own figure),
//                      one line per generative benchmark of the group
// Figures are drawn where some line has two points or more (the per-token figure: where any step was stored).
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "report/generation_rows.hpp"
#include "report/plots.hpp"

namespace inferbench::report {

// The figures against batch size and input tokens, from the report's generation rows.
std::vector<Figure> generation_figures(std::span<const GenerationRow> rows);

// The group's per-token latency figure; nothing where no benchmark of the group has steps.
std::optional<Figure> per_token_latency_figure(const ReportGroup& group, const PlotOptions& options);

// generation_figures drawn into `dir`; nothing written (and nothing said) without rows.
ReportFiles write_generation_plots(std::span<const GenerationRow> rows, const std::filesystem::path& dir,
                                   const PlotOptions& options);

}  // namespace inferbench::report
