// Server-sent events (the WHATWG event-stream format) parsed from bytes as the transport hands them over:
// a piece may end anywhere, inside a line or between a CR and its LF, and the events come out the same.
// Lines end with LF, CRLF or CR; `data:` lines of one event are joined with LF; comment lines (`:`) and
// fields other than data and event are ignored; a blank line ends an event. An event larger than the limit
// is an error, so a server that never ends its event cannot grow the client's memory without bound.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace inferbench::serving {

struct SseEvent {
    std::string event{};  // the `event:` field; empty for the default "message"
    std::string data{};   // the `data:` lines joined with LF
    friend bool operator==(const SseEvent&, const SseEvent&) = default;
};

class SseParser {
public:
    static constexpr std::size_t kDefaultMaxEventBytes = 16u << 20;

    explicit SseParser(std::size_t max_event_bytes = kDefaultMaxEventBytes) : max_event_bytes_(max_event_bytes) {}

    // Appends the events the piece completes to `events`. False once an event has grown past the limit
    // (error() says so); the parser then takes nothing more.
    bool feed(std::string_view piece, std::vector<SseEvent>& events);

    const std::string& error() const { return error_; }
    // Bytes of an event begun and not ended (a stream cut off mid-event leaves some).
    bool has_partial_event() const { return !line_.empty() || has_data_ || !event_.event.empty(); }

private:
    void take_line(std::string_view line, std::vector<SseEvent>& events);
    bool over_limit(std::size_t more);

    std::size_t max_event_bytes_;
    std::string line_;       // the current line's bytes so far
    SseEvent event_;         // the event being assembled
    bool has_data_ = false;  // a data line came (an event with an empty data line is still an event)
    bool after_cr_ = false;  // the last byte was a CR: an LF right after it ends no second line
    std::string error_;
};

}  // namespace inferbench::serving
