#include "serving/sse_parser.hpp"

#include <fmt/format.h>

namespace inferbench::serving {

bool SseParser::over_limit(std::size_t more) {
    if (line_.size() + event_.data.size() + event_.event.size() + more <= max_event_bytes_) return false;
    error_ = fmt::format("a server-sent event longer than {} bytes", max_event_bytes_);
    return true;
}

bool SseParser::feed(std::string_view piece, std::vector<SseEvent>& events) {
    if (!error_.empty()) return false;
    std::size_t at = 0;
    if (after_cr_ && !piece.empty()) {
        after_cr_ = false;
        if (piece.front() == '\n') at = 1;
    }
    while (at < piece.size()) {
        const std::size_t end = piece.find_first_of("\r\n", at);
        const std::string_view bytes = piece.substr(at, end == std::string_view::npos ? piece.size() - at : end - at);
        if (over_limit(bytes.size())) return false;
        if (end == std::string_view::npos) {
            line_.append(bytes);
            break;
        }
        if (line_.empty()) {
            take_line(bytes, events);
        } else {
            line_.append(bytes);
            take_line(line_, events);
        }
        line_.clear();
        at = end + 1;
        if (piece[end] == '\r') {
            if (at == piece.size())
                after_cr_ = true;
            else if (piece[at] == '\n')
                ++at;
        }
    }
    return true;
}

void SseParser::take_line(std::string_view line, std::vector<SseEvent>& events) {
    if (line.empty()) {
        if (has_data_) events.push_back(std::move(event_));
        event_ = {};
        has_data_ = false;
        return;
    }
    if (line.front() == ':') return;  // a comment: servers send them to keep a connection open
    const std::size_t colon = line.find(':');
    const std::string_view field = line.substr(0, colon);
    std::string_view value = colon == std::string_view::npos ? std::string_view{} : line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (field == "data") {
        if (has_data_) event_.data.push_back('\n');
        event_.data.append(value);
        has_data_ = true;
    } else if (field == "event") {
        event_.event.assign(value);
    }
}

}  // namespace inferbench::serving
