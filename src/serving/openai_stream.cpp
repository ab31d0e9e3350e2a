#include "serving/openai_stream.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace inferbench::serving {
namespace {

using nlohmann::json;

StreamEvent malformed(std::string message) {
    StreamEvent event;
    event.kind = StreamEvent::Kind::malformed;
    event.message = std::move(message);
    return event;
}

std::int64_t integer_at(const json& object, const char* key) {
    const auto it = object.find(key);
    return it != object.end() && it->is_number_integer() ? it->get<std::int64_t>() : -1;
}

double number_at(const json& object, const char* key) {
    const auto it = object.find(key);
    return it != object.end() && it->is_number() ? it->get<double>() : -1;
}

// The text of choices[0]: `text` (completions), delta.content (chat stream) or message.content (chat body).
std::optional<std::string> choice_text(const json& choice, ServingApi api, bool whole_body) {
    const json* holder = &choice;
    const char* key = "text";
    if (api == ServingApi::chat) {
        const auto part = choice.find(whole_body ? "message" : "delta");
        if (part == choice.end() || !part->is_object()) return std::nullopt;
        holder = &*part;
        key = "content";
    }
    const auto it = holder->find(key);
    if (it == holder->end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
}

void read_usage(const json& usage, StreamEvent& event) {
    event.prompt_tokens = integer_at(usage, "prompt_tokens");
    event.completion_tokens = integer_at(usage, "completion_tokens");
    const auto details = usage.find("prompt_tokens_details");
    if (details != usage.end() && details->is_object()) event.cached_tokens = integer_at(*details, "cached_tokens");
}

StreamEvent parse_json(std::string_view text, ServingApi api, bool whole_body) {
    const json root = json::parse(text, nullptr, false);
    if (root.is_discarded()) return malformed("not JSON: " + one_line(text, 120));
    if (!root.is_object()) return malformed("JSON that is not an object: " + one_line(text, 120));
    StreamEvent event;
    if (const auto error = root.find("error"); error != root.end()) {
        event.kind = StreamEvent::Kind::error;
        const json* message = error->is_object() && error->contains("message") ? &(*error)["message"] : &*error;
        event.message = one_line(message->is_string() ? message->get<std::string>() : message->dump());
        return event;
    }
    const auto choices = root.find("choices");
    const auto usage = root.find("usage");
    const bool has_usage = usage != root.end() && usage->is_object();
    if ((choices == root.end() || !choices->is_array()) && !has_usage)
        return malformed("JSON without choices, usage or error (another API?): " + one_line(text, 120));
    if (choices != root.end() && choices->is_array() && !choices->empty() && choices->front().is_object()) {
        const json& choice = choices->front();
        event.text = choice_text(choice, api, whole_body);
        if (const auto reason = choice.find("finish_reason"); reason != choice.end() && reason->is_string())
            event.finish_reason = reason->get<std::string>();
    }
    if (has_usage) read_usage(*usage, event);
    if (const auto timings = root.find("timings"); timings != root.end() && timings->is_object()) {
        event.prompt_ms = number_at(*timings, "prompt_ms");
        event.predicted_ms = number_at(*timings, "predicted_ms");
    }
    return event;
}

}  // namespace

std::string one_line(std::string_view text, std::size_t max_bytes) {
    std::string line;
    for (const char c : text) {
        if (line.size() >= max_bytes) {
            // Cut at a character boundary so the message stays UTF-8.
            while (!line.empty() && (static_cast<unsigned char>(line.back()) & 0xC0) == 0x80) line.pop_back();
            if (!line.empty() && (static_cast<unsigned char>(line.back()) & 0x80) != 0) line.pop_back();
            return line + "...";
        }
        const bool space = c == '\n' || c == '\r' || c == '\t';
        if (space && (line.empty() || line.back() == ' ')) continue;
        line.push_back(space ? ' ' : c);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line;
}

StreamEvent parse_stream_event(std::string_view data, ServingApi api) {
    if (data == "[DONE]") return StreamEvent{.kind = StreamEvent::Kind::done};
    return parse_json(data, api, false);
}

StreamEvent parse_response_body(std::string_view body, ServingApi api) { return parse_json(body, api, true); }

void ResponseAssembler::add_event(std::string_view data, std::int64_t arrival_ns, ServingApi api,
                                  ServedRequest& request) {
    if (ended_) return;
    add(parse_stream_event(data, api), arrival_ns, request, false);
}

void ResponseAssembler::add_body(std::string_view body, std::int64_t arrival_ns, ServingApi api,
                                 ServedRequest& request) {
    if (ended_) return;
    StreamEvent event = parse_response_body(body, api);
    add(event, arrival_ns, request, true);
    ended_ = true;
}

void ResponseAssembler::add(const StreamEvent& event, std::int64_t arrival_ns, ServedRequest& request,
                            bool whole_body) {
    switch (event.kind) {
        case StreamEvent::Kind::done:
            ended_ = true;
            return;
        case StreamEvent::Kind::error:
        case StreamEvent::Kind::malformed:
            ended_ = failed_ = true;
            request.outcome =
                event.kind == StreamEvent::Kind::error ? RequestOutcome::server_error : RequestOutcome::malformed;
            request.error = event.message;
            return;
        case StreamEvent::Kind::data:
            break;
    }
    const bool has_text = event.text && !event.text->empty();
    if (event.completion_tokens >= 0 && (has_text || whole_body)) per_chunk_usage_ = true;
    // Without a count from the server a text chunk is one token; a whole body without usage, unknown.
    std::int64_t tokens = has_text ? (whole_body ? -1 : 1) : 0;
    if (per_chunk_usage_ && event.completion_tokens >= 0) {
        tokens = event.completion_tokens - tokens_counted_;
        tokens_counted_ = event.completion_tokens;
    }
    if (tokens > 0 || has_text) request.chunks.push_back({.arrival_ns = arrival_ns, .tokens = tokens});
    if (!event.finish_reason.empty()) request.finish_reason = event.finish_reason;
    if (event.prompt_tokens >= 0) request.input_tokens = event.prompt_tokens;
    if (event.completion_tokens >= 0) request.output_tokens = event.completion_tokens;
    if (event.cached_tokens >= 0) request.cached_tokens = event.cached_tokens;
    if (event.prompt_ms >= 0) request.server_prompt_ms = event.prompt_ms;
    if (event.predicted_ms >= 0) request.server_generation_ms = event.predicted_ms;
}

void ResponseAssembler::finish(bool ignore_eos, std::int64_t max_tokens, ServedRequest& request) const {
    if (failed_) return;
    if (!ended_) {
        request.outcome = RequestOutcome::truncated;
        request.error = "the connection ended before data: [DONE]";
    } else if (ignore_eos && request.output_tokens >= 0 && request.output_tokens != max_tokens) {
        request.outcome = RequestOutcome::wrong_token_count;
        request.error = fmt::format("the server's usage says {} output tokens, {} were asked for with ignore_eos",
                                    request.output_tokens, max_tokens);
    } else {
        request.outcome = RequestOutcome::ok;
    }
}

}  // namespace inferbench::serving
