// What the OpenAI API's answers mean for one request. parse_stream_event() reads one server-sent event's
// data (a completions or chat chunk, the usage, [DONE], an error), parse_response_body() a complete
// non-streamed JSON body; ResponseAssembler folds a request's events, in arrival order, into its
// ServedRequest: text chunks with their arrival times, per-chunk token counts, usage, finish_reason, the
// server's own timings, and how the request ended.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/serving.hpp"

namespace inferbench::serving {

struct StreamEvent {
    enum class Kind {
        data,       // a chunk of the API (text, finish_reason, usage, timings: any of them)
        done,       // data: [DONE]
        error,      // {"error": {...}}: the server failed the request mid-stream
        malformed,  // not the OpenAI API: not JSON, or JSON without choices, usage or error
    };
    Kind kind = Kind::data;
    // choices[0].text (completions) or choices[0].delta.content (chat); absent where there is none or it
    // is null (a chat stream's first delta carries only the role).
    std::optional<std::string> text{};
    std::string finish_reason{};
    std::int64_t prompt_tokens = -1;  // usage; -1 where the event has none
    std::int64_t completion_tokens = -1;
    std::int64_t cached_tokens = -1;
    double prompt_ms = -1;  // llama.cpp's timings
    double predicted_ms = -1;
    std::string message{};  // kind error: the server's message; malformed: what arrived instead
};

StreamEvent parse_stream_event(std::string_view data, ServingApi api);
// A complete non-streamed answer: one data event, or error / malformed. Its text is the whole output.
StreamEvent parse_response_body(std::string_view body, ServingApi api);

// "...": the text fit for one line of an error message, cut to about max_bytes.
std::string one_line(std::string_view text, std::size_t max_bytes = 300);

class ResponseAssembler {
public:
    // Adds one event's data, which arrived at arrival_ns, to the request. Events after the stream ended
    // ([DONE], an error, a malformed event) are ignored.
    void add_event(std::string_view data, std::int64_t arrival_ns, ServingApi api, ServedRequest& request);
    // A complete non-streamed body: one chunk carrying every output token the usage reports.
    void add_body(std::string_view body, std::int64_t arrival_ns, ServingApi api, ServedRequest& request);
    // The stream is over (the transfer ended well): the outcome from what came. A stream without [DONE]
    // is truncated; with ignore_eos, a usage count other than max_tokens is wrong_token_count.
    void finish(bool ignore_eos, std::int64_t max_tokens, ServedRequest& request) const;

    bool ended() const { return ended_; }
    bool failed() const { return failed_; }

private:
    void add(const StreamEvent& event, std::int64_t arrival_ns, ServedRequest& request, bool whole_body);

    bool ended_ = false;               // [DONE], an error or a malformed event came (or the whole body)
    bool failed_ = false;              // an error or malformed event: the outcome is already set
    bool per_chunk_usage_ = false;     // the server sends usage with its text chunks (continuous usage)
    std::int64_t tokens_counted_ = 0;  // completion_tokens as of the last chunk, with per-chunk usage
};

}  // namespace inferbench::serving
