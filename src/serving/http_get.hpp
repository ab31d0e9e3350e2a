// One blocking GET (libcurl's easy interface), for what is asked once and not timed: a server's health,
// version and model list.
#pragma once

#include <cstdint>
#include <string>

namespace inferbench::serving {

struct HttpAnswer {
    long status = 0;      // 0: no HTTP answer (then `error` says why)
    std::string body;     // at most kMaxAnswerBytes
    std::string server;   // the Server header; empty when none
    std::string content_type;
    std::string error;    // curl's reason when there was no answer
};

inline constexpr std::size_t kMaxAnswerBytes = 1 << 20;

// `api_key` (may be empty) is sent as a Bearer token.
HttpAnswer http_get(const std::string& url, std::int64_t timeout_ns, const std::string& api_key = {});

}  // namespace inferbench::serving
