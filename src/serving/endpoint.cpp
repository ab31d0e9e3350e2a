#include "serving/endpoint.hpp"

#include <nlohmann/json.hpp>

namespace inferbench::serving {

std::string request_body(const EndpointConfig& config, const PlannedRequest& request) {
    nlohmann::json body;
    body["model"] = config.model;
    if (config.api == ServingApi::chat) {
        nlohmann::json messages = nlohmann::json::array();
        for (const ChatMessage& message : request.messages)
            messages.push_back({{"role", message.role}, {"content", message.content}});
        body["messages"] = std::move(messages);
    } else if (!request.prompt_token_ids.empty()) {
        body["prompt"] = request.prompt_token_ids;
    } else {
        body["prompt"] = request.prompt_text;
    }
    body["max_tokens"] = request.max_tokens;
    body["stream"] = true;
    body["stream_options"] = {{"include_usage", true}};
    if (config.continuous_usage_stats) body["stream_options"]["continuous_usage_stats"] = true;
    if (config.ignore_eos) body["ignore_eos"] = true;
    if (config.sampling == Sampling::greedy)
        body["temperature"] = 0;
    else
        body["seed"] = config.seed;
    // Invalid UTF-8 in a prompt is replaced, not thrown: the server sees what a JSON encoder can send.
    return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string endpoint_url(const EndpointConfig& config, std::string_view path) {
    std::string_view base = config.base_url;
    while (!base.empty() && base.back() == '/') base.remove_suffix(1);
    if (base.ends_with("/v1")) base.remove_suffix(3);
    return std::string(base) + std::string(path);
}

std::string_view api_path(ServingApi api) {
    return api == ServingApi::chat ? "/v1/chat/completions" : "/v1/completions";
}

}  // namespace inferbench::serving
