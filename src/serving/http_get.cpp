#include "serving/http_get.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <string_view>

#include "serving/curl_support.hpp"

namespace inferbench::serving {
namespace {

std::size_t keep_body(char* data, std::size_t size, std::size_t count, void* user) {
    auto* body = static_cast<std::string*>(user);
    const std::size_t bytes = size * count;
    body->append(data, std::min(bytes, kMaxAnswerBytes - std::min(kMaxAnswerBytes, body->size())));
    return bytes;
}

std::size_t keep_server_header(char* data, std::size_t size, std::size_t count, void* user) {
    const std::string_view line(data, size * count);
    constexpr std::string_view kServer = "server:";
    if (line.size() > kServer.size() &&
        std::equal(kServer.begin(), kServer.end(), line.begin(),
                   [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); })) {
        std::string_view value = line.substr(kServer.size());
        while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
        while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) value.remove_suffix(1);
        *static_cast<std::string*>(user) = std::string(value);
    }
    return size * count;
}

}  // namespace

HttpAnswer http_get(const std::string& url, std::int64_t timeout_ns, const std::string& api_key) {
    detail::init_curl();
    HttpAnswer answer;
    const std::unique_ptr<CURL, void (*)(CURL*)> curl(curl_easy_init(), curl_easy_cleanup);
    if (!curl) {
        answer.error = "libcurl could not start a transfer";
        return answer;
    }
    std::unique_ptr<curl_slist, void (*)(curl_slist*)> headers(nullptr, curl_slist_free_all);
    if (!api_key.empty()) headers.reset(curl_slist_append(nullptr, ("Authorization: Bearer " + api_key).c_str()));
    char error_buffer[CURL_ERROR_SIZE] = {};
    detail::set_common_options(curl.get(), timeout_ns, timeout_ns, error_buffer);
    curl_easy_setopt(curl.get(), CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, keep_body);
    curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &answer.body);
    curl_easy_setopt(curl.get(), CURLOPT_HEADERFUNCTION, keep_server_header);
    curl_easy_setopt(curl.get(), CURLOPT_HEADERDATA, &answer.server);
    if (headers) curl_easy_setopt(curl.get(), CURLOPT_HTTPHEADER, headers.get());
    const CURLcode code = curl_easy_perform(curl.get());
    if (code != CURLE_OK) {
        answer.error = detail::failure_reason(curl.get(), code, error_buffer);
        return answer;
    }
    curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &answer.status);
    char* type = nullptr;
    if (curl_easy_getinfo(curl.get(), CURLINFO_CONTENT_TYPE, &type) == CURLE_OK && type) answer.content_type = type;
    return answer;
}

}  // namespace inferbench::serving
