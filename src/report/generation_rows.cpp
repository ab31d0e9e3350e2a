#include "report/generation_rows.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "analysis/roofline_placement.hpp"
#include "report/generation_table.hpp"

namespace inferbench::report {
namespace {

constexpr std::string_view kUnknown = "unknown";

// The metrics' definitions as readers need them (analysis/generation_metrics.hpp defines them in code), by the
// generative table's column keys.
const std::map<std::string_view, std::string_view>& definitions() {
    static const std::map<std::string_view, std::string_view> text = [] {
        constexpr std::string_view ttft =
            "Time to first token: from the call of the generation to the first token of every sequence in host "
            "memory, that is the prefill of the batch's prompts; one value per generation. vLLM, AIPerf and MLPerf "
            "call it TTFT.";
        constexpr std::string_view tpot =
            "Time per output token: (end-to-end - TTFT) / (output tokens - 1), one value per generation, the first "
            "token excluded. What vLLM and MLPerf call TPOT and AIPerf calls inter_token_latency. Not defined for 1 "
            "output token.";
        constexpr std::string_view itl =
            "Inter-token latency: each decode step's duration (its end - the previous step's end), every step of "
            "every generation pooled; the prefill excluded. vLLM's ITL (not AIPerf's ITL, which is TPOT here).";
        constexpr std::string_view e2e = "End-to-end latency of a generation: from its call to its last token in host "
                                         "memory (vLLM: E2EL; AIPerf: request_latency).";
        constexpr std::string_view energy =
            "Generated tokens (batch x output tokens per generation) over the energy of the measure phase: the GPU's "
            "energy counter (else its power integrated), on a CPU the package's RAPL counter; not measured without "
            "either.";
        constexpr std::string_view decode_bound =
            "Achieved decode steps/s over the ceiling memory bandwidth / bytes per step (the weights a step reads "
            "plus the KV cache), with the probe's measured bandwidth where stored, else the datasheet's; unknown "
            "without either.";
        constexpr std::string_view ttft_floor =
            "The TTFT floor (the prefill's FLOPs / the peak FLOP/s at the precision, the probe's where stored, else "
            "the datasheet's) over the mean TTFT; unknown without a peak or the decoder's shape.";
        return std::map<std::string_view, std::string_view>{
            {"ttft_p50_ms", ttft}, {"ttft_p99_ms", ttft}, {"ttft_mean_ms", ttft},
            {"tpot_p50_ms", tpot}, {"tpot_p99_ms", tpot}, {"tpot_mean_ms", tpot},
            {"per_token_p50_ms", itl}, {"per_token_p99_ms", itl},
            {"e2e_mean_ms", e2e}, {"e2e_p50_ms", e2e},
            {"prefill_tokens_per_s", "Prefill tokens/s: batch x input tokens / mean TTFT (llama-bench's pp<input> t/s)."},
            {"decode_tokens_per_s",
             "Decode tokens/s: batch x (output tokens - 1) / mean (end-to-end - TTFT), the tokens of the decode steps "
             "over their time (llama-bench's tg<output> t/s times every generated token)."},
            {"output_tokens_per_s", "Output tokens/s: batch x output tokens / mean end-to-end, the first token included "
                                    "(vLLM's and AIPerf's output token throughput)."},
            {"tokens_per_joule", energy}, {"joules_per_token", energy},
            {"gpu_memory_peak_mib", "The largest GPU memory used (NVML, every process's) sampled while measuring."},
            {"rss_peak_mib", "The largest resident set of the benchmark process sampled while measuring."},
            {"decode_bound_pct", decode_bound}, {"decode_ceiling_steps_per_s", decode_bound},
            {"ttft_floor_pct", ttft_floor}, {"ttft_floor_ms", ttft_floor},
            {"tpot_floor_ms", "1 / the decode steps/s ceiling: no TPOT can be shorter (see % bw bound)."},
            {"decode_tokens_per_s_bound", "The decode steps/s ceiling x batch: no decode rate can be higher."},
        };
    }();
    return text;
}

Cell bound_cell(std::optional<double> value, bool duration) {
    if (!value) return std::string(kUnknown);
    return duration ? Cell{Duration{*value}} : Cell{*value};
}

}  // namespace

std::string series_name(const store::BenchmarkRecord& b, bool several) {
    std::string name = fmt::format("{} {} {} {}", b.model, b.backend, b.precision, b.device);
    if (!b.variant.empty()) name += " " + b.variant;
    if (several) name += fmt::format(", run {}", b.run_id);
    return name;
}

std::string series_with_lengths(const store::BenchmarkRecord& b, bool several) {
    return fmt::format("{}, in {} out {}", series_name(b, several), b.input_tokens, b.output_tokens);
}

bool several_runs(std::span<const GenerationRow> rows) {
    std::set<std::int64_t> runs;
    for (const auto& r : rows) runs.insert(r.summary.benchmark.run_id);
    return runs.size() > 1;
}

std::vector<GenerationRow> generation_rows(const store::ResultsStore& results,
                                           std::span<const analysis::BenchmarkSummary> summaries,
                                           const std::optional<devices::Catalog>& catalog) {
    std::vector<analysis::BenchmarkSummary> generative;
    for (const auto& s : summaries)
        if (generative_not_serving(s)) generative.push_back(s);
    std::set<std::int64_t> runs;
    for (const auto& s : generative) runs.insert(s.benchmark.run_id);
    const auto key = [several = runs.size() > 1](const analysis::BenchmarkSummary& s) {
        const auto& b = s.benchmark;
        return std::tuple(series_name(b, several), b.output_tokens, b.input_tokens, b.batch_size);
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

Table generation_report_table(std::span<const GenerationRow> rows) {
    std::vector<analysis::BenchmarkSummary> summaries;
    std::vector<std::optional<analysis::GenerationBounds>> bounds;
    for (const auto& row : rows) {
        summaries.push_back(row.summary);
        bounds.push_back(row.bounds);
    }
    Table table = generation_table(summaries, bounds);
    for (const char* key : {"e2e_p50_ms", "tpot_floor_ms", "decode_tokens_per_s_bound"}) {
        Column column{key, key, 2};
        column.export_only = true;
        table.columns.push_back(std::move(column));
    }
    table.columns[table.columns.size() - 3].title = "e2e p50";
    table.columns[table.columns.size() - 2].title = "TPOT floor";
    table.columns[table.columns.size() - 1].title = "decode tok/s bound";
    // generation_table's rows are the rows' in order (every row is generative).
    for (std::size_t r = 0; r < rows.size(); ++r) {
        const auto& g = rows[r].summary.generation;
        auto& cells = table.rows[r];
        cells.push_back(g ? Cell{Duration{g->e2e.ns.p50}} : Cell{Null{}});
        cells.push_back(g ? bound_cell(tpot_floor_ns(rows[r]), true) : Cell{Null{}});
        cells.push_back(g ? bound_cell(decode_tokens_per_s_bound(rows[r]), false) : Cell{Null{}});
    }
    for (auto& column : table.columns) {
        if (const auto it = definitions().find(column.key); it != definitions().end()) column.hint = it->second;
        // A small model on a large device reaches a small fraction of its bounds: 0.004% is not "0".
        if (column.key == "decode_bound_pct" || column.key == "ttft_floor_pct") column.decimals = std::max(column.decimals, 3);
    }
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
