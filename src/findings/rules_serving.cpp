// Rules on serving cells (core/serving.hpp): TTFT spent waiting rather than in prefill, decode gaps that coincide
// with other requests' prefills, failed requests, and (across a sweep) the load where the server saturates.
#include <algorithm>
#include <map>

#include <fmt/format.h>

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
    const auto firsts = first_tokens(e.requests);
    const std::int64_t origin = serving_origin(e.requests);
    std::size_t spikes = 0;
    std::vector<std::string> coinciding;
    std::int64_t window_start = 0, window_end = 0;
    for (const auto& g : gaps) {
        if (static_cast<double>(g.length()) < limits::kGapSpikeFactor * median) continue;
        ++spikes;
        // Another request's prefill ends with its first token: inside the gap, or within one median gap after it
        // (the delayed token and the other's first token leave the same engine step).
        const auto other = std::find_if(firsts.begin(), firsts.end(), [&](const auto& first) {
            return first.first != g.request && first.second >= g.from_ns &&
                   static_cast<double>(first.second) <= static_cast<double>(g.to_ns) + median;
        });
        if (other == firsts.end()) continue;
        if (coinciding.empty()) window_start = g.from_ns - origin;
        window_end = std::max(window_end, g.to_ns - origin);
        coinciding.push_back(fmt::format("request {} gap {:.1f} ms at {:.3f} s (request {}'s first token at {:.3f} s)",
                                         g.request, ns_to_ms(g.length()), ns_to_s(g.from_ns - origin), other->first,
                                         ns_to_s(other->second - origin)));
    }
    if (coinciding.size() < limits::kMinInterferenceSpikes ||
        static_cast<double>(coinciding.size()) < limits::kInterferenceShare * static_cast<double>(spikes))
        return {};
    const std::size_t listed = coinciding.size();
    if (coinciding.size() > limits::kListedEvents) coinciding.resize(limits::kListedEvents);
    return {{"serving.prefill_interference", Severity::warning, {e.id()},
             fmt::format("decode stalls while other requests are prefilled: {} of {} chunk gaps above {:.0f}x the "
                         "median gap ({:.1f} ms) end with another request's first token ({} of {} gaps in all); "
                         "TPOT's tail is other requests' prefills, not decode",
                         listed, spikes, limits::kGapSpikeFactor, ns_to_ms(median), spikes, gaps.size()),
             {{"serving_chunks.arrival_ns", "serving_requests.scheduled_ns"}, TimeWindow{window_start, window_end},
              {}, std::move(coinciding)},
             "chunked prefill (vLLM's enable_chunked_prefill, SGLang's chunked_prefill_size, llama.cpp's smaller "
             "batch size -b/-ub) spreads a prompt over several steps; or separate prefill and decode servers"}};
}

}  // namespace inferbench::findings
