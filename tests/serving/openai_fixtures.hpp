// The real llama-server responses in shared/fixtures/openai-stream: the raw HTTP bytes, and the body as
// curl hands it over (the chunked transfer framing removed).
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <fstream>
#include <sstream>
#include <string>

namespace inferbench::testing {

inline std::string openai_fixture(const std::string& name) {
    const std::string path = std::string(INFERBENCH_FIXTURES_DIR) + "/openai-stream/" + name;
    std::ifstream in(path, std::ios::binary);
    EXPECT_TRUE(in.good()) << "missing fixture " << path;
    std::ostringstream bytes;
    bytes << in.rdbuf();
    return bytes.str();
}

// The body of a raw HTTP/1.1 response: after the headers, de-chunked where Transfer-Encoding is chunked.
inline std::string http_body(const std::string& response) {
    const std::size_t headers_end = response.find("\r\n\r\n");
    if (headers_end == std::string::npos) return {};
    const std::string headers = response.substr(0, headers_end);
    std::size_t at = headers_end + 4;
    if (headers.find("Transfer-Encoding: chunked") == std::string::npos) return response.substr(at);
    std::string body;
    for (;;) {
        const std::size_t line_end = response.find("\r\n", at);
        if (line_end == std::string::npos) return body;  // cut off
        const std::size_t size = std::stoul(response.substr(at, line_end - at), nullptr, 16);
        if (size == 0) return body;
        body.append(response, line_end + 2, size);
        at = line_end + 2 + size + 2;
    }
}

}  // namespace inferbench::testing
