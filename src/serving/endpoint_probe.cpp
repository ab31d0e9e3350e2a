#include "serving/endpoint_probe.hpp"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <memory>
#include <nlohmann/json.hpp>

#include "serving/curl_support.hpp"
#include "serving/openai_stream.hpp"

namespace inferbench::serving {
namespace {

constexpr std::size_t kMaxModelsBody = 4u << 20;

struct ProbeBuffers {
    std::string body;
    std::string server;
};

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
    auto& buffers = *static_cast<ProbeBuffers*>(user);
    const std::size_t bytes = size * count;
    if (buffers.body.size() + bytes > kMaxModelsBody) return 0;
    buffers.body.append(data, bytes);
    return bytes;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
    const std::size_t bytes = size * count;
    const std::string_view line(data, bytes);
    constexpr std::string_view kServer = "server:";
    if (line.size() > kServer.size() &&
        std::equal(kServer.begin(), kServer.end(), line.begin(),
                   [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); })) {
        std::string_view value = line.substr(kServer.size());
        while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
        static_cast<ProbeBuffers*>(user)->server = one_line(value, 120);
    }
    return bytes;
}

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
    detail::init_curl();
    const std::string url = endpoint_url(config, "/v1/models");
    const std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> easy(curl_easy_init(), &curl_easy_cleanup);
    if (!easy) return {.error = "libcurl could not make a request handle"};
    char error_buffer[CURL_ERROR_SIZE] = {};
    ProbeBuffers buffers;
    detail::set_common_options(easy.get(), std::min(config.connect_timeout_ns, timeout_ns), timeout_ns, error_buffer);
    curl_easy_setopt(easy.get(), CURLOPT_URL, url.c_str());
    curl_easy_setopt(easy.get(), CURLOPT_WRITEFUNCTION, &on_body);
    curl_easy_setopt(easy.get(), CURLOPT_WRITEDATA, &buffers);
    curl_easy_setopt(easy.get(), CURLOPT_HEADERFUNCTION, &on_header);
    curl_easy_setopt(easy.get(), CURLOPT_HEADERDATA, &buffers);
    std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> headers(nullptr, &curl_slist_free_all);
    if (!config.api_key.empty())
        headers.reset(curl_slist_append(nullptr, ("Authorization: Bearer " + config.api_key).c_str()));
    curl_easy_setopt(easy.get(), CURLOPT_HTTPHEADER, headers.get());

    const CURLcode code = curl_easy_perform(easy.get());
    EndpointProbe probe;
    long status = 0;
    curl_easy_getinfo(easy.get(), CURLINFO_RESPONSE_CODE, &status);
    probe.http_status = status;
    probe.server = buffers.server;
    if (code != CURLE_OK && probe.http_status == 0) {
        probe.error = (detail::is_connect_failure(code) ? detail::connect_failure(easy.get(), url, code, error_buffer)
                                                         : fmt::format("cannot connect to {}: {}", url,
                                                                       detail::curl_message(code, error_buffer))) +
                      "; start the server or set endpoint=URL";
        return probe;
    }
    const auto ids = code == CURLE_OK && probe.http_status == 200 ? model_ids(buffers.body) : std::nullopt;
    if (!ids) {
        probe.error = fmt::format("{} answered HTTP {}{} but not the OpenAI API's model list ({}); is endpoint=URL an "
                                  "OpenAI-compatible server?",
                                  url, probe.http_status, probe.server.empty() ? "" : " from " + probe.server,
                                  code != CURLE_OK ? detail::curl_message(code, error_buffer)
                                                   : one_line(buffers.body, 120));
        return probe;
    }
    probe.reachable = true;
    probe.models = *ids;
    return probe;
}

}  // namespace inferbench::serving
