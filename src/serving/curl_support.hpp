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

// "cannot connect to URL: Connection refused" (the system's reason where curl has one, else curl's).
std::string connect_failure(CURL* easy, const std::string& url, CURLcode code, const char* error_buffer);

// curl's message for a failed transfer: the error buffer where it was filled, else the code's text.
std::string curl_message(CURLcode code, const char* error_buffer);

}  // namespace inferbench::serving::detail
