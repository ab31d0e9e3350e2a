#include "report/serving_rows.hpp"

#include <algorithm>
#include <map>
#include <string_view>

#include <fmt/format.h>

#include "core/metrics/server_metrics.hpp"
#include "core/time_units.hpp"
#include "core/units.hpp"
#include "report/summary_table.hpp"

namespace inferbench::report {
namespace {

constexpr std::string_view kUnknown = "unknown";
constexpr std::string_view kNoSlos = "no SLOs";

Cell text(std::string_view value) { return std::string(value); }

Cell duration_or(const std::optional<analysis::LatencyDistribution>& d, double TimingSummary::*statistic) {
    return d ? Cell{Duration{(d->ns).*statistic}} : text(analysis::kNotDefinedText);
}
Cell duration_or(const std::optional<double>& ns) { return ns ? Cell{Duration{*ns}} : text(kUnknown); }
Cell number_or(const std::optional<double>& value, std::string_view missing = kUnknown) {
    return value ? Cell{*value} : text(missing);
}

// The metrics' definitions as readers need them (analysis/serving_metrics.hpp and analysis/serving_sweep.hpp define
// them in code), by column key.
const std::map<std::string_view, std::string_view>& definitions() {
    static const std::map<std::string_view, std::string_view> text = [] {
        constexpr std::string_view ttft =
            "Time to first token: the first chunk with output's arrival - the request's scheduled time (open loop: its "
            "arrival in the schedule, so a wait for a connection counts), per ok request. vLLM, SGLang: TTFT; AIPerf: "
            "time_to_first_token (both start at the send).";
        constexpr std::string_view tpot =
            "Time per output token: (end-to-end - TTFT) / (output tokens - 1), per ok request with 2 or more output "
            "tokens. vLLM, SGLang, LoadGen: TPOT; AIPerf: inter_token_latency.";
        constexpr std::string_view gap =
            "Chunk gap: the arrival difference of consecutive streamed chunks with output, every gap of every ok "
            "request pooled. vLLM, SGLang: ITL; AIPerf: inter_chunk_latency.";
        constexpr std::string_view e2e =
            "End-to-end latency: the last byte's arrival - the scheduled time, per ok request (vLLM: E2EL; AIPerf: "
            "request_latency).";
        constexpr std::string_view system =
            "Output tokens/s of the server: every ok request's output tokens (the server's usage, else the chunks' "
            "counts) over the measured window, first send to last end. vLLM, SGLang: output token throughput; "
            "AIPerf: output_token_throughput.";
        constexpr std::string_view user =
            "Output tokens/s per user: 1 / TPOT per ok request with 2 or more output tokens, the median request's "
            "(AIPerf: output_token_throughput_per_user).";
        constexpr std::string_view per_gpu =
            "Output tokens/s of the server divided by the GPUs it used (stored as server_gpus); unknown where the "
            "count was not recorded, never a guess.";
        constexpr std::string_view goodput =
            "Goodput: requests meeting every SLO set (TTFT, TPOT, end-to-end) over the requests sent, failed ones "
            "counted against it (AIPerf: good_request_fraction); without SLOs, in the sweep, the share answered in "
            "full.";
        return std::map<std::string_view, std::string_view>{
            {"ttft_p50_ms", ttft}, {"ttft_p99_ms", ttft}, {"tpot_p50_ms", tpot}, {"tpot_p99_ms", tpot},
            {"chunk_gap_p50_ms", gap}, {"chunk_gap_p99_ms", gap}, {"e2e_p50_ms", e2e}, {"e2e_p99_ms", e2e},
            {"output_tokens_per_s", system}, {"user_tokens_per_s_p50", user}, {"tokens_per_s_per_gpu", per_gpu},
            {"server_gpus", per_gpu}, {"goodput_pct", goodput},
            {"goodput_per_s", "Requests meeting every SLO set, per second of the measured window (vLLM: request goodput)."},
            {"requests_per_s", "Ok requests per second of the measured window (vLLM, SGLang: request throughput)."},
            {"requests", "Measured requests sent (warm-up ones left out), whatever their outcome."},
            {"failed", "Measured requests that did not end ok (HTTP status, timeout, truncated, wrong token count, ...)."},
            {"verdict", "MLPerf's LLM Server verdict: p99 TTFT and p99 TPOT within their bounds with early stopping on "
                        "both, failed requests over both; none without a TTFT or TPOT bound."},
            {"tokens_per_joule",
             "Output tokens over the GPUs' energy of the measure phase (energy counters, else power integrated); not "
             "measured without GPU samples."},
            {"load", "The load the cell offered: requests in flight (concurrency) or requests/s (request rate)."},
            {"on_front", "On the Pareto front: no other load of the sweep has both more tokens/s per user and more "
                         "tokens/s per GPU (per server where the GPU count is unknown)."},
            {"goodput_knee",
             "The goodput knee: the highest load whose goodput meets the target, every lower load meeting it too "
             "(\"knee, lower bound\": the target held at every load tried)."},
            {"saturation",
             "The saturation point: the lowest load from which no higher load raises output tokens/s by a fifth of the "
             "load's own growth while the median TTFT at the next load is 10% higher or more."},
        };
    }();
    return text;
}

void add_hints(Table& table) {
    for (auto& column : table.columns)
        if (const auto it = definitions().find(column.key); it != definitions().end()) column.hint = it->second;
}

std::vector<Column> serving_columns() {
    return {identity_column("benchmark_ids", "id"), identity_column("model", "model", Fit::wrap), identity_column("backend", "backend"),
            identity_column("device", "device"), identity_column("variant", "options", Fit::wrap), identity_column("load", "load", Fit::wrap),
            shed_column("status", "status", 2, 1), {"requests", "reqs", 0}, {"failed", "failed", 0},
            {"ttft_p50_ms", "TTFT p50"}, {"ttft_p99_ms", "TTFT p99"}, {"tpot_p50_ms", "TPOT p50"},
            {"tpot_p99_ms", "TPOT p99"}, shed_column("chunk_gap_p99_ms", "gap p99", 2, 3), {"output_tokens_per_s", "out tok/s", 1},
            {"user_tokens_per_s_p50", "tok/s/user", 1}, shed_column("requests_per_s", "req/s", 2, 2),
            {"goodput_pct", "goodput %", 1}, shed_column("verdict", "verdict", 2, 4), shed_column("tokens_per_joule", "tok/J", 2, 5),
            {"note", "note", 2, Fit::footnote}, file_column("chunk_gap_p50_ms", "gap p50"), file_column("e2e_p50_ms", "e2e p50"),
            file_column("e2e_p99_ms", "e2e p99"), file_column("goodput_per_s", "goodput/s"), file_column("energy_source", "energy from")};
}

std::string serving_note(const analysis::BenchmarkSummary& s) {
    std::vector<std::string> notes;
    if (!s.benchmark.reason.empty()) notes.push_back(s.benchmark.reason);
    if (s.serving) notes.insert(notes.end(), s.serving->notes.begin(), s.serving->notes.end());
    else if (s.benchmark.status == BenchmarkStatus::ok) notes.emplace_back("no measured request stored");
    notes.insert(notes.end(), s.warnings.begin(), s.warnings.end());
    return join(notes, "; ");
}

std::string load_of(const analysis::BenchmarkSummary& s) {
    if (const auto point = analysis::sweep_point({s.benchmark, s.serving ? &*s.serving : nullptr, std::nullopt}))
        return analysis::load_text(point->first, point->second.load);
    return s.scenario.label;
}

std::vector<Cell> serving_row(const analysis::BenchmarkSummary& s, const std::vector<Column>& columns) {
    const auto& b = s.benchmark;
    std::vector<Cell> row = {benchmark_ids_cell(s), b.model, b.backend, b.device, b.variant, load_of(s),
                             std::string(to_string(b.status))};
    if (!s.serving) {
        row.resize(columns.size(), Null{});
        for (std::size_t i = 0; i < columns.size(); ++i)
            if (columns[i].key == "note") row[i] = serving_note(s);
        return row;
    }
    const analysis::ServingSummary& v = *s.serving;
    const auto goodput_pct = v.goodput ? Cell{v.goodput->fraction * 100} : text(kNoSlos);
    const auto verdict = v.verdict ? Cell{verdict_word(*v.verdict)} : text(kNoSlos);
    const auto user = v.output_tokens_per_s_per_user ? Cell{v.output_tokens_per_s_per_user->p50}
                                                     : text(analysis::kNotDefinedText);
    const std::vector<Cell> figures = {
        v.counts.sent, v.counts.failed(), duration_or(v.ttft, &TimingSummary::p50), duration_or(v.ttft, &TimingSummary::p99),
        duration_or(v.tpot, &TimingSummary::p50), duration_or(v.tpot, &TimingSummary::p99),
        duration_or(v.chunk_gap, &TimingSummary::p99), number_or(v.output_tokens_per_s), user,
        number_or(v.requests_per_s), goodput_pct, verdict,
        number_or(v.tokens_per_joule, analysis::kNotMeasuredText), serving_note(s),
        duration_or(v.chunk_gap, &TimingSummary::p50), duration_or(v.e2e, &TimingSummary::p50),
        duration_or(v.e2e, &TimingSummary::p99), v.goodput ? Cell{v.goodput->per_s} : text(kNoSlos),
        v.energy_source.empty() ? Cell{Null{}} : Cell{v.energy_source}};
    row.insert(row.end(), figures.begin(), figures.end());
    return row;
}

std::string knee_mark(const SweepView& view, std::size_t point) {
    if (!view.knee.point || *view.knee.point != point) return "";
    return view.knee.next ? "knee" : "knee, lower bound";
}

}  // namespace

bool is_serving(const analysis::BenchmarkSummary& summary) {
    return summary.serving || analysis::is_serving(summary.benchmark);
}

std::vector<analysis::ServingCell> serving_cells(std::span<const analysis::BenchmarkSummary> summaries,
                                                 const std::map<std::int64_t, std::int64_t>& gpus) {
    std::vector<analysis::ServingCell> cells;
    for (const auto& s : summaries) {
        if (!s.serving) continue;
        const auto it = gpus.find(s.benchmark.benchmark_id);
        cells.push_back({s.benchmark, &*s.serving, it == gpus.end() ? std::nullopt : std::optional(it->second)});
    }
    return cells;
}

void add_server_gpus(const ReportGroup& group, std::map<std::int64_t, std::int64_t>& gpus) {
    for (const auto& b : group.benchmarks) {
        const auto count = store::find_metric(b.metrics, server_metrics::kGpus);
        if (count && *count >= 1) gpus[b.summary.benchmark.benchmark_id] = static_cast<std::int64_t>(*count);
    }
}

Table serving_table(std::span<const analysis::BenchmarkSummary> summaries) {
    Table table;
    table.name = "serving";
    table.columns = serving_columns();
    for (const auto& s : summaries)
        if (is_serving(s)) table.rows.push_back(serving_row(s, table.columns));
    add_hints(table);
    return table;
}

std::vector<SweepView> sweep_views(std::span<const analysis::ServingCell> cells, double goodput_target) {
    std::vector<SweepView> views;
    for (auto& sweep : analysis::serving_sweeps(cells)) {
        SweepView view;
        view.front = analysis::pareto_front(sweep.points);
        view.knee = analysis::goodput_knee(sweep.points, goodput_target);
        view.saturation = analysis::saturation(sweep.points);
        view.sweep = std::move(sweep);
        views.push_back(std::move(view));
    }
    return views;
}

Table sweep_table(std::span<const SweepView> views) {
    Table table;
    table.name = "serving_sweep";
    table.columns = {Column{.key = "sweep", .title = "sweep", .fit = Fit::wrap, .identity = true},
                     Column{.key = "benchmark_id", .title = "id", .identity = true},
                     Column{.key = "load", .title = "load", .decimals = 2, .identity = true},
                     {"user_tokens_per_s_p50", "tok/s/user", 1}, {"output_tokens_per_s", "tok/s server", 1},
                     {"server_gpus", "GPUs", 0}, {"tokens_per_s_per_gpu", "tok/s/GPU", 1},
                     {"goodput_pct", "goodput %", 1}, {"ttft_p50_ms", "TTFT p50"}, {"ttft_p99_ms", "TTFT p99"},
                     {"tpot_p50_ms", "TPOT p50"}, {"tpot_p99_ms", "TPOT p99"}, {"on_front", "front"},
                     {"goodput_knee", "knee"}, {"saturation", "saturation"}};
    for (const auto& view : views) {
        for (std::size_t i = 0; i < view.sweep.points.size(); ++i) {
            const auto& p = view.sweep.points[i];
            const bool placed = std::find(view.front.left_out.begin(), view.front.left_out.end(), i) == view.front.left_out.end();
            const bool on_front = std::find(view.front.points.begin(), view.front.points.end(), i) != view.front.points.end();
            const bool saturates = view.saturation && view.saturation->point == i;
            table.rows.push_back({view.sweep.name, p.benchmark_id, p.load, number_or(p.user_tokens_per_s),
                                  number_or(p.system_tokens_per_s),
                                  p.gpus ? Cell{*p.gpus} : text(kUnknown), number_or(analysis::tokens_per_s_per_gpu(p)),
                                  p.goodput_fraction ? Cell{*p.goodput_fraction * 100} : text(kUnknown),
                                  duration_or(p.ttft_p50_ns), duration_or(p.ttft_p99_ns), duration_or(p.tpot_p50_ns),
                                  duration_or(p.tpot_p99_ns), placed ? Cell{on_front} : text("not placed"),
                                  knee_mark(view, i), saturates ? Cell{std::string("saturates")} : Cell{std::string()}});
        }
    }
    add_hints(table);
    return table;
}

std::vector<std::string> sweep_statements(std::span<const SweepView> views) {
    std::vector<std::string> out;
    for (const auto& view : views) {
        const auto& points = view.sweep.points;
        const auto kind = view.sweep.kind;
        std::vector<std::string> front;
        for (const auto i : view.front.points) front.push_back(analysis::load_text(kind, points[i].load));
        std::string text = fmt::format("{}: {} loads; Pareto front ({}): {}", view.sweep.name, points.size(),
                                       to_string(view.front.axis), front.empty() ? "none placed" : join(front, ", "));
        if (!view.knee.point)
            text += fmt::format("; no goodput knee at {:.0f}%: {}", view.knee.target * 100, view.knee.why_none);
        else
            text += fmt::format("; goodput knee at {:.0f}%: {}{}", view.knee.target * 100,
                                analysis::load_text(kind, points[*view.knee.point].load),
                                view.knee.next ? "" : " (the target held at every load tried: a lower bound)");
        if (view.saturation)
            text += fmt::format("; saturates at {} (peak {:.1f} output tokens/s)",
                                analysis::load_text(kind, points[view.saturation->point].load), view.saturation->peak_tokens_per_s);
        else
            text += "; no saturation within the sweep";
        out.push_back(text + ".");
    }
    return out;
}

}  // namespace inferbench::report
