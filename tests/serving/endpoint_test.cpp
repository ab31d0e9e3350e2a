#include "serving/endpoint.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace inferbench::serving {
namespace {

TEST(Endpoint, CompletionsBodyWithTokenIds) {
    EndpointConfig config{.base_url = "http://127.0.0.1:8080", .model = "tiny-llama"};
    PlannedRequest request;
    request.prompt_token_ids = {1, 2, 3};
    request.max_tokens = 16;
    const auto body = nlohmann::json::parse(request_body(config, request));
    EXPECT_EQ(body, nlohmann::json::parse(R"({"model":"tiny-llama","prompt":[1,2,3],"max_tokens":16,"stream":true,
        "stream_options":{"include_usage":true},"ignore_eos":true,"temperature":0})"));
}

TEST(Endpoint, ChatBodySeededWithoutIgnoreEos) {
    EndpointConfig config{.api = ServingApi::chat,
                          .model = "m",
                          .ignore_eos = false,
                          .sampling = Sampling::seeded,
                          .seed = 7,
                          .continuous_usage_stats = true};
    PlannedRequest request;
    request.messages = {{"system", "be brief"}, {"user", "hi"}};
    request.max_tokens = 4;
    const auto body = nlohmann::json::parse(request_body(config, request));
    EXPECT_EQ(body, nlohmann::json::parse(R"({"model":"m","messages":[{"role":"system","content":"be brief"},
        {"role":"user","content":"hi"}],"max_tokens":4,"stream":true,
        "stream_options":{"include_usage":true,"continuous_usage_stats":true},"seed":7})"));
}

TEST(Endpoint, TextPromptWithInvalidUtf8IsReplacedNotThrown) {
    EndpointConfig config{.model = "m"};
    PlannedRequest request;
    request.prompt_text =
        "a\xff"
        "b";
    request.max_tokens = 1;
    const auto body = nlohmann::json::parse(request_body(config, request));
    EXPECT_EQ(body["prompt"],
              "a\xEF\xBF\xBD"
              "b");
}

TEST(Endpoint, UrlsTolerateTrailingSlashAndV1) {
    for (const char* base : {"http://h:1", "http://h:1/", "http://h:1/v1", "http://h:1/v1/"}) {
        EXPECT_EQ(endpoint_url(EndpointConfig{.base_url = base}, api_path(ServingApi::chat)),
                  "http://h:1/v1/chat/completions")
            << base;
    }
    EXPECT_EQ(endpoint_url(EndpointConfig{.base_url = "http://h:1"}, "/v1/models"), "http://h:1/v1/models");
}

}  // namespace
}  // namespace inferbench::serving
