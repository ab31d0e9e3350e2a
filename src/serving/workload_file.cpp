#include "serving/workload_file.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "serving/workload_json.hpp"
#include "serving/workload_text.hpp"

namespace inferbench::serving {
namespace {

using nlohmann::json;

// Where a record came from, for its error line.
struct Line {
    std::string_view file;
    std::int64_t number = 0;
    [[noreturn]] void fail(std::string_view what) const {
        throw UserError(fmt::format("{} line {}: {}", file, number, what));
    }
};

std::int64_t output_length(const json& record, const Line& line, const WorkloadSettings& s, std::int64_t fallback) {
    if (!s.output_from_source) return s.output_tokens;
    for (const char* key : {"max_tokens", "output_tokens"}) {
        const auto it = record.find(key);
        if (it == record.end()) continue;
        if (!it->is_number_integer() || it->get<std::int64_t>() < 1 || it->get<std::int64_t>() > s.max_output_tokens)
            line.fail(fmt::format("\"{}\" is not an integer in [1, {}]", key, s.max_output_tokens));
        return it->get<std::int64_t>();
    }
    return std::clamp<std::int64_t>(fallback, 1, s.max_output_tokens);
}

void set_text_prompt(PlannedRequest& r, std::string text, ServingApi api) {
    r.input_tokens = estimated_tokens(text);
    if (api == ServingApi::chat)
        r.messages.push_back({"user", std::move(text)});
    else
        r.prompt_text = std::move(text);
}

// ShareGPT: the first human turn as the prompt; returns the estimated length of the answer after it.
std::int64_t read_conversation(const json& turns, const Line& line, const WorkloadSettings& s, PlannedRequest& r) {
    if (!turns.is_array() || turns.empty()) line.fail("empty conversation: \"conversations\" holds no turns");
    auto is_from = [](const json& turn, std::string_view a, std::string_view b) {
        return turn.is_object() && turn.contains("from") && turn["from"].is_string() &&
               (turn["from"] == a || turn["from"] == b) && turn.contains("value") && turn["value"].is_string();
    };
    const auto human =
        std::find_if(turns.begin(), turns.end(), [&](const json& t) { return is_from(t, "human", "user"); });
    if (human == turns.end()) line.fail("no prompt: \"conversations\" has no human turn with a text \"value\"");
    const auto text = (*human)["value"].get<std::string>();
    if (count_words(text) == 0) line.fail("no prompt: the first human turn is empty");
    set_text_prompt(r, text, s.api);
    std::int64_t answer = s.output_tokens;
    const auto gpt = std::find_if(human, turns.end(), [&](const json& t) { return is_from(t, "gpt", "assistant"); });
    if (gpt != turns.end()) answer = estimated_tokens((*gpt)["value"].get<std::string>());
    return answer;
}

void read_messages(const json& list, const Line& line, const WorkloadSettings& s, PlannedRequest& r) {
    if (s.api != ServingApi::chat) line.fail("\"messages\" need api chat; give \"prompt\" for completions");
    if (!list.is_array() || list.empty()) line.fail("empty conversation: \"messages\" holds no messages");
    for (const auto& m : list) {
        if (!m.is_object() || !m.contains("role") || !m["role"].is_string() || !m.contains("content") ||
            !m["content"].is_string())
            line.fail("a message is not {\"role\": text, \"content\": text}");
        r.messages.push_back({m["role"].get<std::string>(), m["content"].get<std::string>()});
        r.input_tokens += estimated_tokens(r.messages.back().content);
    }
}

void read_prompt(const json& prompt, const Line& line, const WorkloadSettings& s, PlannedRequest& r) {
    if (prompt.is_string()) {
        if (count_words(prompt.get<std::string>()) == 0) line.fail("no prompt: \"prompt\" is empty");
        set_text_prompt(r, prompt.get<std::string>(), s.api);
        return;
    }
    if (!prompt.is_array()) line.fail("\"prompt\" is neither text nor a list of token ids");
    if (s.api != ServingApi::completions) line.fail("a prompt of token ids needs api completions");
    if (prompt.empty()) line.fail("no prompt: \"prompt\" is an empty list");
    for (const auto& id : prompt) {
        if (!id.is_number_integer() || id.get<std::int64_t>() < 0) line.fail("a token id is not an integer >= 0");
        r.prompt_token_ids.push_back(id.get<std::int64_t>());
    }
    r.input_tokens = static_cast<std::int64_t>(r.prompt_token_ids.size());
}

PlannedRequest record_from_line(std::string_view text, const Line& line, const WorkloadSettings& s) {
    json record;
    try {
        record = json::parse(text);
    } catch (const json::parse_error& e) {
        line.fail(fmt::format("invalid JSON at column {}: each line must be one JSON object", e.byte));
    }
    if (!record.is_object()) line.fail("not a JSON object");
    PlannedRequest r;
    std::int64_t output = s.output_tokens;
    if (const auto c = record.find("conversations"); c != record.end())
        output = read_conversation(*c, line, s, r);
    else if (const auto m = record.find("messages"); m != record.end())
        read_messages(*m, line, s, r);
    else if (const auto p = record.find("prompt"); p != record.end())
        read_prompt(*p, line, s, r);
    else
        line.fail("no prompt: give \"prompt\", \"messages\" or ShareGPT's \"conversations\"");
    r.max_tokens = output_length(record, line, s, output);
    return r;
}

std::vector<PlannedRequest> jsonl_workload(std::string_view content, std::string_view file, const WorkloadSettings& s) {
    std::vector<PlannedRequest> requests;
    Line line{file, 0};
    while (!content.empty() && (s.requests == 0 || static_cast<std::int64_t>(requests.size()) < s.requests)) {
        const auto end = content.find('\n');
        std::string_view text = content.substr(0, end);
        content = end == std::string_view::npos ? std::string_view{} : content.substr(end + 1);
        if (++line.number > kMaxWorkloadFileLines)
            throw UserError(
                fmt::format("{} has more than {} lines: split it or give fewer requests", file, kMaxWorkloadFileLines));
        if (count_words(text) == 0) continue;
        requests.push_back(record_from_line(text, line, s));
        requests.back().index = static_cast<std::int64_t>(requests.size()) - 1;
    }
    if (requests.empty()) throw UserError(fmt::format("{} holds no requests: one JSON object a line", file));
    if (s.requests > 0 && static_cast<std::int64_t>(requests.size()) < s.requests)
        throw UserError(
            fmt::format("{} holds {} requests, fewer than the {} asked for: lower requests (0 takes "
                        "them all) or add records",
                        file, requests.size(), s.requests));
    return requests;
}

void check_api(const std::vector<PlannedRequest>& requests, std::string_view file, ServingApi api) {
    for (const auto& r : requests)
        if (r.messages.empty() == (api == ServingApi::chat))
            throw UserError(fmt::format("{}: request {} is a {} request, but the cell's api is {}", file, r.index,
                                        r.messages.empty() ? "completions" : "chat", to_string(api)));
}

}  // namespace

std::vector<PlannedRequest> workload_from_content(std::string_view content, std::string_view file,
                                                  const WorkloadSettings& settings) {
    if (static_cast<std::int64_t>(content.size()) > kMaxWorkloadFileBytes)
        throw UserError(fmt::format("{} is {} bytes, more than the {} a workload file may hold", file, content.size(),
                                    kMaxWorkloadFileBytes));
    const json whole = json::parse(content, nullptr, false);
    if (!whole.is_discarded() && is_stored_workload(whole)) {
        std::vector<PlannedRequest> requests;
        try {
            requests = workload_from_json(whole);
        } catch (const UserError& e) {
            throw UserError(fmt::format("{}: {}", file, e.what()));
        }
        check_api(requests, file, settings.api);
        return requests;
    }
    return jsonl_workload(content, file, settings);
}

std::vector<PlannedRequest> workload_from_file(const WorkloadSettings& settings) {
    const std::filesystem::path path(settings.source);
    std::error_code error;
    const auto size = std::filesystem::file_size(path, error);
    if (!error && size > static_cast<std::uintmax_t>(kMaxWorkloadFileBytes))
        throw UserError(fmt::format("{} is {} bytes, more than the {} a workload file may hold", settings.source, size,
                                    kMaxWorkloadFileBytes));
    return workload_from_content(read_regular_file(path), settings.source, settings);
}

}  // namespace inferbench::serving
