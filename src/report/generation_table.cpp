#include "report/generation_table.hpp"

#include <algorithm>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "analysis/roofline_placement.hpp"
#include "core/units.hpp"
#include "report/summary_table.hpp"

namespace inferbench::report {
namespace {

using analysis::GenerationMetrics;
using analysis::LatencyDistribution;

// The metrics' definitions (analysis/generation_metrics.hpp defines them; these are the readers' words for them).
constexpr const char* kTtftHint =
    "Time to first token: from the call of the generation to the first token of every sequence in host memory, "
    "that is the prefill of the batch's prompts; one value per generation. vLLM, AIPerf and MLPerf call it TTFT.";
constexpr const char* kTpotHint =
    "Time per output token: (end-to-end - TTFT) / (output tokens - 1), one value per generation, the first token "
    "excluded. What vLLM and MLPerf call TPOT and AIPerf calls inter_token_latency. Not defined for 1 output token.";
constexpr const char* kItlHint =
    "Inter-token latency: each decode step's duration (its end - the previous step's end), every step of every "
    "generation pooled; the prefill excluded. vLLM's ITL (not AIPerf's ITL, which is TPOT here).";
constexpr const char* kE2eHint = "End-to-end latency: from the call of the generation to its last token in host "
                                 "memory (vLLM: E2EL; AIPerf: request_latency).";
constexpr const char* kPrefillHint =
    "Prefill tokens/s: batch x input tokens / mean TTFT (llama-bench's pp<input> t/s).";
constexpr const char* kDecodeHint =
    "Decode tokens/s: batch x (output tokens - 1) / mean (end-to-end - TTFT), the tokens of the decode steps over "
    "their time (llama-bench's tg<output> t/s times every generated token).";
constexpr const char* kEnergyHint =
    "Generated tokens (batch x output tokens per generation) over the energy of the measure phase: the GPU's energy "
    "counter (else its power integrated), on a CPU the package's RAPL counter; not measured without either.";
constexpr const char* kGpuMemoryHint = "The largest GPU memory used (NVML, every process's) sampled while measuring.";
constexpr const char* kRssHint = "The largest resident set of the benchmark process sampled while measuring.";
constexpr const char* kDecodeBoundHint =
    "Achieved decode steps/s over the ceiling memory bandwidth / bytes per step (the weights a step reads plus the "
    "KV cache), with the probe's measured bandwidth where stored, else the datasheet's; unknown without either.";
constexpr const char* kTtftFloorHint =
    "The TTFT floor (the prefill's FLOPs / the peak FLOP/s at the precision) over the mean TTFT: 100% would be the "
    "peak; unknown without a peak or the decoder's shape.";

Column column(std::string key, std::string title, std::string hint = {}, int decimals = 2) {
    Column c{std::move(key), std::move(title), decimals};
    c.hint = std::move(hint);
    return c;
}

Cell text(std::string_view value) { return std::string(value); }

Cell duration(const LatencyDistribution* d, double TimingSummary::*statistic, std::string_view absent) {
    return d ? Cell{Duration{d->ns.*statistic}} : text(absent);
}

const LatencyDistribution* of(const std::optional<LatencyDistribution>& d) { return d ? &*d : nullptr; }

Cell number(const std::optional<double>& value, std::string_view absent, double scale = 1.0) {
    return value ? Cell{*value * scale} : text(absent);
}

// A ceiling or floor's fraction in percent with where it came from, or unknown.
Cell bound_pct(const std::optional<double>& fraction) { return fraction ? Cell{*fraction * 100} : text(kUnknownText); }

std::optional<double> decode_fraction(const GenerationRow& row) {
    const auto* ceiling = row.bounds ? row.bounds->best_decode() : nullptr;
    return ceiling ? ceiling->fraction : std::nullopt;
}

std::optional<double> ttft_fraction(const GenerationRow& row) {
    const auto* floor = row.bounds ? row.bounds->best_prefill() : nullptr;
    return floor ? std::optional<double>(floor->fraction) : std::nullopt;
}

std::string bound_origin(const GenerationRow& row) {
    std::vector<std::string> parts;
    if (const auto* c = row.bounds ? row.bounds->best_decode() : nullptr) parts.push_back("decode: " + c->what);
    if (const auto* f = row.bounds ? row.bounds->best_prefill() : nullptr) parts.push_back("TTFT: " + f->what);
    return join(parts, "; ");
}

std::vector<Column> generation_columns() {
    std::vector<Column> columns = {
        column("benchmark_ids", "id"), column("model", "model"), column("backend", "backend"),
        column("device", "device"), column("precision", "precision"), column("variant", "options"),
        column("batch_size", "batch"), column("input_tokens", "input tokens"),
        column("output_tokens", "output tokens"),
        column("generations", "generations", "Whole generations measured (output tokens steps each), over every repeat."),
        column("ttft_p50_ms", "TTFT p50", kTtftHint), column("ttft_p99_ms", "TTFT p99", kTtftHint),
        column("tpot_p50_ms", "TPOT p50", kTpotHint), column("tpot_p99_ms", "TPOT p99", kTpotHint),
        column("itl_p50_ms", "ITL p50", kItlHint), column("itl_p99_ms", "ITL p99", kItlHint),
        column("prefill_tokens_per_s", "prefill tok/s", kPrefillHint, 1),
        column("decode_tokens_per_s", "decode tok/s", kDecodeHint, 1),
        column("e2e_p50_ms", "e2e p50", kE2eHint),
        column("tokens_per_joule", "tok/J", kEnergyHint, 3), column("joules_per_token", "J/tok", kEnergyHint, 6),
        column("peak_gpu_memory_MiB", "peak GPU MiB", kGpuMemoryHint, 1),
        column("peak_rss_MiB", "peak RSS MiB", kRssHint, 1),
        column("decode_bound_pct", "% of decode bound", kDecodeBoundHint, 1),
        column("ttft_floor_pct", "% of TTFT floor", kTtftFloorHint, 1),
        column("bounds_from", "bounds from", "Which roof each bound is computed from: the probe's measurement where "
                                             "`inferbench probe` stored one, else the device's datasheet."),
    };
    return columns;
}

std::vector<Cell> generation_cells(const GenerationRow& row) {
    const auto& s = row.summary;
    const auto& b = s.benchmark;
    const GenerationMetrics& g = *s.generation;
    using analysis::kNotDefinedText;
    using analysis::kNotMeasuredText;
    return {benchmark_ids_cell(s),
            b.model,
            b.backend,
            b.device,
            b.precision,
            b.variant.empty() ? Cell{Null{}} : Cell{b.variant},
            b.batch_size,
            b.input_tokens,
            b.output_tokens,
            g.generations,
            duration(&g.ttft, &TimingSummary::p50, kNotMeasuredText),
            duration(&g.ttft, &TimingSummary::p99, kNotMeasuredText),
            duration(of(g.tpot), &TimingSummary::p50, kNotDefinedText),
            duration(of(g.tpot), &TimingSummary::p99, kNotDefinedText),
            duration(of(g.per_token), &TimingSummary::p50, kNotDefinedText),
            duration(of(g.per_token), &TimingSummary::p99, kNotDefinedText),
            g.prefill_tokens_per_s,
            number(g.decode_tokens_per_s, kNotDefinedText),
            duration(&g.e2e, &TimingSummary::p50, kNotMeasuredText),
            number(g.tokens_per_joule, kNotMeasuredText),
            number(g.joules_per_token, kNotMeasuredText),
            number(g.peak_gpu_memory_mib, kNotMeasuredText),
            number(g.peak_rss_mib, kNotMeasuredText),
            bound_pct(decode_fraction(row)),
            bound_pct(ttft_fraction(row)),
            bound_origin(row).empty() ? Cell{Null{}} : Cell{bound_origin(row)}};
}

}  // namespace

std::string series_name(const store::BenchmarkRecord& b, bool several_runs) {
    std::string name = fmt::format("{} {} {} {}", b.model, b.backend, b.precision, b.device);
    if (!b.variant.empty()) name += " " + b.variant;
    if (several_runs) name += fmt::format(", run {}", b.run_id);
    return name;
}

std::string series_with_lengths(const store::BenchmarkRecord& b, bool several_runs) {
    return fmt::format("{}, in {} out {}", series_name(b, several_runs), b.input_tokens, b.output_tokens);
}

std::vector<GenerationRow> generation_rows(const store::ResultsStore& results,
                                           std::span<const analysis::BenchmarkSummary> summaries,
                                           const std::optional<devices::Catalog>& catalog) {
    std::vector<analysis::BenchmarkSummary> generative;
    for (const auto& s : summaries)
        if (s.generation) generative.push_back(s);
    std::set<std::int64_t> runs;
    for (const auto& s : generative) runs.insert(s.benchmark.run_id);
    const bool several_runs = runs.size() > 1;
    const auto key = [&](const analysis::BenchmarkSummary& s) {
        const auto& b = s.benchmark;
        return std::tuple(series_name(b, several_runs), b.output_tokens, b.input_tokens, b.batch_size);
    };
    std::stable_sort(generative.begin(), generative.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
    std::vector<std::optional<analysis::GenerationBounds>> bounds(generative.size());
    if (catalog && !generative.empty()) {
        try {
            bounds = analysis::generation_bounds(results, generative, *catalog);
        } catch (const std::exception&) {  // a device that cannot be resolved costs the bounds, said as unknown
        }
    }
    std::vector<GenerationRow> rows;
    rows.reserve(generative.size());
    for (std::size_t i = 0; i < generative.size(); ++i) rows.push_back({std::move(generative[i]), std::move(bounds[i])});
    return rows;
}

Table generation_table(std::span<const GenerationRow> rows) {
    Table table;
    table.name = "generation";
    table.columns = generation_columns();
    for (const auto& row : rows) table.rows.push_back(generation_cells(row));
    return table;
}

std::optional<double> decode_tokens_per_s_bound(const GenerationRow& row) {
    const auto* ceiling = row.bounds ? row.bounds->best_decode() : nullptr;
    if (!ceiling) return std::nullopt;
    return ceiling->steps_per_s * static_cast<double>(row.summary.benchmark.batch_size);
}

std::optional<double> tpot_floor_ns(const GenerationRow& row) {
    const auto* ceiling = row.bounds ? row.bounds->best_decode() : nullptr;
    if (!ceiling || ceiling->steps_per_s <= 0 || row.summary.benchmark.output_tokens < 2) return std::nullopt;
    return 1e9 / ceiling->steps_per_s;
}

std::optional<double> ttft_floor_ns(const GenerationRow& row) {
    const auto* floor = row.bounds ? row.bounds->best_prefill() : nullptr;
    return floor ? std::optional<double>(floor->ttft_ns) : std::nullopt;
}

}  // namespace inferbench::report
