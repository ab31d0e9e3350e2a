// Hand-made serving requests (core/serving.hpp) and the evidence of a serving cell that holds them.
#pragma once

#include <cstdint>
#include <vector>

#include "core/serving.hpp"
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

// An ok serving cell (benchmark `id`, the `openai` backend) with these requests.
inline BenchmarkEvidence serving_evidence(std::vector<ServedRequest> requests, std::int64_t id = 7) {
    BenchmarkEvidence e;
    e.summary.benchmark.benchmark_id = id;
    e.summary.benchmark.model = "llama-tiny";
    e.summary.benchmark.backend = "openai";
    e.summary.benchmark.device = "cpu";
    e.summary.benchmark.precision = "fp32";
    e.summary.benchmark.status = BenchmarkStatus::ok;
    e.requests = std::move(requests);
    return e;
}

}  // namespace inferbench::findings::testing
