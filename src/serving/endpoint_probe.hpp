// Is an OpenAI-API server there? GET {base}/v1/models, blocking, with a short timeout: before a serving cell
// sends traffic, so that a server not started or another program on the port gets one clear line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "serving/endpoint.hpp"

namespace inferbench::serving {

struct EndpointProbe {
    bool reachable = false;             // answered /v1/models with the API's model list
    std::int64_t http_status = 0;       // 0: no HTTP answer
    std::vector<std::string> models{};  // the ids listed
    std::string server{};               // the Server header ("llama.cpp"), empty where none
    std::string error{};                // one line when not reachable: what, where, how to fix
};

inline constexpr std::int64_t kProbeTimeoutNs = 5'000'000'000;

// timeout_ns bounds the whole answer, the connection included.
EndpointProbe probe_endpoint(const EndpointConfig& config, std::int64_t timeout_ns = kProbeTimeoutNs);

}  // namespace inferbench::serving
