// Where a serving cell's requests go and what they say: the endpoint's settings and the JSON body of one
// request, the same for every server of the OpenAI API.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/generation.hpp"
#include "core/serving.hpp"

namespace inferbench::serving {

struct EndpointConfig {
    std::string base_url{};  // "http://127.0.0.1:8080" (a trailing /v1 is tolerated)
    ServingApi api = ServingApi::completions;
    std::string model{};    // the request's "model" field
    std::string api_key{};  // from the environment variable the plan names; never stored or logged
    std::int64_t connect_timeout_ns = 10'000'000'000;
    std::int64_t request_timeout_ns = 600'000'000'000;
    bool ignore_eos = true;  // sent as "ignore_eos": true (llama.cpp, vLLM); with it a usage count other than
                             // max_tokens is wrong_token_count
    Sampling sampling = Sampling::greedy;  // greedy -> temperature 0; seeded -> "seed"
    std::uint64_t seed = 0;
    // Asks for usage in every chunk (vLLM's and SGLang's stream_options.continuous_usage_stats), so that a
    // chunk carrying several tokens is counted as such; servers without it may refuse the field.
    bool continuous_usage_stats = false;
};

// The JSON sent: model, the prompt (token ids or text) or messages, max_tokens, stream true,
// stream_options.include_usage true, and the sampling and ignore_eos settings.
std::string request_body(const EndpointConfig& config, const PlannedRequest& request);

// base_url without a trailing "/" or "/v1", then path ("/v1/models").
std::string endpoint_url(const EndpointConfig& config, std::string_view path);
// The path of the config's API: /v1/completions or /v1/chat/completions.
std::string_view api_path(ServingApi api);

}  // namespace inferbench::serving
