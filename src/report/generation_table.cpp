#include "report/generation_table.hpp"

#include <fmt/format.h>

#include "core/units.hpp"
#include "report/serving_rows.hpp"
#include "report/summary_table.hpp"

namespace inferbench::report {
namespace {

constexpr std::string_view kUnknown = "unknown";

Cell text_cell(std::string_view text) { return std::string(text); }

Cell duration_or(const std::optional<analysis::LatencyDistribution>& d, double TimingSummary::*statistic,
                 std::string_view missing) {
    return d ? Cell{Duration{(d->ns).*statistic}} : text_cell(missing);
}

Cell number_or(const std::optional<double>& value, std::string_view missing) {
    return value ? Cell{*value} : text_cell(missing);
}

Cell percent_or(const std::optional<double>& fraction) {
    return fraction ? Cell{*fraction * 100} : text_cell(kUnknown);
}

std::vector<Column> generation_columns() {
    return {identity_column("benchmark_ids", "id"), identity_column("model", "model", Fit::wrap), identity_column("backend", "backend"),
            identity_column("device", "device"), identity_column("precision", "precision"), identity_column("batch_size", "batch"),
            identity_column("input_tokens", "in"), identity_column("output_tokens", "out"),
            identity_column("variant", "options", Fit::wrap), shed_column("status", "status", 2, 1),
            shed_column("generations", "gens", 0, 5), {"ttft_p50_ms", "TTFT p50"}, {"ttft_p99_ms", "TTFT p99"},
            {"tpot_p50_ms", "TPOT p50"}, {"tpot_p99_ms", "TPOT p99"}, shed_column("per_token_p99_ms", "token p99", 2, 4),
            shed_column("prefill_tokens_per_s", "prefill tok/s", 0, 3), shed_column("decode_tokens_per_s", "decode tok/s", 1, 2),
            {"output_tokens_per_s", "out tok/s", 1}, {"tokens_per_joule", "tok/J", 1},
            shed_column("gpu_memory_peak_mib", "GPU MiB", 0, 6), shed_column("rss_peak_mib", "rss MiB", 0, 6),
            {"decode_bound_pct", "% bw bound", 0}, shed_column("ttft_floor_pct", "% TTFT floor", 0, 3),
            {"note", "note", 2, Fit::footnote},
            file_column("ttft_mean_ms", "TTFT mean"), file_column("ttft_mean_ci95_low_ms", "TTFT mean 95% low"),
            file_column("ttft_mean_ci95_high_ms", "TTFT mean 95% high"), file_column("tpot_mean_ms", "TPOT mean"),
            file_column("tpot_mean_ci95_low_ms", "TPOT mean 95% low"), file_column("tpot_mean_ci95_high_ms", "TPOT mean 95% high"),
            file_column("per_token_p50_ms", "token p50"), file_column("e2e_mean_ms", "e2e mean"),
            file_column("joules_per_token", "J/tok", 4), file_column("energy_source", "energy from"),
            file_column("bytes_per_decode_step", "bytes/step", 0), file_column("kv_share_pct", "KV % of bytes", 1),
            file_column("decode_ceiling_steps_per_s", "ceiling steps/s", 1), file_column("decode_bound_from", "bound from"),
            file_column("ttft_floor_ms", "TTFT floor"), file_column("ttft_floor_from", "floor from")};
}

Cell interval_end(const std::optional<analysis::LatencyDistribution>& d, bool high) {
    if (!d || !d->mean_ci) return Null{};
    return Duration{high ? d->mean_ci->high : d->mean_ci->low};
}

std::string generation_note(const analysis::BenchmarkSummary& s, const std::optional<analysis::GenerationBounds>& b) {
    std::vector<std::string> notes;
    if (!s.benchmark.reason.empty()) notes.push_back(s.benchmark.reason);
    if (!s.generation) {  // it generated nothing whole: its reason and warnings say why
        notes.insert(notes.end(), s.warnings.begin(), s.warnings.end());
        return join(notes, "; ");
    }
    notes.insert(notes.end(), s.generation->notes.begin(), s.generation->notes.end());
    if (!b) notes.emplace_back("bounds unknown: the decoder's facts were not stored");
    else notes.insert(notes.end(), b->notes.begin(), b->notes.end());
    notes.insert(notes.end(), s.warnings.begin(), s.warnings.end());
    return join(notes, "; ");
}

// A generative benchmark that failed or was skipped: what it was, its status and why.
std::vector<Cell> unmeasured_row(const analysis::BenchmarkSummary& s, const std::vector<Column>& columns) {
    const auto& b = s.benchmark;
    std::vector<Cell> row = {benchmark_ids_cell(s), b.model, b.backend, b.device, b.precision, b.batch_size,
                             b.input_tokens, b.output_tokens, b.variant, std::string(to_string(b.status))};
    row.resize(columns.size(), Null{});
    for (std::size_t i = 0; i < columns.size(); ++i)
        if (columns[i].key == "note") row[i] = generation_note(s, std::nullopt);
    return row;
}

std::vector<Cell> generation_row(const analysis::BenchmarkSummary& s, const std::optional<analysis::GenerationBounds>& b) {
    const analysis::GenerationMetrics& g = *s.generation;
    const bool cuda = s.benchmark.device.starts_with("cuda");
    const auto* ceiling = b ? b->best_decode() : nullptr;
    const auto* floor = b ? b->best_prefill() : nullptr;
    const std::optional<analysis::LatencyDistribution> ttft = g.ttft;
    std::vector<Cell> row = {benchmark_ids_cell(s), s.benchmark.model, s.benchmark.backend, s.benchmark.device,
                             s.benchmark.precision, s.benchmark.batch_size, g.input_tokens, g.output_tokens,
                             s.benchmark.variant, std::string(to_string(s.benchmark.status)), g.generations,
                             Duration{g.ttft.ns.p50}, Duration{g.ttft.ns.p99},
                             duration_or(g.tpot, &TimingSummary::p50, analysis::kNotDefinedText),
                             duration_or(g.tpot, &TimingSummary::p99, analysis::kNotDefinedText),
                             duration_or(g.per_token, &TimingSummary::p99, analysis::kNotDefinedText),
                             g.prefill_tokens_per_s, number_or(g.decode_tokens_per_s, analysis::kNotDefinedText),
                             g.output_tokens_per_s, number_or(g.tokens_per_joule, analysis::kNotMeasuredText),
                             cuda ? number_or(g.peak_gpu_memory_mib, analysis::kNotMeasuredText) : Cell{Null{}},
                             number_or(g.peak_rss_mib, analysis::kNotMeasuredText),
                             percent_or(ceiling ? ceiling->fraction : std::nullopt),
                             percent_or(floor ? std::optional(floor->fraction) : std::nullopt),
                             generation_note(s, b),
                             Duration{g.ttft.ns.mean}, interval_end(ttft, false), interval_end(ttft, true),
                             duration_or(g.tpot, &TimingSummary::mean, analysis::kNotDefinedText),
                             interval_end(g.tpot, false), interval_end(g.tpot, true),
                             duration_or(g.per_token, &TimingSummary::p50, analysis::kNotDefinedText),
                             Duration{g.e2e.ns.mean}, number_or(g.joules_per_token, analysis::kNotMeasuredText),
                             g.energy_source.empty() ? Cell{Null{}} : Cell{g.energy_source},
                             b ? Cell{b->bytes_per_step} : Cell{Null{}}, b ? Cell{b->kv_share * 100} : Cell{Null{}},
                             ceiling ? Cell{ceiling->steps_per_s} : text_cell(kUnknown),
                             ceiling ? Cell{ceiling->what} : Cell{Null{}},
                             floor ? Cell{Duration{floor->ttft_ns}} : text_cell(kUnknown),
                             floor ? Cell{fmt::format("{} ({})", floor->what, devices::origin_name(floor->origin))}
                                   : Cell{Null{}}};
    return row;
}

}  // namespace

bool generative_not_serving(const analysis::BenchmarkSummary& summary) {
    return analysis::is_generative(summary.benchmark) && !is_serving(summary);
}

Table generation_table(const std::vector<analysis::BenchmarkSummary>& summaries,
                       const std::vector<std::optional<analysis::GenerationBounds>>& bounds) {
    Table table;
    table.name = "generation";
    table.columns = generation_columns();
    for (std::size_t i = 0; i < summaries.size(); ++i) {
        if (!generative_not_serving(summaries[i])) continue;
        table.rows.push_back(summaries[i].generation
                                 ? generation_row(summaries[i], i < bounds.size() ? bounds[i] : std::nullopt)
                                 : unmeasured_row(summaries[i], table.columns));
    }
    return table;
}

std::vector<analysis::BenchmarkSummary> per_iteration_summaries(const std::vector<analysis::BenchmarkSummary>& summaries) {
    std::vector<analysis::BenchmarkSummary> rest;
    for (const auto& s : summaries)
        if (!generative_not_serving(s)) rest.push_back(s);
    return rest;
}

}  // namespace inferbench::report
