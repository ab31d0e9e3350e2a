// The OpenAI API as llama.cpp's llama-server really speaks it (scripts/build-llama-server.sh, llama-tiny with
// random weights, one thread): streamed requests read with libcurl's easy interface and the serving module's
// event parser, each event checked against the server's own usage and timings; then the serving client
// (serving/http_stream_client) against the same server. Every request has a time limit and every loop a count.
#include <curl/curl.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/llama_server.hpp"
#include "core/clock.hpp"
#include "core/splitmix64.hpp"
#include "core/text_checks.hpp"
#include "serving/http_stream_client.hpp"
#include "serving/sse_parser.hpp"

namespace inferbench::serving {
namespace {

using nlohmann::json;
using testing::LlamaServer;
using testing::LlamaServerOptions;

constexpr long kRequestTimeoutMs = 20'000;
constexpr std::int64_t kCollectLimitNs = 30'000'000'000;

// A request's answer as it came: the HTTP status and the body's server-sent events, each with its arrival.
struct StreamedAnswer {
    long status = 0;
    std::string error;  // curl's reason when there was no answer
    std::vector<SseEvent> events;
    std::vector<std::int64_t> arrivals_ns;
    std::int64_t sent_ns = 0;
    std::int64_t end_ns = 0;
};

using EasyHandle = std::unique_ptr<CURL, decltype(&curl_easy_cleanup)>;
EasyHandle new_easy() { return {curl_easy_init(), curl_easy_cleanup}; }

// POSTs JSON `text` to `url` on `easy` (a handle reused keeps its connection), the body to `on_body(user)`,
// within kRequestTimeoutMs. Returns the HTTP status (0: no answer; `error` then says why).
long perform_post(CURL* easy, const std::string& url, const std::string& text, curl_write_callback on_body, void* user,
                  std::string& error) {
    const std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> headers(
        curl_slist_append(nullptr, "Content-Type: application/json"), curl_slist_free_all);
    curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(easy, CURLOPT_POSTFIELDS, text.c_str());
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, kRequestTimeoutMs);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, user);
    const CURLcode code = curl_easy_perform(easy);
    if (code != CURLE_OK) error = curl_easy_strerror(code);
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    return status;
}

struct Transfer {
    SseParser parser;
    StreamedAnswer answer;
};

std::size_t on_events(char* data, std::size_t size, std::size_t count, void* user) {
    auto& transfer = *static_cast<Transfer*>(user);
    if (!transfer.parser.feed(std::string_view(data, size * count), transfer.answer.events)) return 0;
    transfer.answer.arrivals_ns.resize(transfer.answer.events.size(), monotonic_ns());
    return size * count;
}

std::size_t on_text(char* data, std::size_t size, std::size_t count, void* user) {
    static_cast<std::string*>(user)->append(data, size * count);
    return size * count;
}

// POSTs `body` to `url` and reads the answer's events to its end.
StreamedAnswer post_streamed(const std::string& url, const json& body) {
    const EasyHandle easy = new_easy();
    Transfer transfer;
    transfer.answer.sent_ns = monotonic_ns();
    transfer.answer.status = perform_post(easy.get(), url, body.dump(), on_events, &transfer, transfer.answer.error);
    transfer.answer.end_ns = monotonic_ns();
    return std::move(transfer.answer);
}

json streamed_request(std::int64_t max_tokens) {
    return {{"model", "llama-tiny"}, {"stream", true},           {"ignore_eos", true},
            {"temperature", 0},      {"max_tokens", max_tokens}, {"stream_options", {{"include_usage", true}}}};
}

// `length` seeded token ids of llama-tiny's text pieces: one token each, whatever the tokenizer would make of text.
std::vector<std::int64_t> token_prompt(std::int64_t length, std::uint64_t seed) {
    SplitMix64 random(seed);
    const auto pieces = static_cast<std::uint64_t>(LlamaServer::tiny_shape().vocab - testing::kFirstTextToken);
    std::vector<std::int64_t> ids;
    for (std::int64_t i = 0; i < length; ++i)
        ids.push_back(testing::kFirstTextToken + static_cast<std::int64_t>(random.next() % pieces));
    return ids;
}

// The events' JSON before the closing [DONE], which must be the last event.
std::vector<json> event_json(const StreamedAnswer& answer) {
    std::vector<json> out;
    EXPECT_FALSE(answer.events.empty());
    if (answer.events.empty()) return out;
    EXPECT_EQ(answer.events.back().data, "[DONE]");
    for (std::size_t i = 0; i + 1 < answer.events.size(); ++i) out.push_back(json::parse(answer.events[i].data));
    return out;
}

// The streamed text of one event that carries a token (completions: choices[0].text; chat: delta.content), or
// nothing for the events around them (chat's role event, the finish event, the usage event).
std::optional<std::string> token_text(const json& event, bool chat) {
    if (!event.contains("choices") || event["choices"].empty()) return std::nullopt;
    const json& choice = event["choices"][0];
    if (!choice["finish_reason"].is_null()) return std::nullopt;
    const json& text = chat ? choice["delta"].value("content", json()) : choice["text"];
    if (!text.is_string()) return std::nullopt;
    return text.get<std::string>();
}

// One token per event, valid text each, then usage and timings that say as much.
void expect_one_event_per_token(const StreamedAnswer& answer, bool chat, std::int64_t max_tokens,
                                std::int64_t prompt_tokens) {
    ASSERT_EQ(answer.status, 200) << answer.error;
    const std::vector<json> events = event_json(answer);
    ASSERT_FALSE(events.empty());
    std::int64_t tokens = 0;
    for (const json& event : events) {
        ASSERT_FALSE(event.contains("error")) << event.dump();
        if (const auto text = token_text(event, chat)) {
            ++tokens;
            EXPECT_FALSE(text->empty()) << event.dump();
            EXPECT_FALSE(utf8_problem(*text)) << event.dump();
        }
    }
    EXPECT_EQ(tokens, max_tokens);
    const json& last = events.back();
    ASSERT_TRUE(last.contains("usage")) << last.dump();
    EXPECT_EQ(last["usage"]["completion_tokens"], max_tokens);
    if (prompt_tokens >= 0) {
        EXPECT_EQ(last["usage"]["prompt_tokens"], prompt_tokens);
    }
    EXPECT_GT(last["usage"]["prompt_tokens"].get<std::int64_t>(), 0);
    ASSERT_TRUE(last.contains("timings")) << last.dump();
    EXPECT_EQ(last["timings"]["predicted_n"], max_tokens);
    EXPECT_GT(last["timings"]["predicted_ms"].get<double>(), 0.0);
    EXPECT_GE(last["timings"]["prompt_ms"].get<double>(), 0.0);
}

class LlamaServerTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        if (testing::llama_server_missing()) return;
        curl_global_init(CURL_GLOBAL_DEFAULT);
        server_ = new LlamaServer(LlamaServerOptions{.parallel = 4});
    }
    static void TearDownTestSuite() {
        delete server_;
        server_ = nullptr;
    }
    void SetUp() override { INFERBENCH_REQUIRE_LLAMA_SERVER(); }
    static const std::string& url() { return server_->base_url(); }

    static LlamaServer* server_;
};
LlamaServer* LlamaServerTest::server_ = nullptr;

TEST_F(LlamaServerTest, CompletionsStreamOneEventPerTokenWithUsageAndTimings) {
    json body = streamed_request(16);
    body["prompt"] = token_prompt(12, 1);
    expect_one_event_per_token(post_streamed(url() + "/v1/completions", body), false, 16, 12);
}

TEST_F(LlamaServerTest, ChatCompletionsStreamOneEventPerTokenWithUsageAndTimings) {
    json body = streamed_request(16);
    body["messages"] = json::array({{{"role", "user"}, {"content", "Say something, tiny model."}}});
    expect_one_event_per_token(post_streamed(url() + "/v1/chat/completions", body), true, 16, -1);
}

TEST_F(LlamaServerTest, TextPromptsGiveValidTextToo) {
    // Text falls back to byte pieces (ü is two of them); the answer must still be valid UTF-8, event by event.
    json body = streamed_request(24);
    body["prompt"] = "Grüße aus dem Testlauf";
    expect_one_event_per_token(post_streamed(url() + "/v1/completions", body), false, 24, -1);
}

TEST_F(LlamaServerTest, TokenIdPromptsAreTakenAsTheyAreAtEveryLength) {
    for (const std::int64_t length : {1, 7, 64, 300}) {
        json body = streamed_request(4);
        body["prompt"] = token_prompt(length, static_cast<std::uint64_t>(length));
        SCOPED_TRACE(length);
        expect_one_event_per_token(post_streamed(url() + "/v1/completions", body), false, 4, length);
    }
}

TEST_F(LlamaServerTest, EveryTokenButTheEndOfTextReadsAsNonEmptyText) {
    // What a random model may emit, token by token as the server renders it (models/gguf_writer's vocabulary):
    // never empty (a chat stream would send no event for it), never a byte that is no UTF-8 (HTTP 500).
    const EasyHandle easy = new_easy();
    const std::int64_t vocab = LlamaServer::tiny_shape().vocab;
    const std::int64_t deadline = monotonic_ns() + kCollectLimitNs;
    std::int64_t checked = 0;
    for (std::int64_t id = 0; id < vocab && monotonic_ns() < deadline; ++id) {
        if (id == 2) continue;  // </s>: ignore_eos keeps it from being sampled
        ++checked;
        std::string answer, error;
        const json body = {{"tokens", {id}}};
        ASSERT_EQ(perform_post(easy.get(), url() + "/detokenize", body.dump(), on_text, &answer, error), 200) << error;
        const std::string piece = json::parse(answer).at("content").get<std::string>();
        ASSERT_FALSE(piece.empty()) << "token " << id;
        ASSERT_FALSE(utf8_problem(piece)) << "token " << id << ": " << *utf8_problem(piece);
    }
    EXPECT_EQ(checked, vocab - 1);
}

TEST_F(LlamaServerTest, ParallelSlotsDecodeRequestsTogether) {
    // As many requests as slots, sent at once: all in flight together, each with every token.
    constexpr std::int64_t kRequests = 4, kTokens = 96;
    std::vector<StreamedAnswer> answers(kRequests);
    std::vector<std::thread> threads;
    for (std::int64_t i = 0; i < kRequests; ++i)
        threads.emplace_back([&, i] {
            json body = streamed_request(kTokens);
            body["prompt"] = token_prompt(16, static_cast<std::uint64_t>(100 + i));
            answers[static_cast<std::size_t>(i)] = post_streamed(url() + "/v1/completions", body);
        });
    for (std::thread& thread : threads) thread.join();
    std::int64_t last_first_token = 0, first_end = INT64_MAX;
    for (const StreamedAnswer& answer : answers) {
        expect_one_event_per_token(answer, false, kTokens, 16);
        if (answer.arrivals_ns.empty()) continue;
        last_first_token = std::max(last_first_token, answer.arrivals_ns.front());
        first_end = std::min(first_end, answer.end_ns);
    }
    // Every request had its first token before any request ended: the slots decoded them side by side.
    EXPECT_LT(last_first_token, first_end);
}

// --- the serving client against the real server ---

PlannedRequest planned_tokens(std::int64_t index, std::int64_t input, std::int64_t output) {
    PlannedRequest request;
    request.index = index;
    request.prompt_token_ids = token_prompt(input, static_cast<std::uint64_t>(1000 + index));
    request.input_tokens = input;
    request.max_tokens = output;
    return request;
}

PlannedRequest planned_chat(std::int64_t index, std::int64_t output) {
    PlannedRequest request;
    request.index = index;
    request.messages = {{"user", "Request " + std::to_string(index) + ": say something, tiny model."}};
    request.max_tokens = output;
    return request;
}

// Sends `requests` with at most `concurrency` in flight (a closed loop), within kCollectLimitNs; returns them as
// they ended.
std::vector<ServedRequest> serve(StreamClient& client, const std::vector<PlannedRequest>& requests,
                                 std::size_t concurrency) {
    std::vector<ServedRequest> ended;
    std::size_t next = 0;
    const std::int64_t deadline = monotonic_ns() + kCollectLimitNs;
    while (ended.size() < requests.size() && monotonic_ns() < deadline) {
        while (next < requests.size() && client.in_flight() < concurrency)
            client.send(requests[next++], monotonic_ns(), false);
        for (ServedRequest& request : client.poll(50'000'000)) ended.push_back(std::move(request));
    }
    client.cancel_all();
    EXPECT_EQ(ended.size(), requests.size())
        << "requests still in flight after " << kCollectLimitNs / 1'000'000'000 << " s";
    return ended;
}

EndpointConfig endpoint(const std::string& url, ServingApi api) {
    return {.base_url = url,
            .api = api,
            .model = "llama-tiny",
            .connect_timeout_ns = 5'000'000'000,
            .request_timeout_ns = 20'000'000'000};
}

// What the client measured agrees with what the server says it did.
void expect_client_agrees_with_server(const ServedRequest& request, std::int64_t output) {
    SCOPED_TRACE("request " + std::to_string(request.index));
    ASSERT_EQ(request.outcome, RequestOutcome::ok) << request.error;
    EXPECT_EQ(request.output_tokens, output);
    ASSERT_EQ(static_cast<std::int64_t>(request.chunks.size()), request.output_tokens);
    for (const ServedChunk& chunk : request.chunks) EXPECT_EQ(chunk.tokens, 1);
    const std::int64_t ttft_ns = request.chunks.front().arrival_ns - request.sent_ns;
    const std::int64_t e2e_ns = request.end_ns - request.sent_ns;
    EXPECT_GT(ttft_ns, 0);
    EXPECT_LT(ttft_ns, e2e_ns);
    // The server times its generation from its first sampled token to its last; the client sees the same tokens
    // arrive between its first and last chunk. They differ by the HTTP path and the scheduling of a busy machine:
    // within half the server's figure, or 50 ms.
    ASSERT_GT(request.server_generation_ms, 0.0);
    const double client_decode_ms =
        static_cast<double>(request.chunks.back().arrival_ns - request.chunks.front().arrival_ns) / 1e6;
    EXPECT_NEAR(client_decode_ms, request.server_generation_ms, std::max(0.5 * request.server_generation_ms, 50.0))
        << "client " << client_decode_ms << " ms, server " << request.server_generation_ms << " ms";
}

TEST_F(LlamaServerTest, StreamClientCountsWhatTheServerReportsOnCompletions) {
    constexpr std::int64_t kInput = 16, kOutput = 32;
    StreamClient client(endpoint(url(), ServingApi::completions), 4);
    std::vector<PlannedRequest> requests;
    for (std::int64_t i = 0; i < 8; ++i) requests.push_back(planned_tokens(i, kInput, kOutput));
    for (const ServedRequest& request : serve(client, requests, 4)) {
        expect_client_agrees_with_server(request, kOutput);
        EXPECT_EQ(request.input_tokens, kInput);
        EXPECT_EQ(request.finish_reason, "length");
    }
}

TEST_F(LlamaServerTest, StreamClientCountsWhatTheServerReportsOnChat) {
    constexpr std::int64_t kOutput = 24;
    StreamClient client(endpoint(url(), ServingApi::chat), 4);
    std::vector<PlannedRequest> requests;
    for (std::int64_t i = 0; i < 4; ++i) requests.push_back(planned_chat(i, kOutput));
    for (const ServedRequest& request : serve(client, requests, 4)) {
        expect_client_agrees_with_server(request, kOutput);
        EXPECT_GT(request.input_tokens, 0);
    }
}

// Output tokens per second of the whole server: all requests' tokens over the time from the first send to the
// last end.
double output_tokens_per_s(const std::vector<ServedRequest>& served) {
    std::int64_t tokens = 0, first = INT64_MAX, last = 0;
    for (const ServedRequest& request : served) {
        tokens += request.output_tokens;
        first = std::min(first, request.sent_ns);
        last = std::max(last, request.end_ns);
    }
    return last > first ? static_cast<double>(tokens) * 1e9 / static_cast<double>(last - first) : 0.0;
}

TEST(LlamaServerThroughput, OneThreadAtOneAndFourSlots) {
    // The figure the client's own ceiling (bench/openai_client_ceiling) must exceed tenfold: what llama-server
    // produces here with llama-tiny on one thread, slots all busy (a closed loop as deep as the slots).
    INFERBENCH_REQUIRE_LLAMA_SERVER();
    constexpr std::int64_t kRequests = 12, kInput = 32, kOutput = 64;
    for (const std::int64_t slots : {1, 4}) {
        const LlamaServer server(LlamaServerOptions{.parallel = slots});
        StreamClient client(endpoint(server.base_url(), ServingApi::completions), static_cast<std::size_t>(slots));
        std::vector<PlannedRequest> requests;
        for (std::int64_t i = 0; i < kRequests; ++i) requests.push_back(planned_tokens(i, kInput, kOutput));
        const std::vector<ServedRequest> served = serve(client, requests, static_cast<std::size_t>(slots));
        for (const ServedRequest& request : served) ASSERT_EQ(request.outcome, RequestOutcome::ok) << request.error;
        const double rate = output_tokens_per_s(served);
        EXPECT_GT(rate, 0.0);
        // The server's own view: each request's tokens over its generation time (timings.predicted_ms), all
        // requests together; what the slots decode while they decode, without prefill, HTTP or gaps.
        double generation_ms = 0;
        for (const ServedRequest& request : served) generation_ms += request.server_generation_ms;
        const double per_request = static_cast<double>(kRequests * kOutput) * 1e3 / generation_ms;
        std::printf(
            "llama-server, llama-tiny fp32, 1 thread, %lld slot(s): %.0f output tokens/s (%lld requests of "
            "%lld in, %lld out; the server's own decode rate per request %.0f tokens/s)\n",
            static_cast<long long>(slots), rate, static_cast<long long>(kRequests), static_cast<long long>(kInput),
            static_cast<long long>(kOutput), per_request);
        ::testing::Test::RecordProperty("output_tokens_per_s_" + std::to_string(slots) + "_slots",
                                        std::to_string(static_cast<long long>(rate)));
    }
}

TEST(LlamaServerStart, AModelItCannotLoadIsOneErrorWithTheServersOwnWords) {
    INFERBENCH_REQUIRE_LLAMA_SERVER();
    const testing::ScratchDir scratch;
    scratch.write("broken.gguf", "not a GGUF file");
    const std::string port = std::to_string(free_local_port());
    const std::string command =
        fill_command(testing::llama_server_command(1, 256, "broken"),
                     {{"model", scratch.file("broken.gguf")}, {"host", "127.0.0.1"}, {"port", port}});
    ServerProcess process(command, scratch.path() / "server.log");
    const std::int64_t started = monotonic_ns();
    try {
        process.wait_ready("http://127.0.0.1:" + port + "/health", 30'000'000'000);
        FAIL() << "a server without a model answered";
    } catch (const UserError& error) {
        EXPECT_NE(std::string(error.what()).find("ended"), std::string::npos) << error.what();
        EXPECT_NE(std::string(error.what()).find("model"), std::string::npos) << error.what();
    }
    EXPECT_LT(monotonic_ns() - started, 30'000'000'000);
}

}  // namespace
}  // namespace inferbench::serving
