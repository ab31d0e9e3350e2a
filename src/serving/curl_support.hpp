// What the client and the endpoint probe share on libcurl (internal to the module): its one-time global
// set-up, the options every request of ours takes, and a failed transfer's reason as one line.
#pragma once

#include <curl/curl.h>

#include <cstdint>
#include <string>

namespace inferbench::serving::detail {

// curl_global_init once per process, before the first handle (it is not thread-safe).
void init_curl();

// HTTP/1.1, no signals, Nagle off, no compression, the timeouts (ns, rounded up to ms), the error buffer.
void set_common_options(CURL* easy, std::int64_t connect_timeout_ns, std::int64_t request_timeout_ns,
                        char* error_buffer);

// Whether the code means that no connection was made (refused, unreachable, name not resolved).
bool is_connect_failure(CURLcode code);

// Why a transfer failed: the system's reason for a refused connection ("Connection refused"), else curl's.
std::string failure_reason(CURL* easy, CURLcode code, const char* error_buffer);

// curl's message for a failed transfer: the error buffer where it was filled, else the code's text.
std::string curl_message(CURLcode code, const char* error_buffer);

// The text with every copy of the API key replaced by ***: a server or proxy may quote a request's headers
// back in its answer, and errors are stored.
std::string without_key(std::string text, const std::string& key);

}  // namespace inferbench::serving::detail
