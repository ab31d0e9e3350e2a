#include "serving/http_stream_client.hpp"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "core/clock.hpp"
#include "serving/curl_support.hpp"
#include "serving/openai_stream.hpp"
#include "serving/sse_parser.hpp"

namespace inferbench::serving {
namespace {

constexpr std::size_t kMaxJsonBody = SseParser::kDefaultMaxEventBytes;
constexpr std::size_t kKeptErrorBody = 4096;  // enough for a server's error message
constexpr std::size_t kShownBytes = 120;      // of what arrived instead of the API

// How a response's body is read, decided by its status and Content-Type when its first bytes arrive.
enum class BodyKind { unknown, events, json, error_body, other };

bool starts_with_nocase(std::string_view text, std::string_view prefix) {
    return text.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), text.begin(), [](char a, char b) {
               return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
           });
}

struct Transfer {
    CURL* easy = nullptr;
    std::string body;  // the POST body: curl reads it from here
    char error_buffer[CURL_ERROR_SIZE] = {};
    std::int64_t max_tokens = 0;
    ServedRequest request;
    BodyKind kind = BodyKind::unknown;
    std::string content_type;
    std::string kept;  // a JSON body, an error body's start, or what arrived instead of the API
    SseParser parser;
    ResponseAssembler assembler;
    std::vector<SseEvent> events;
    ServingApi api = ServingApi::completions;
    bool stopped = false;  // the write callback ended the transfer; request.outcome says why
};

void read_response_kind(Transfer& t) {
    long status = 0;
    curl_easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &status);
    t.request.http_status = status;
    const char* type = nullptr;
    curl_easy_getinfo(t.easy, CURLINFO_CONTENT_TYPE, &type);
    t.content_type = type != nullptr ? type : "";
    if (status == 0)
        t.kind = BodyKind::unknown;  // no answer at all
    else if (status != 200)
        t.kind = BodyKind::error_body;
    else if (starts_with_nocase(t.content_type, "text/event-stream"))
        t.kind = BodyKind::events;
    else if (starts_with_nocase(t.content_type, "application/json"))
        t.kind = BodyKind::json;
    else
        t.kind = BodyKind::other;
}

std::string other_api_message(const Transfer& t) {
    return fmt::format("HTTP 200 with Content-Type '{}', not text/event-stream (another API?): {}",
                       one_line(t.content_type, 80), one_line(t.kept, kShownBytes));
}

void stop(Transfer& t, RequestOutcome outcome, std::string message) {
    t.stopped = true;
    t.request.outcome = outcome;
    t.request.error = std::move(message);
}

// Returns false to end the transfer (curl then reports a write error).
bool take_bytes(Transfer& t, std::string_view bytes, std::int64_t now) {
    switch (t.kind) {
        case BodyKind::events:
            if (!t.parser.feed(bytes, t.events)) {
                stop(t, RequestOutcome::malformed, t.parser.error());
                return false;
            }
            for (const SseEvent& event : t.events) t.assembler.add_event(event.data, now, t.api, t.request);
            t.events.clear();
            // After an error event or one that is not the API nothing more is read: the outcome is known,
            // and a server may keep such a stream open.
            return !t.assembler.failed();
        case BodyKind::json:
            if (t.kept.size() + bytes.size() > kMaxJsonBody) {
                stop(t, RequestOutcome::malformed, fmt::format("a JSON body longer than {} bytes", kMaxJsonBody));
                return false;
            }
            t.kept.append(bytes);
            return true;
        case BodyKind::error_body:
            t.kept.append(bytes.substr(0, kKeptErrorBody - std::min(kKeptErrorBody, t.kept.size())));
            return true;
        case BodyKind::other:
            t.kept.append(bytes.substr(0, kShownBytes - std::min(kShownBytes, t.kept.size())));
            if (t.kept.size() < kShownBytes) return true;
            stop(t, RequestOutcome::malformed, other_api_message(t));
            return false;
        case BodyKind::unknown:
            break;
    }
    return true;
}

std::size_t on_write(char* data, std::size_t size, std::size_t count, void* user) {
    const std::int64_t now = monotonic_ns();  // once per read: the arrival of every event it completes
    Transfer& t = *static_cast<Transfer*>(user);
    const std::size_t bytes = size * count;
    t.request.end_ns = now;
    if (t.kind == BodyKind::unknown) read_response_kind(t);
    return take_bytes(t, std::string_view(data, bytes), now) ? bytes : 0;
}

std::string http_status_message(const Transfer& t) {
    const StreamEvent event = parse_response_body(t.kept, t.api);
    const std::string text = event.kind == StreamEvent::Kind::error ? event.message : one_line(t.kept);
    return fmt::format("HTTP {}{}{}", t.request.http_status, text.empty() ? "" : ": ", text);
}

}  // namespace

struct StreamClient::State {
    EndpointConfig config;
    std::string url;
    CURLM* multi = nullptr;
    curl_slist* headers = nullptr;
    std::unordered_map<CURL*, std::unique_ptr<Transfer>> transfers;
    std::vector<ServedRequest> ended;

    void finish(Transfer& t, CURLcode code);
    void finish_transport_error(Transfer& t, CURLcode code);
    void collect_done();
    void release(CURL* easy);
};

void StreamClient::State::finish_transport_error(Transfer& t, CURLcode code) {
    const std::string message = detail::curl_message(code, t.error_buffer);
    if (code == CURLE_OPERATION_TIMEDOUT) {
        // curl reports its connect timeout with the same code: a request never written had no connection.
        long request_bytes = 0;
        curl_easy_getinfo(t.easy, CURLINFO_REQUEST_SIZE, &request_bytes);
        if (request_bytes == 0) {
            t.request.outcome = RequestOutcome::connect_failed;
            t.request.error = fmt::format("cannot connect to {}: {}", url, message);
        } else {
            t.request.outcome = RequestOutcome::timeout;
            t.request.error = "no complete answer within the request timeout: " + message;
        }
    } else if (detail::is_connect_failure(code)) {
        t.request.outcome = RequestOutcome::connect_failed;
        t.request.error =
            fmt::format("cannot connect to {}: {}", url, detail::failure_reason(t.easy, code, t.error_buffer));
    } else {
        t.request.outcome = RequestOutcome::truncated;
        t.request.error = "the connection ended before the answer did: " + message;
    }
}

void StreamClient::State::finish(Transfer& t, CURLcode code) {
    const std::int64_t now = monotonic_ns();
    if (t.kind == BodyKind::unknown) read_response_kind(t);
    // What the answer already says stands whatever ends the transfer after it: a status other than 200, or a
    // stream ended by [DONE] or an error event (a server may keep the connection open past them).
    const bool answered = t.kind == BodyKind::error_body || (t.kind == BodyKind::events && t.assembler.ended());
    if (t.request.end_ns == 0 || (code != CURLE_OK && !answered)) t.request.end_ns = now;
    if (t.stopped) return;
    if (code != CURLE_OK && !answered) return finish_transport_error(t, code);
    switch (t.kind) {
        case BodyKind::error_body:
            t.request.outcome = RequestOutcome::http_status;
            t.request.error = http_status_message(t);
            return;
        case BodyKind::json:
            t.assembler.add_body(t.kept, t.request.end_ns, t.api, t.request);
            break;
        case BodyKind::other:
            t.request.outcome = RequestOutcome::malformed;
            t.request.error = other_api_message(t);
            return;
        case BodyKind::events:
        case BodyKind::unknown:
            break;
    }
    t.assembler.finish(config.ignore_eos, t.max_tokens, t.request);
}

void StreamClient::State::release(CURL* easy) {
    curl_multi_remove_handle(multi, easy);
    curl_easy_cleanup(easy);
}

void StreamClient::State::collect_done() {
    int left = 0;
    while (CURLMsg* message = curl_multi_info_read(multi, &left)) {
        if (message->msg != CURLMSG_DONE) continue;
        CURL* easy = message->easy_handle;
        const CURLcode code = message->data.result;  // read before the handle is removed
        const auto it = transfers.find(easy);
        if (it == transfers.end()) continue;
        finish(*it->second, code);
        it->second->request.error = detail::without_key(std::move(it->second->request.error), config.api_key);
        ended.push_back(std::move(it->second->request));
        transfers.erase(it);
        release(easy);
    }
}

StreamClient::StreamClient(EndpointConfig config, std::size_t max_connections) : state_(std::make_unique<State>()) {
    detail::init_curl();
    State& s = *state_;
    s.config = std::move(config);
    s.url = endpoint_url(s.config, api_path(s.config.api));
    s.multi = curl_multi_init();
    if (s.multi == nullptr) throw std::runtime_error("libcurl could not make a multi handle");
    const long connections = static_cast<long>(std::max<std::size_t>(max_connections, 1));
    curl_multi_setopt(s.multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, connections);
    curl_multi_setopt(s.multi, CURLMOPT_MAXCONNECTS, connections);  // every connection stays open for reuse
    s.headers = curl_slist_append(s.headers, "Content-Type: application/json");
    s.headers = curl_slist_append(s.headers, "Accept: text/event-stream");
    s.headers = curl_slist_append(s.headers, "Expect:");  // no 100-continue round trip before a long body
    if (!s.config.api_key.empty())
        s.headers = curl_slist_append(s.headers, ("Authorization: Bearer " + s.config.api_key).c_str());
}

StreamClient::~StreamClient() {
    for (auto& [easy, transfer] : state_->transfers) state_->release(easy);
    curl_multi_cleanup(state_->multi);
    curl_slist_free_all(state_->headers);
}

void StreamClient::send(const PlannedRequest& request, std::int64_t scheduled_ns, bool warmup) {
    State& s = *state_;
    auto t = std::make_unique<Transfer>();
    t->api = s.config.api;
    t->max_tokens = request.max_tokens;
    t->request.index = request.index;
    t->request.warmup = warmup;
    t->request.scheduled_ns = scheduled_ns;
    t->body = request_body(s.config, request);
    t->easy = curl_easy_init();
    if (t->easy == nullptr) throw std::runtime_error("libcurl could not make a request handle");
    CURL* easy = t->easy;
    detail::set_common_options(easy, s.config.connect_timeout_ns, s.config.request_timeout_ns, t->error_buffer);
    curl_easy_setopt(easy, CURLOPT_URL, s.url.c_str());
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, s.headers);
    curl_easy_setopt(easy, CURLOPT_POSTFIELDS, t->body.data());
    curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(t->body.size()));
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &on_write);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, t.get());
    t->request.sent_ns = monotonic_ns();
    curl_multi_add_handle(s.multi, easy);
    s.transfers.emplace(easy, std::move(t));
    int running = 0;
    curl_multi_perform(s.multi, &running);  // begins connecting (or writing on a kept connection) now
}

std::vector<ServedRequest> StreamClient::poll(std::int64_t wait_ns) {
    State& s = *state_;
    const std::int64_t deadline = monotonic_ns() + std::max<std::int64_t>(wait_ns, 0);
    for (;;) {
        int running = 0;
        curl_multi_perform(s.multi, &running);
        s.collect_done();
        const std::int64_t now = monotonic_ns();
        if (!s.ended.empty() || now >= deadline) break;
        // curl shortens the wait to its own next timer (a timeout, a connection's next step).
        curl_multi_poll(s.multi, nullptr, 0,
                        static_cast<int>(std::min<std::int64_t>((deadline - now) / 1'000'000, 1000)), nullptr);
    }
    return std::exchange(s.ended, {});
}

std::size_t StreamClient::in_flight() const { return state_->transfers.size(); }

void StreamClient::cancel_all() {
    State& s = *state_;
    s.collect_done();  // what already ended keeps its own outcome
    const std::int64_t now = monotonic_ns();
    for (auto& [easy, t] : s.transfers) {
        t->request.outcome = RequestOutcome::cancelled;
        t->request.error = "the benchmark stopped before the request ended";
        t->request.end_ns = now;
        s.ended.push_back(std::move(t->request));
        s.release(easy);
    }
    s.transfers.clear();
}

}  // namespace inferbench::serving
