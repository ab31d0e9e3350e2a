#include "serving/workload_json.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/fnv1a.hpp"
#include "serving/workload.hpp"

namespace inferbench::serving {
namespace {

using nlohmann::json;

nlohmann::json request_json(const PlannedRequest& r) {
    json out = {{"index", r.index},
                {"session", r.session},
                {"turn", r.turn},
                {"prefix_group", r.prefix_group},
                {"input_tokens", r.input_tokens},
                {"max_tokens", r.max_tokens}};
    if (!r.prompt_token_ids.empty()) out["prompt_token_ids"] = r.prompt_token_ids;
    if (!r.prompt_text.empty()) out["prompt_text"] = r.prompt_text;
    if (!r.messages.empty()) {
        json messages = json::array();
        for (const auto& m : r.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
        out["messages"] = std::move(messages);
    }
    return out;
}

[[noreturn]] void fail(std::size_t at, std::string_view what) {
    throw UserError(fmt::format("stored serving workload: request {}: {}", at, what));
}

std::int64_t int_field(const json& r, const char* key, std::size_t at, std::int64_t min) {
    const auto it = r.find(key);
    if (it == r.end() || !it->is_number_integer()) fail(at, fmt::format("\"{}\" is missing or not an integer", key));
    const auto value = it->get<std::int64_t>();
    if (value < min) fail(at, fmt::format("\"{}\" is {}, below {}", key, value, min));
    return value;
}

std::vector<ChatMessage> messages_from(const json& list, std::size_t at) {
    if (!list.is_array()) fail(at, "\"messages\" is not a list");
    std::vector<ChatMessage> messages;
    for (const auto& m : list) {
        if (!m.is_object() || !m.contains("role") || !m["role"].is_string() || !m.contains("content") ||
            !m["content"].is_string())
            fail(at, "a message is not {\"role\": text, \"content\": text}");
        messages.push_back({m["role"].get<std::string>(), m["content"].get<std::string>()});
    }
    return messages;
}

PlannedRequest request_from(const json& r, std::size_t at) {
    if (!r.is_object()) fail(at, "not a JSON object");
    PlannedRequest request;
    request.index = int_field(r, "index", at, 0);
    request.session = int_field(r, "session", at, -1);
    request.turn = int_field(r, "turn", at, 0);
    request.prefix_group = int_field(r, "prefix_group", at, -1);
    request.input_tokens = int_field(r, "input_tokens", at, 0);
    request.max_tokens = int_field(r, "max_tokens", at, 1);
    if (const auto ids = r.find("prompt_token_ids"); ids != r.end()) {
        if (!ids->is_array()) fail(at, "\"prompt_token_ids\" is not a list");
        for (const auto& id : *ids) {
            if (!id.is_number_integer() || id.get<std::int64_t>() < 0) fail(at, "a token id is not an integer >= 0");
            request.prompt_token_ids.push_back(id.get<std::int64_t>());
        }
    }
    if (const auto text = r.find("prompt_text"); text != r.end()) {
        if (!text->is_string()) fail(at, "\"prompt_text\" is not text");
        request.prompt_text = text->get<std::string>();
    }
    if (const auto messages = r.find("messages"); messages != r.end()) request.messages = messages_from(*messages, at);
    const int prompts =
        int{!request.prompt_token_ids.empty()} + int{!request.prompt_text.empty()} + int{!request.messages.empty()};
    if (prompts != 1) fail(at, "needs exactly one of \"prompt_token_ids\", \"prompt_text\" and \"messages\"");
    return request;
}

}  // namespace

nlohmann::json workload_json(std::span<const PlannedRequest> requests) {
    json list = json::array();
    for (const auto& r : requests) list.push_back(request_json(r));
    return {{"format", kWorkloadFormat}, {"version", kWorkloadFormatVersion}, {"requests", std::move(list)}};
}

bool is_stored_workload(const nlohmann::json& json) {
    return json.is_object() && json.contains("format") && json["format"] == kWorkloadFormat;
}

std::vector<PlannedRequest> workload_from_json(const nlohmann::json& json) {
    if (!is_stored_workload(json))
        throw UserError(fmt::format("not a stored serving workload: its \"format\" is not \"{}\"", kWorkloadFormat));
    if (!json.contains("version") || json["version"] != kWorkloadFormatVersion)
        throw UserError(fmt::format("stored serving workload: version {} is not {}, the one this build reads",
                                    json.contains("version") ? json["version"].dump() : "(none)",
                                    kWorkloadFormatVersion));
    if (!json.contains("requests") || !json["requests"].is_array())
        throw UserError("stored serving workload: \"requests\" is missing or not a list");
    const auto& list = json["requests"];
    if (list.size() > static_cast<std::size_t>(kMaxWorkloadRequests))
        throw UserError(
            fmt::format("stored serving workload: {} requests, more than {}", list.size(), kMaxWorkloadRequests));
    std::vector<PlannedRequest> requests;
    requests.reserve(list.size());
    for (std::size_t at = 0; at < list.size(); ++at) requests.push_back(request_from(list[at], at));
    return requests;
}

std::string workload_fingerprint(std::span<const PlannedRequest> requests) {
    return fmt::format("{:016x}", fnv1a64(workload_json(requests).dump()));
}

}  // namespace inferbench::serving
