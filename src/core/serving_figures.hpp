// The figures of one served request (core/serving.hpp), and MLPerf's LLM Server verdict over a cell's requests,
// as pure functions of what arrived. analysis/serving_metrics turns them into a cell's percentiles; the runner's
// find_peak judges each of its steps with judge_llm_server, so both say the same.
//
// Every time is measured from the request's scheduled_ns: in closed loop the moment the client meant to send it,
// in open loop its arrival in the schedule. A request that waited for a free connection (the client, or a server
// that queues) therefore counts that wait in its TTFT and end-to-end latency, as a user would see it, and as
// vLLM's and AIPerf's open-loop figures do not where they start their clocks at the send.
//
// A "chunk with output" is a streamed chunk whose token count is not 0 (1 or more, or -1: text whose tokens
// cannot be known); chunks with 0 tokens (a final usage-only event) bear no output and are skipped.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/serving.hpp"
#include "core/statistics/early_stopping.hpp"

namespace inferbench {

// Where a request's output token count came from.
enum class TokenCountSource {
    usage,    // the server's usage.completion_tokens
    chunks,   // the sum of its chunks' token counts (no usage reported; every chunk with output counted)
    unknown,  // neither: no usage, and a chunk whose tokens cannot be known
};
std::string_view to_string(TokenCountSource source);

// One request's figures. Latency figures are set only for an `ok` request; each is nothing where it is not
// defined for the request (never a 0 in its place).
struct RequestFigures {
    // TTFT: the first chunk with output's arrival - scheduled_ns. Nothing without such a chunk.
    std::optional<std::int64_t> ttft_ns;
    // End-to-end latency: end_ns - scheduled_ns.
    std::optional<std::int64_t> e2e_ns;
    // Output tokens: usage where reported, else the chunks' counts (token_source says which); -1 unknown.
    std::int64_t output_tokens = -1;
    TokenCountSource token_source = TokenCountSource::unknown;
    // TPOT: (e2e - TTFT) / (output_tokens - 1), the first token excluded. Nothing for fewer than 2 output
    // tokens, an unknown count or no TTFT.
    std::optional<std::int64_t> tpot_ns;
    // The wait before the send: sent_ns - scheduled_ns (open loop: the client had no free connection).
    std::int64_t send_delay_ns = 0;
};

// The figures of `request` (ok or not: a failed request has its counts and delay, no latency).
RequestFigures request_figures(const ServedRequest& request);

// The output token count of `request` and where it came from (RequestFigures::output_tokens, token_source).
std::int64_t output_token_count(const ServedRequest& request, TokenCountSource* source = nullptr);

// Chunk gaps: the arrival differences of consecutive chunks with output, in arrival order (one fewer than the
// chunks with output). vLLM's ITL.
std::vector<std::int64_t> chunk_gaps_ns(const ServedRequest& request);

// Per-token latency: each chunk with output after the first gives its gap divided by its tokens, once for each
// of its tokens (a chunk of 3 tokens 30 ms after the one before gives 10 ms three times). The first chunk's
// tokens are TTFT's; a chunk whose tokens cannot be known (-1), or that would give more values than the
// request's usage count, gives none. With one token per chunk these are the chunk gaps.
std::vector<std::int64_t> per_token_latencies_ns(const ServedRequest& request);

// Whether `request` meets every bound of `slos` that is set: it is ok, TTFT <= slos.ttft_ns, TPOT <=
// slos.tpot_ns (a request with one output token has no TPOT: the bound holds, nothing was slow between
// tokens), e2e <= slos.e2e_ns. A set bound whose figure is not defined for the request (no chunk with output
// for TTFT, an unknown token count for TPOT) is not met.
bool meets_slos(const ServedRequest& request, const ServingSlos& slos);

// One of the LLM Server scenario's two constraints: a percentile of a per-request figure within a bound, with
// LoadGen's early stopping (core/statistics/early_stopping) on the requests over it.
struct LatencyConstraint {
    std::string name;  // "TTFT" or "TPOT"
    std::int64_t bound_ns = 0;
    std::int64_t requests = 0;          // the requests judged (failed ones included)
    std::int64_t percentile_ns = 0;     // LoadGen's rank percentile (sorted[floor(n p)]); failed requests rank last
    bool percentile_failed = false;     // that rank is a failed request (no figure): over any bound
    early_stopping::ServerCheck check;  // over-bound requests (failed ones included) and the requests needed
    bool met() const { return !percentile_failed && percentile_ns <= bound_ns && check.satisfied; }
};

// MLPerf's LLM Server verdict over a cell's measured requests (warm-up ones are left out).
struct ServingVerdict {
    bool valid = false;
    std::vector<std::string> reasons;  // why INVALID, one line each
    double percentile = 0.99;
    std::int64_t requests = 0;                    // measured requests
    std::int64_t failed = 0;                      // not ok: each counts as over both bounds
    std::optional<LatencyConstraint> ttft, tpot;  // each where its bound is set
};

// VALID when every constraint whose bound is set (slos.ttft_ns, slos.tpot_ns) holds: its p99 (LoadGen's rank)
// within the bound and early stopping satisfied at 99% confidence for the requests over it. A failed request
// counts as over both bounds (it gave the user no answer in time), as does an ok request whose figure is not
// defined (no chunk with output for TTFT; an unknown token count for TPOT); an ok request with 0 or 1 output
// tokens has no TPOT and is not among TPOT's requests. Nothing where neither bound is set (no verdict).
std::optional<ServingVerdict> judge_llm_server(std::span<const ServedRequest> requests, const ServingSlos& slos,
                                               double percentile = 0.99);

// "VALID" or "INVALID".
std::string verdict_word(const ServingVerdict& verdict);

}  // namespace inferbench
