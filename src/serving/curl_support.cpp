#include "serving/curl_support.hpp"

#include <cstring>
#include <mutex>
#include <stdexcept>

namespace inferbench::serving::detail {
namespace {

long milliseconds_up(std::int64_t ns) { return static_cast<long>(ns <= 0 ? 0 : (ns + 999'999) / 1'000'000); }

}  // namespace

void init_curl() {
    static std::once_flag once;
    std::call_once(once, [] {
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) throw std::runtime_error("libcurl failed to start");
    });
}

void set_common_options(CURL* easy, std::int64_t connect_timeout_ns, std::int64_t request_timeout_ns,
                        char* error_buffer) {
    curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, milliseconds_up(connect_timeout_ns));
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, milliseconds_up(request_timeout_ns));
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, error_buffer);
    error_buffer[0] = '\0';
}

bool is_connect_failure(CURLcode code) {
    return code == CURLE_COULDNT_CONNECT || code == CURLE_COULDNT_RESOLVE_HOST || code == CURLE_COULDNT_RESOLVE_PROXY ||
           code == CURLE_UNSUPPORTED_PROTOCOL || code == CURLE_URL_MALFORMAT || code == CURLE_SSL_CONNECT_ERROR;
}

std::string curl_message(CURLcode code, const char* error_buffer) {
    return error_buffer != nullptr && error_buffer[0] != '\0' ? std::string(error_buffer)
                                                              : std::string(curl_easy_strerror(code));
}

std::string failure_reason(CURL* easy, CURLcode code, const char* error_buffer) {
    long os_errno = 0;
    curl_easy_getinfo(easy, CURLINFO_OS_ERRNO, &os_errno);
    return code == CURLE_COULDNT_CONNECT && os_errno != 0 ? std::string(std::strerror(static_cast<int>(os_errno)))
                                                          : curl_message(code, error_buffer);
}

std::string without_key(std::string text, const std::string& key) {
    if (key.empty()) return text;
    for (std::size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 3))
        text.replace(at, key.size(), "***");
    return text;
}

}  // namespace inferbench::serving::detail
