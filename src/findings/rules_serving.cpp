// Rules on serving cells (core/serving.hpp): TTFT spent waiting rather than in prefill, decode gaps that coincide
// with other requests' prefills, failed requests, and (across a sweep) the load where the server saturates.
#include <algorithm>
#include <map>
#include <optional>
#include <span>

#include <fmt/format.h>

#include "analysis/serving_sweep.hpp"
#include "core/serving_figures.hpp"
#include "core/statistics/statistics.hpp"
#include "core/time_units.hpp"
#include "core/units.hpp"
#include "findings/rules.hpp"

namespace inferbench::findings {
namespace {

double median_of(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return percentile_sorted(values, 50);
}

bool measured_ok(const ServedRequest& r) { return !r.warmup && r.outcome == RequestOutcome::ok; }

// The first measured request's scheduled time: the zero of the times a serving finding quotes.
std::int64_t serving_origin(std::span<const ServedRequest> requests) {
    std::int64_t origin = 0;
    bool found = false;
    for (const auto& r : requests) {
        if (r.warmup) continue;
        origin = found ? std::min(origin, r.scheduled_ns) : r.scheduled_ns;
        found = true;
    }
    return origin;
}

// A chunk gap of one request: the arrival of the chunk before and of the chunk that ended it.
struct Gap {
    std::int64_t request = 0;
    std::int64_t from_ns = 0, to_ns = 0;
    std::int64_t length() const { return to_ns - from_ns; }
};

std::vector<Gap> all_gaps(std::span<const ServedRequest> requests) {
    std::vector<Gap> gaps;
    for (const auto& r : requests) {
        if (!measured_ok(r)) continue;
        const ServedChunk* previous = nullptr;
        for (const auto& chunk : r.chunks) {
            if (chunk.tokens == 0) continue;  // a usage-only event bears no output (core/serving_figures)
            if (previous) gaps.push_back({r.index, previous->arrival_ns, chunk.arrival_ns});
            previous = &chunk;
        }
    }
    return gaps;
}

// Each measured ok request's first token (its first chunk with output), on core/clock, by request index.
std::vector<std::pair<std::int64_t, std::int64_t>> first_tokens(std::span<const ServedRequest> requests) {
    std::vector<std::pair<std::int64_t, std::int64_t>> firsts;
    for (const auto& r : requests) {
        if (!measured_ok(r)) continue;
        if (const auto ttft = request_figures(r).ttft_ns) firsts.emplace_back(r.index, r.scheduled_ns + *ttft);
    }
    return firsts;
}

// Another request's first token (its prefill's end) inside the gap, or within one median gap after it (the
// delayed token and the other's first token leave the same engine step); `firsts` in arrival order.
std::optional<std::pair<std::int64_t, std::int64_t>> other_first_token(
    std::span<const std::pair<std::int64_t, std::int64_t>> firsts, const Gap& gap, double median) {
    auto it = std::lower_bound(firsts.begin(), firsts.end(), gap.from_ns,
                               [](const auto& first, std::int64_t t) { return first.second < t; });
    for (; it != firsts.end() && static_cast<double>(it->second) <= static_cast<double>(gap.to_ns) + median; ++it)
        if (it->first != gap.request) return *it;
    return std::nullopt;
}

}  // namespace

std::vector<Finding> ttft_queueing(const BenchmarkEvidence& e) {
    std::vector<double> ttft_ms, prompt_ms, delay_ms;
    for (const auto& r : e.requests) {
        if (!measured_ok(r) || r.server_prompt_ms < 0) continue;
        const auto f = request_figures(r);
        if (!f.ttft_ns) continue;
        ttft_ms.push_back(ns_to_ms(*f.ttft_ns));
        prompt_ms.push_back(r.server_prompt_ms);
        delay_ms.push_back(ns_to_ms(f.send_delay_ns));
    }
    if (ttft_ms.size() < limits::kServingMinRequests) return {};
    const double ttft = median_of(ttft_ms), prompt = median_of(prompt_ms), delay = median_of(delay_ms);
    if (ttft < limits::kQueueingTtftFactor * prompt || ttft - prompt < limits::kQueueingMinExcessMs) return {};
    const double waiting_pct = 100 * (ttft - prompt) / ttft;
    std::string where = "waiting for a free slot in the server";
    if (delay >= (ttft - prompt) / 2) where = "waiting in the client for a free connection before the send";
    return {{"serving.ttft_queueing", Severity::warning, {e.id()},
             fmt::format("TTFT is dominated by queueing: its median is {:.1f} ms where the server's own prompt time "
                         "(timings.prompt_ms) is {:.1f} ms, so {:.0f}% of the time to the first token is spent "
                         "outside prefill, mostly {} (median wait before the send {:.1f} ms; {} requests)",
                         ttft, prompt, waiting_pct, where, delay, ttft_ms.size()),
             {{"serving_requests.scheduled_ns", "serving_chunks.arrival_ns", "serving_requests.server_prompt_ms"},
              std::nullopt, {}},
             "fewer requests in flight per server slot (the server's parallel slots or max sequences), or more "
             "servers; compare TTFT at a lower concurrency or rate"}};
}

std::vector<Finding> prefill_interference(const BenchmarkEvidence& e) {
    const auto gaps = all_gaps(e.requests);
    if (gaps.size() < limits::kServingMinRequests) return {};
    std::vector<double> lengths;
    for (const auto& g : gaps) lengths.push_back(static_cast<double>(g.length()));
    const double median = median_of(lengths);
    if (median <= 0) return {};
    auto firsts = first_tokens(e.requests);
    std::sort(firsts.begin(), firsts.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    const std::int64_t origin = serving_origin(e.requests);
    std::size_t spikes = 0, others = 0, others_coinciding = 0;
    std::vector<std::string> coinciding;
    std::int64_t window_start = 0, window_end = 0;
    for (const auto& g : gaps) {
        const auto other = other_first_token(firsts, g, median);
        if (static_cast<double>(g.length()) < limits::kGapSpikeFactor * median) {
            ++others;
            if (other) ++others_coinciding;
            continue;
        }
        ++spikes;
        if (!other) continue;
        if (coinciding.empty()) window_start = g.from_ns - origin;
        window_end = std::max(window_end, g.to_ns - origin);
        coinciding.push_back(fmt::format("request {} gap {:.1f} ms at {:.3f} s (request {}'s first token at {:.3f} s)",
                                         g.request, ns_to_ms(g.length()), ns_to_s(g.from_ns - origin), other->first,
                                         ns_to_s(other->second - origin)));
    }
    const double spike_share = spikes ? static_cast<double>(coinciding.size()) / static_cast<double>(spikes) : 0;
    const double other_share = others ? static_cast<double>(others_coinciding) / static_cast<double>(others) : 0;
    if (coinciding.size() < limits::kMinInterferenceSpikes || spike_share < limits::kInterferenceShare ||
        spike_share < limits::kInterferenceOverOthers * other_share)
        return {};
    const std::size_t listed = coinciding.size();
    if (coinciding.size() > limits::kListedEvents) coinciding.resize(limits::kListedEvents);
    return {{"serving.prefill_interference", Severity::warning, {e.id()},
             fmt::format("decode stalls while other requests are prefilled: {} of {} chunk gaps above {:.0f}x the "
                         "median gap ({:.1f} ms) end with another request's first token ({:.0f}%, against {:.0f}% of "
                         "the other {} gaps); TPOT's tail is other requests' prefills, not decode",
                         listed, spikes, limits::kGapSpikeFactor, ns_to_ms(median), spike_share * 100,
                         other_share * 100, others),
             {{"serving_chunks.arrival_ns", "serving_requests.scheduled_ns"}, TimeWindow{window_start, window_end},
              {}, std::move(coinciding)},
             "chunked prefill (vLLM's enable_chunked_prefill, SGLang's chunked_prefill_size, llama.cpp's smaller "
             "batch size -b/-ub) spreads a prompt over several steps; or separate prefill and decode servers"}};
}

}  // namespace inferbench::findings

namespace inferbench::findings {
namespace {

// "http_status x8 (HTTP 503 x6, HTTP 429 x2), timeout x4".
std::string failure_kinds(const analysis::ServingCounts& counts) {
    std::vector<std::string> kinds;
    for (const auto& [outcome, count] : counts.failures) {
        std::string kind = fmt::format("{} x{}", to_string(outcome), count);
        if (outcome == RequestOutcome::http_status && !counts.http_statuses.empty()) {
            std::vector<std::string> statuses;
            for (const auto& [status, n] : counts.http_statuses) statuses.push_back(fmt::format("HTTP {} x{}", status, n));
            kind += fmt::format(" ({})", join(statuses, ", "));
        }
        kinds.push_back(std::move(kind));
    }
    return join(kinds, ", ");
}

std::string slos_text(const ServingSlos& slos) {
    std::vector<std::string> bounds;
    if (slos.ttft_ns > 0) bounds.push_back(fmt::format("TTFT {:.0f} ms", ns_to_ms(slos.ttft_ns)));
    if (slos.tpot_ns > 0) bounds.push_back(fmt::format("TPOT {:.1f} ms", ns_to_ms(slos.tpot_ns)));
    if (slos.e2e_ns > 0) bounds.push_back(fmt::format("end-to-end {:.0f} ms", ns_to_ms(slos.e2e_ns)));
    return join(bounds, ", ");
}

// The cells of the selection as a sweep reads them, with each one's evidence by benchmark id.
std::vector<analysis::ServingCell> serving_cells(std::span<const BenchmarkEvidence> all) {
    std::vector<analysis::ServingCell> cells;
    for (const auto& e : all)
        if (e.summary.serving) cells.push_back({e.summary.benchmark, &*e.summary.serving, std::nullopt});
    return cells;
}

std::vector<std::int64_t> sweep_ids(const analysis::ServingSweep& sweep) {
    std::vector<std::int64_t> ids;
    for (const auto& p : sweep.points) ids.push_back(p.benchmark_id);
    return ids;
}

std::string load_text(const analysis::ServingSweep& sweep, double load) { return analysis::load_text(sweep.kind, load); }

// The median of the server's own prompt time over a cell's measured ok requests that report it.
std::optional<double> median_prompt_ms(const BenchmarkEvidence& e) {
    std::vector<double> prompt;
    for (const auto& r : e.requests)
        if (measured_ok(r) && r.server_prompt_ms >= 0) prompt.push_back(r.server_prompt_ms);
    if (prompt.empty()) return std::nullopt;
    return median_of(std::move(prompt));
}

}  // namespace

bool BenchmarkEvidence::serving() const { return analysis::is_serving(summary.benchmark) || !requests.empty(); }

std::vector<Finding> serving_errors(const BenchmarkEvidence& e) {
    if (!e.serving()) return {};
    const auto& s = e.summary.serving;
    if (!s) {
        return {{"serving.not_measured", Severity::warning, {e.id()},
                 "no measured request is stored for this serving cell: its TTFT, TPOT, throughput and goodput are "
                 "unknown",
                 {{"serving_requests"}, std::nullopt, {}},
                 "check the cell's stored output (`inferbench summary`) for why no request was sent or kept"}};
    }
    const auto& counts = s->counts;
    if (counts.failed() <= 0 || counts.sent <= 0) return {};
    const double share = static_cast<double>(counts.failed()) / static_cast<double>(counts.sent);
    std::string goodput;
    if (s->goodput)
        goodput = fmt::format("; goodput {:.1f}% of requests meet every objective ({}), failed ones counted against it",
                              s->goodput->fraction * 100, slos_text(s->goodput->slos));
    else
        goodput = fmt::format("; no objectives set: {:.1f}% of requests were answered in full", (1 - share) * 100);
    std::string example;
    const auto failed = std::find_if(e.requests.begin(), e.requests.end(), [](const ServedRequest& r) {
        return !r.warmup && r.outcome != RequestOutcome::ok && !r.error.empty();
    });
    if (failed != e.requests.end()) example = fmt::format(" (request {}: {})", failed->index, failed->error);
    return {{"serving.errors", share > limits::kServingErrorProblemShare ? Severity::problem : Severity::warning,
             {e.id()},
             fmt::format("{} of {} requests failed ({:.1f}%): {}{}{}", counts.failed(), counts.sent, share * 100,
                         failure_kinds(counts), goodput, example),
             {{"serving_requests.outcome", "serving_requests.http_status", "serving_requests.error"}, std::nullopt, {}},
             "a 429 or 503 says the server refused load: fewer requests in flight or a lower rate; timeouts and "
             "truncated streams: the server's logs; a wrong token count: the server ignores ignore_eos or max_tokens"}};
}

std::vector<Finding> serving_saturation(std::span<const BenchmarkEvidence> all) {
    const auto cells = serving_cells(all);
    std::vector<Finding> out;
    for (const auto& sweep : analysis::serving_sweeps(cells)) {
        const auto s = analysis::saturation(sweep.points);
        if (!s) continue;
        const auto& here = sweep.points[s->point];
        const auto& next = sweep.points[s->next];
        out.push_back({"serving.saturation", Severity::info, sweep_ids(sweep),
                       fmt::format("{} saturates at {}: {} (+{:.0f}% load) changed output tokens/s by {:+.1f}% ({:.1f} "
                                   "to {:.1f}) while the median TTFT rose {:+.0f}% ({:.1f} to {:.1f} ms); no higher "
                                   "load raises it by a fifth of its added load or more; the sweep's peak is {:.1f} "
                                   "output tokens/s",
                                   sweep.name, load_text(sweep, here.load), load_text(sweep, next.load),
                                   s->load_growth * 100, s->throughput_growth * 100, *here.system_tokens_per_s,
                                   *next.system_tokens_per_s, s->ttft_growth * 100, ns_to_ms(*here.ttft_p50_ns),
                                   ns_to_ms(*next.ttft_p50_ns), s->peak_tokens_per_s),
                       {{"serving_requests", "serving_chunks.arrival_ns"}, std::nullopt, {}},
                       fmt::format("loads above {} only queue: to serve more, more server slots or GPUs; to serve "
                                   "faster, stay at or below it",
                                   load_text(sweep, here.load))});
    }
    return out;
}

std::vector<Finding> sweep_ttft_queueing(std::span<const BenchmarkEvidence> all) {
    std::map<std::int64_t, const BenchmarkEvidence*> by_id;
    for (const auto& e : all) by_id[e.id()] = &e;
    std::vector<Finding> out;
    for (const auto& sweep : analysis::serving_sweeps(serving_cells(all))) {
        if (sweep.points.size() < 2) continue;
        const auto& low = sweep.points.front();
        const auto& high = sweep.points.back();
        const auto low_prompt = median_prompt_ms(*by_id.at(low.benchmark_id));
        const auto high_prompt = median_prompt_ms(*by_id.at(high.benchmark_id));
        if (!low.ttft_p50_ns || !high.ttft_p50_ns || !low_prompt || !high_prompt || *low_prompt <= 0) continue;
        const double ttft_growth = *high.ttft_p50_ns / *low.ttft_p50_ns;
        const double prompt_growth = *high_prompt / *low_prompt;
        if (ttft_growth < limits::kQueueingSweepTtftGrowth || prompt_growth >= limits::kQueueingSweepPromptGrowth) continue;
        out.push_back({"serving.ttft_queueing", Severity::warning, sweep_ids(sweep),
                       fmt::format("{}: from {} to {} the median TTFT grows {:.1f}x ({:.1f} to {:.1f} ms) while the "
                                   "server's own prompt time grows {:.2f}x ({:.1f} to {:.1f} ms): the added time to "
                                   "the first token is waiting, not prefill",
                                   sweep.name, load_text(sweep, low.load), load_text(sweep, high.load), ttft_growth,
                                   ns_to_ms(*low.ttft_p50_ns), ns_to_ms(*high.ttft_p50_ns), prompt_growth, *low_prompt,
                                   *high_prompt),
                       {{"serving_requests.server_prompt_ms", "serving_chunks.arrival_ns"}, std::nullopt, {}},
                       "more server slots (parallel sequences) or a lower load keep TTFT near the prompt time"});
    }
    return out;
}

}  // namespace inferbench::findings
