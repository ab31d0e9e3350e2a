// Hand-made serving requests (core/serving.hpp) and the evidence of a serving cell that holds them.
#pragma once

#include <cstdint>
#include <vector>

#include "core/serving.hpp"
#include "analysis/serving_metrics.hpp"
#include "findings/evidence.hpp"

namespace inferbench::findings::testing {

inline constexpr std::int64_t kMs = 1'000'000;

// An ok request scheduled at `scheduled_ns`, sent `send_delay_ns` later, whose first token arrives `ttft_ns` after
// its schedule and each of its other `tokens` - 1 tokens `tpot_ns` after the one before (one chunk each), with the
// server's own prompt time (-1: not reported).
inline ServedRequest steady_request(std::int64_t index, std::int64_t scheduled_ns, std::int64_t ttft_ns,
                                    std::int64_t tokens, std::int64_t tpot_ns, double server_prompt_ms,
                                    std::int64_t send_delay_ns = 0) {
    ServedRequest r;
    r.index = index;
    r.scheduled_ns = scheduled_ns;
    r.sent_ns = scheduled_ns + send_delay_ns;
    r.server_prompt_ms = server_prompt_ms;
    r.input_tokens = 16;
    r.output_tokens = tokens;
    r.finish_reason = "length";
    std::int64_t t = scheduled_ns + ttft_ns;
    for (std::int64_t i = 0; i < tokens; ++i, t += tpot_ns) r.chunks.push_back({t, 1});
    r.end_ns = r.chunks.empty() ? scheduled_ns + ttft_ns : r.chunks.back().arrival_ns;
    return r;
}

// A failed request: its outcome, HTTP status and message, ending `after_ns` after its schedule.
inline ServedRequest failed_request(std::int64_t index, std::int64_t scheduled_ns, RequestOutcome outcome,
                                    std::int64_t http_status = 0, std::int64_t after_ns = 5 * kMs) {
    ServedRequest r;
    r.index = index;
    r.scheduled_ns = scheduled_ns;
    r.sent_ns = scheduled_ns;
    r.end_ns = scheduled_ns + after_ns;
    r.outcome = outcome;
    r.http_status = http_status;
    r.error = "failed on purpose";
    return r;
}

// An ok serving cell (benchmark `id`, the `openai` backend) with these requests and their summary under `slos`
// (analysis/serving_metrics), as a stored cell's evidence holds them.
inline BenchmarkEvidence serving_evidence(std::vector<ServedRequest> requests, std::int64_t id = 7,
                                          const ServingSlos& slos = {}) {
    BenchmarkEvidence e;
    e.summary.benchmark.benchmark_id = id;
    e.summary.benchmark.model = "llama-tiny";
    e.summary.benchmark.backend = "openai";
    e.summary.benchmark.device = "cpu";
    e.summary.benchmark.precision = "fp32";
    e.summary.benchmark.status = BenchmarkStatus::ok;
    if (!requests.empty()) e.summary.serving = analysis::serving_summary(requests, slos);
    e.requests = std::move(requests);
    return e;
}

}  // namespace inferbench::findings::testing

namespace inferbench::findings::testing {

// A cell of a concurrency sweep with hand-made figures: `load` requests in flight, system output tokens/s, the
// median TTFT, and (for the queueing rule) 20 requests whose server prompt time is `prompt_ms`.
inline BenchmarkEvidence sweep_cell(std::int64_t id, std::int64_t load, double tokens_per_s, double ttft_p50_ms,
                                    double prompt_ms = -1) {
    BenchmarkEvidence e = serving_evidence({}, id);
    e.summary.benchmark.run_id = 1;
    e.summary.benchmark.variant = "concurrency=" + std::to_string(load);
    e.summary.benchmark.settings_json = R"({"duration_ns": 1000000000, "scenario": {"scenario": "concurrency", )"
                                        R"("concurrency": )" + std::to_string(load) + "}}";
    analysis::ServingSummary s;
    s.counts.sent = s.counts.ok = 20;
    s.output_tokens_per_s = tokens_per_s;
    analysis::LatencyDistribution ttft;
    ttft.ns.count = 20;
    ttft.ns.p50 = ttft_p50_ms * 1e6;
    s.ttft = ttft;
    e.summary.serving = s;
    for (int i = 0; i < 20; ++i) e.requests.push_back(steady_request(i, i * kMs, static_cast<std::int64_t>(ttft_p50_ms * 1e6), 4, kMs, prompt_ms));
    return e;
}

}  // namespace inferbench::findings::testing
