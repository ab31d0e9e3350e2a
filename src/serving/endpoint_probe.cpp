#include "serving/endpoint_probe.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "serving/curl_support.hpp"
#include "serving/http_get.hpp"
#include "serving/openai_stream.hpp"

namespace inferbench::serving {
namespace {

// The ids of an OpenAI model list ({"object": "list", "data": [{"id": ...}]}), or nothing when it is not one.
std::optional<std::vector<std::string>> model_ids(const std::string& body) {
    const auto root = nlohmann::json::parse(body, nullptr, false);
    if (!root.is_object() || !root.contains("data") || !root["data"].is_array()) return std::nullopt;
    std::vector<std::string> ids;
    for (const auto& model : root["data"])
        if (model.is_object() && model.contains("id") && model["id"].is_string()) ids.push_back(model["id"]);
    return ids;
}

}  // namespace

EndpointProbe probe_endpoint(const EndpointConfig& config, std::int64_t timeout_ns) {
    const std::string url = endpoint_url(config, "/v1/models");
    const HttpAnswer answer = http_get(url, timeout_ns, config.api_key);
    EndpointProbe probe;
    probe.http_status = answer.status;
    probe.server = one_line(answer.server, 120);
    if (answer.status == 0) {
        probe.error = fmt::format("cannot connect to {}: {}; start the server or set endpoint=URL", url, answer.error);
        return probe;
    }
    const auto ids = answer.status == 200 ? model_ids(answer.body) : std::nullopt;
    if (!ids) {
        probe.error = fmt::format(
            "{} answered HTTP {}{} but not the OpenAI API's model list ({}); is endpoint=URL an OpenAI-compatible "
            "server?",
            url, answer.status, probe.server.empty() ? "" : " from " + probe.server, one_line(answer.body, 120));
        probe.error = detail::without_key(std::move(probe.error), config.api_key);
        return probe;
    }
    probe.reachable = true;
    probe.models = *ids;
    return probe;
}

}  // namespace inferbench::serving
