// Serving cells: a cell of the `openai` backend measures a running server that speaks the OpenAI HTTP API
// (vLLM, SGLang, TensorRT-LLM, llama.cpp's llama-server, Ollama) from the client's side. One request is one
// query of the cell's scenario; every request's streamed chunks are kept with their arrival times, so TTFT,
// TPOT, chunk gaps and goodput (analysis/serving_metrics) are computed from what arrived, never from what a
// server says about itself. What crosses module boundaries is declared here: the request a workload plans
// (PlannedRequest), what came back (ServedRequest of ServedChunks), why a request failed (RequestOutcome) and
// the service-level objectives a request is judged by (ServingSlos).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace inferbench {

// Which OpenAI endpoint a cell's requests go to: /v1/completions (a prompt) or /v1/chat/completions (messages).
enum class ServingApi { completions, chat };
std::string_view to_string(ServingApi api);
std::optional<ServingApi> parse_serving_api(std::string_view text);

// How one request ended. Every request is kept with its outcome; only `ok` requests give latency figures, and
// every other outcome counts against goodput.
enum class RequestOutcome {
    ok,                 // HTTP 200, a well-formed stream ended by [DONE] (or a complete JSON body), tokens as asked
    http_status,        // the server answered another HTTP status (429, 500, 503, ...): ServedRequest::http_status
    connect_failed,     // no connection (refused, unreachable, DNS)
    timeout,            // no complete answer within the request timeout
    truncated,          // the connection ended before [DONE] (a server that died mid-stream)
    server_error,       // an {"error": ...} event inside a 200 stream (llama.cpp's invalid-UTF-8 answer)
    malformed,          // an event or body that is not the OpenAI API's JSON (another API, a broken event)
    wrong_token_count,  // the server's usage says another number of output tokens than max_tokens with ignore_eos
    cancelled,          // the benchmark stopped (duration or count reached, interrupt) before it finished
};
std::string_view to_string(RequestOutcome outcome);
std::optional<RequestOutcome> parse_request_outcome(std::string_view text);

// One request as the workload plans it, before it is sent. Either `prompt_token_ids` (completions: an exact
// prompt length whatever the server's tokenizer) or `prompt_text`/`messages` is set.
struct ChatMessage {
    std::string role;  // system, user, assistant
    std::string content;
    friend bool operator==(const ChatMessage&, const ChatMessage&) = default;
};
struct PlannedRequest {
    std::int64_t index = 0;       // 0.. in the order the workload made them
    std::int64_t session = -1;    // a multi-turn session's number; -1 for a single request
    std::int64_t turn = 0;        // the turn within its session (0 first); a turn is sent after the one before ends
    std::int64_t prefix_group = -1;  // requests of one group share their first prefix tokens; -1 none
    std::vector<std::int64_t> prompt_token_ids;  // completions with token ids
    std::string prompt_text;                      // completions with text
    std::vector<ChatMessage> messages;            // chat
    std::int64_t input_tokens = 0;   // the prompt's length as planned (exact for token ids, the source's count else)
    std::int64_t max_tokens = 0;     // output tokens asked for
    friend bool operator==(const PlannedRequest&, const PlannedRequest&) = default;
};

// One streamed event that carried output (text, or a usage count) as the client received it.
struct ServedChunk {
    std::int64_t arrival_ns = 0;  // core/clock when its last byte was read
    // Output tokens the chunk carried: from the server's per-chunk usage where it sends one (vLLM's
    // continuous_usage_stats), else 1 for a chunk with text; -1 where it cannot be known.
    std::int64_t tokens = -1;
    friend bool operator==(const ServedChunk&, const ServedChunk&) = default;
};

// A request as it went: its times on core/clock, what the server reported, and its chunks in arrival order.
struct ServedRequest {
    std::int64_t index = 0;      // PlannedRequest::index
    bool warmup = false;         // a warm-up request: stored, never in the figures
    std::int64_t scheduled_ns = 0;  // when the scenario meant it to be sent (open loop: its arrival)
    std::int64_t sent_ns = 0;       // when the client began sending it
    std::int64_t end_ns = 0;        // when its last byte arrived (or it failed)
    RequestOutcome outcome = RequestOutcome::ok;
    std::int64_t http_status = 0;   // 0: no HTTP answer
    std::string error;              // the server's message or the client's reason, one line; empty when ok
    std::int64_t input_tokens = -1;   // the server's usage.prompt_tokens; -1 not reported
    std::int64_t output_tokens = -1;  // the server's usage.completion_tokens; -1 not reported
    std::int64_t cached_tokens = -1;  // usage.prompt_tokens_details.cached_tokens; -1 not reported
    std::string finish_reason;        // "length", "stop", ...; empty when none came
    // The server's own timings where it sends them (llama.cpp's `timings`): prompt and generation time.
    double server_prompt_ms = -1;
    double server_generation_ms = -1;
    std::vector<ServedChunk> chunks;
    friend bool operator==(const ServedRequest&, const ServedRequest&) = default;
};

// A request meets the cell's objectives when it is ok and each bound that is set (> 0) holds for it:
// TTFT from its send (or, open loop, its scheduled arrival), TPOT over its output, end-to-end latency.
struct ServingSlos {
    std::int64_t ttft_ns = 0;
    std::int64_t tpot_ns = 0;
    std::int64_t e2e_ns = 0;
    bool any() const { return ttft_ns > 0 || tpot_ns > 0 || e2e_ns > 0; }
    friend bool operator==(const ServingSlos&, const ServingSlos&) = default;
};

// What a serving cell sent its requests to, stored once with the cell so that a reader can tell servers and
// settings apart and a later run can send the same workload again.
struct ServingFacts {
    std::string endpoint;        // the base URL the requests went to
    std::string server_command;  // the command started for the cell, its {NAME} fields filled in; empty: none started
    std::string server_version;  // what the server says it is (llama.cpp's build, vLLM's version, its Server header)
    std::string model_name;      // the requests' "model"
    std::string workload_json;   // the requests planned (serving/workload's JSON): workload=FILE sends them again
    std::string workload_fingerprint;  // a hash of the workload: two cells with the same one sent the same requests
    friend bool operator==(const ServingFacts&, const ServingFacts&) = default;
};

}  // namespace inferbench
