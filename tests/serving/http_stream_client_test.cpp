#include "serving/http_stream_client.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <thread>
#include <tuple>

#include "common/local_http_server.hpp"
#include "core/clock.hpp"
#include "serving/openai_fixtures.hpp"

namespace inferbench::serving {
namespace {

using testing::HttpConnection;
using testing::HttpRequest;
using testing::LocalHttpServer;
using namespace std::chrono_literals;

constexpr std::int64_t kTestLimitNs = 20'000'000'000;  // every test's requests end well within this

EndpointConfig config_for(const std::string& url, ServingApi api = ServingApi::completions) {
    return {.base_url = url,
            .api = api,
            .model = "tiny-llama",
            .connect_timeout_ns = 2'000'000'000,
            .request_timeout_ns = 10'000'000'000};
}

PlannedRequest planned(std::int64_t index, std::int64_t max_tokens = 16) {
    PlannedRequest request;
    request.index = index;
    request.prompt_text = "The quick brown fox";
    request.input_tokens = 4;
    request.max_tokens = max_tokens;
    return request;
}

// Polls until `count` requests have ended (or the test's time limit has passed).
std::vector<ServedRequest> collect(StreamClient& client, std::size_t count) {
    std::vector<ServedRequest> ended;
    const std::int64_t deadline = monotonic_ns() + kTestLimitNs;
    while (ended.size() < count && monotonic_ns() < deadline)
        for (ServedRequest& request : client.poll(100'000'000)) ended.push_back(std::move(request));
    EXPECT_EQ(ended.size(), count);
    return ended;
}

ServedRequest one_request(const EndpointConfig& config, std::int64_t max_tokens = 16) {
    StreamClient client(config, 1);
    client.send(planned(3, max_tokens), 11, false);
    std::vector<ServedRequest> ended = collect(client, 1);
    return ended.empty() ? ServedRequest{} : ended.front();
}

// A server that writes a fixture's raw bytes and closes, as llama-server did.
LocalHttpServer fixture_server(const std::string& name) {
    return LocalHttpServer([bytes = testing::openai_fixture(name)](const HttpRequest&, const HttpConnection& c) {
        c.send(bytes);
        return false;
    });
}

void expect_times_in_order(const ServedRequest& request) {
    EXPECT_LE(request.sent_ns, request.end_ns);
    std::int64_t last = request.sent_ns;
    for (const ServedChunk& chunk : request.chunks) {
        EXPECT_LE(last, chunk.arrival_ns);
        last = chunk.arrival_ns;
    }
    EXPECT_LE(last, request.end_ns);
}

TEST(StreamClient, LlamaServerCompletionsStream) {
    LocalHttpServer server = fixture_server("completions-stream.http");
    const ServedRequest request = one_request(config_for(server.url()));
    EXPECT_EQ(request.outcome, RequestOutcome::ok) << request.error;
    EXPECT_EQ(request.index, 3);
    EXPECT_EQ(request.scheduled_ns, 11);
    EXPECT_EQ(request.http_status, 200);
    EXPECT_EQ(request.chunks.size(), 16u);
    EXPECT_EQ(request.output_tokens, 16);
    EXPECT_EQ(request.finish_reason, "length");
    EXPECT_DOUBLE_EQ(request.server_generation_ms, 2.595);
    expect_times_in_order(request);
}

TEST(StreamClient, LlamaServerChatStream) {
    LocalHttpServer server = fixture_server("chat-stream.http");
    const ServedRequest request = one_request(config_for(server.url(), ServingApi::chat));
    EXPECT_EQ(request.outcome, RequestOutcome::ok) << request.error;
    EXPECT_EQ(request.chunks.size(), 16u);
    EXPECT_EQ(request.input_tokens, 55);
}

TEST(StreamClient, LlamaServerErrorEventIsServerError) {
    LocalHttpServer server = fixture_server("completions-stream-invalid-utf8-error.http");
    const ServedRequest request = one_request(config_for(server.url()));
    EXPECT_EQ(request.outcome, RequestOutcome::server_error);
    EXPECT_EQ(request.error, "The model produced output that does not match the expected Content-only format");
    EXPECT_EQ(request.chunks.size(), 6u);
}

TEST(StreamClient, LlamaServerNonStreamedBody) {
    LocalHttpServer server = fixture_server("completions-nostream.http");
    const ServedRequest request = one_request(config_for(server.url()), 8);
    EXPECT_EQ(request.outcome, RequestOutcome::ok) << request.error;
    ASSERT_EQ(request.chunks.size(), 1u);
    EXPECT_EQ(request.chunks[0].tokens, 8);
    EXPECT_EQ(request.cached_tokens, 15);
}

TEST(StreamClient, FixturesSentAByteAtATimeGiveTheSameRequest) {
    // Every byte its own write: curl reads the chunked framing and the events in whatever pieces arrive.
    const std::tuple<const char*, ServingApi, std::int64_t> fixtures[] = {
        {"completions-stream.http", ServingApi::completions, 16},
        {"chat-stream.http", ServingApi::chat, 16},
        {"completions-stream-invalid-utf8-error.http", ServingApi::completions, 16},
        {"completions-nostream.http", ServingApi::completions, 8}};
    for (const auto& [name, api, max_tokens] : fixtures) {
        SCOPED_TRACE(name);
        const std::string bytes = testing::openai_fixture(name);
        LocalHttpServer server([&bytes](const HttpRequest&, const HttpConnection& c) {
            for (const char byte : bytes)
                if (!c.send(std::string_view(&byte, 1))) break;
            return false;
        });
        LocalHttpServer whole = fixture_server(name);
        ServedRequest split = one_request(config_for(server.url(), api), max_tokens);
        const ServedRequest at_once = one_request(config_for(whole.url(), api), max_tokens);
        EXPECT_EQ(split.outcome, at_once.outcome) << split.error;
        expect_times_in_order(split);
        ASSERT_EQ(split.chunks.size(), at_once.chunks.size());
        split.sent_ns = at_once.sent_ns;
        split.end_ns = at_once.end_ns;
        for (std::size_t i = 0; i < split.chunks.size(); ++i) split.chunks[i].arrival_ns = at_once.chunks[i].arrival_ns;
        EXPECT_EQ(split, at_once);
    }
}

TEST(StreamClient, SendsThePostBodyAndBearerOnlyWithAKey) {
    std::mutex mutex;
    std::vector<HttpRequest> seen;
    LocalHttpServer server([&](const HttpRequest& request, const HttpConnection& c) {
        {
            std::lock_guard lock(mutex);
            seen.push_back(request);
        }
        c.send(testing::openai_fixture("completions-stream.http"));
        return false;
    });
    EndpointConfig config = config_for(server.url() + "/v1");
    EXPECT_EQ(one_request(config).outcome, RequestOutcome::ok);
    config.api_key = "sk-test";
    EXPECT_EQ(one_request(config).outcome, RequestOutcome::ok);
    std::lock_guard lock(mutex);
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen[0].method, "POST");
    EXPECT_EQ(seen[0].path, "/v1/completions");
    EXPECT_EQ(seen[0].body, request_body(config, planned(3)));
    EXPECT_EQ(seen[0].headers.find("Authorization"), std::string::npos);
    EXPECT_NE(seen[1].headers.find("Authorization: Bearer sk-test\r\n"), std::string::npos);
}

TEST(StreamClient, HttpStatusKeepsTheServersMessage) {
    for (const int status : {429, 500, 503}) {
        LocalHttpServer server([status](const HttpRequest&, const HttpConnection& c) {
            c.send(testing::http_answer(status, "Busy", "application/json",
                                        R"({"error":{"code":)" + std::to_string(status) +
                                            R"(,"message":"server busy,\ntry later","type":"unavailable"}})"));
            return true;
        });
        const ServedRequest request = one_request(config_for(server.url()));
        EXPECT_EQ(request.outcome, RequestOutcome::http_status);
        EXPECT_EQ(request.http_status, status);
        EXPECT_EQ(request.error, "HTTP " + std::to_string(status) + ": server busy, try later");
    }
}

TEST(StreamClient, TheKeyNeverReachesAnErrorMessage) {
    LocalHttpServer server([](const HttpRequest& request, const HttpConnection& c) {
        const std::size_t at = request.headers.find("Authorization: ");
        c.send(testing::http_answer(401, "Unauthorized", "text/plain",
                                    "rejected " + request.headers.substr(at, request.headers.find("\r\n", at) - at)));
        return true;
    });
    EndpointConfig config = config_for(server.url());
    config.api_key = "sk-secret-1234";
    const ServedRequest request = one_request(config);
    EXPECT_EQ(request.outcome, RequestOutcome::http_status);
    EXPECT_EQ(request.error, "HTTP 401: rejected Authorization: Bearer ***");
}

TEST(StreamClient, HttpStatusWithALongPageIsOneShortLine) {
    LocalHttpServer server([](const HttpRequest&, const HttpConnection& c) {
        c.send(testing::http_answer(502, "Bad Gateway", "text/html", "<html>\n" + std::string(100000, 'x')));
        return true;
    });
    const ServedRequest request = one_request(config_for(server.url()));
    EXPECT_EQ(request.outcome, RequestOutcome::http_status);
    EXPECT_EQ(request.http_status, 502);
    EXPECT_EQ(request.error.find('\n'), std::string::npos);
    EXPECT_LE(request.error.size(), 320u);
    EXPECT_EQ(request.error.substr(0, 16), "HTTP 502: <html>");
}

TEST(StreamClient, WhatTheAnswerSaidStandsWhenTheServerHangsAfterIt) {
    LocalHttpServer server([](const HttpRequest& request, const HttpConnection& c) {
        if (request.body.find("\"max_tokens\":1,") != std::string::npos) {
            c.send(testing::event_stream_headers());
            c.send_chunk(R"(data: {"choices":[{"text":"x"}]})"
                         "\n\n");
            c.send_chunk(R"(data: {"error":{"code":500,"message":"out of memory"}})"
                         "\n\n");
        } else {  // a 503 whose body never ends
            c.send(
                "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\nloading");
        }
        c.wait_for_stop(10s);
        return false;
    });
    EndpointConfig config = config_for(server.url());
    config.request_timeout_ns = 1'000'000'000;
    const auto start = std::chrono::steady_clock::now();
    const ServedRequest error = one_request(config, 1);
    EXPECT_EQ(error.outcome, RequestOutcome::server_error) << error.error;
    EXPECT_EQ(error.error, "out of memory");
    EXPECT_EQ(error.chunks.size(), 1u);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 900ms);  // not held until the timeout
    const ServedRequest status = one_request(config, 2);
    EXPECT_EQ(status.outcome, RequestOutcome::http_status) << status.error;
    EXPECT_EQ(status.error, "HTTP 503: loading");
}

TEST(StreamClient, ServerDyingMidStreamIsTruncatedWithItsChunks) {
    const std::string body = testing::http_body(testing::openai_fixture("completions-stream.http"));
    LocalHttpServer server([&body](const HttpRequest&, const HttpConnection& c) {
        c.send(testing::event_stream_headers());
        std::size_t at = 0;
        for (int event = 0; event < 3; ++event) {  // three events, then the process is gone
            const std::size_t end = body.find("\n\n", at) + 2;
            c.send_chunk(std::string_view(body).substr(at, end - at));
            at = end;
        }
        return false;
    });
    const ServedRequest request = one_request(config_for(server.url()));
    EXPECT_EQ(request.outcome, RequestOutcome::truncated) << request.error;
    EXPECT_EQ(request.chunks.size(), 3u);
    expect_times_in_order(request);
}

TEST(StreamClient, AServerThatNeverAnswersTimesOut) {
    LocalHttpServer server([](const HttpRequest&, const HttpConnection& c) {
        c.wait_for_stop(10s);
        return false;
    });
    EndpointConfig config = config_for(server.url());
    config.request_timeout_ns = 1'000'000'000;
    const auto start = std::chrono::steady_clock::now();
    const ServedRequest request = one_request(config);
    EXPECT_EQ(request.outcome, RequestOutcome::timeout) << request.error;
    EXPECT_EQ(request.http_status, 0);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
    EXPECT_GE(request.end_ns - request.sent_ns, 900'000'000);
}

TEST(StreamClient, EmptyCompletionAndSeveralTokensInAChunk) {
    LocalHttpServer server([](const HttpRequest& request, const HttpConnection& c) {
        c.send(testing::event_stream_headers());
        if (request.body.find("\"max_tokens\":0") != std::string::npos) {
            c.send_chunk(
                R"(data: {"choices":[{"text":"","finish_reason":"length"}],"usage":{"prompt_tokens":4,"completion_tokens":0}})"
                "\n\n");
        } else {  // continuous usage: 3 tokens, then 2
            c.send_chunk(R"(data: {"choices":[{"text":"a b c"}],"usage":{"prompt_tokens":4,"completion_tokens":3}})"
                         "\n\n");
            c.send_chunk(
                R"(data: {"choices":[{"text":"d e","finish_reason":"length"}],"usage":{"prompt_tokens":4,"completion_tokens":5}})"
                "\n\n");
        }
        c.send_chunk("data: [DONE]\n\n");
        c.send_chunk("");
        return true;
    });
    const ServedRequest empty = one_request(config_for(server.url()), 0);
    EXPECT_EQ(empty.outcome, RequestOutcome::ok) << empty.error;
    EXPECT_TRUE(empty.chunks.empty());
    EXPECT_EQ(empty.output_tokens, 0);
    const ServedRequest several = one_request(config_for(server.url()), 5);
    EXPECT_EQ(several.outcome, RequestOutcome::ok) << several.error;
    ASSERT_EQ(several.chunks.size(), 2u);
    EXPECT_EQ(several.chunks[0].tokens, 3);
    EXPECT_EQ(several.chunks[1].tokens, 2);
    const ServedRequest fewer = one_request(config_for(server.url()), 16);  // ignore_eos: 5 is not 16
    EXPECT_EQ(fewer.outcome, RequestOutcome::wrong_token_count);
    EXPECT_EQ(fewer.chunks.size(), 2u);
}

TEST(StreamClient, AnotherApiIsMalformed) {
    LocalHttpServer html([](const HttpRequest&, const HttpConnection& c) {
        c.send(testing::http_answer(200, "OK", "text/html",
                                    "<!doctype html><title>Jupyter</title>" + std::string(5000, ' ')));
        return true;
    });
    ServedRequest request = one_request(config_for(html.url()));
    EXPECT_EQ(request.outcome, RequestOutcome::malformed);
    EXPECT_EQ(request.error.substr(0, 96),
              "HTTP 200 with Content-Type 'text/html', not text/event-stream (another API?): <!doctype html><ti");

    LocalHttpServer other_json([](const HttpRequest&, const HttpConnection& c) {
        c.send(testing::http_answer(200, "OK", "application/json", R"({"status":"ok","result":42})"));
        return true;
    });
    request = one_request(config_for(other_json.url()));
    EXPECT_EQ(request.outcome, RequestOutcome::malformed);
    EXPECT_EQ(request.error, R"(JSON without choices, usage or error (another API?): {"status":"ok","result":42})");

    LocalHttpServer other_events([](const HttpRequest&, const HttpConnection& c) {
        c.send(testing::event_stream_headers());
        c.send_chunk("event: ping\ndata: {\"time\": 1}\n\n");
        c.wait_for_stop(10s);  // the client stops reading at the first event that is not the API
        return false;
    });
    request = one_request(config_for(other_events.url()));
    EXPECT_EQ(request.outcome, RequestOutcome::malformed);
    EXPECT_EQ(request.error, R"(JSON without choices, usage or error (another API?): {"time": 1})");
}

TEST(StreamClient, UnreachableUrlIsConnectFailed) {
    const std::string url = "http://127.0.0.1:" + std::to_string(testing::closed_port());
    const ServedRequest request = one_request(config_for(url));
    EXPECT_EQ(request.outcome, RequestOutcome::connect_failed);
    EXPECT_EQ(request.error, "cannot connect to " + url + "/v1/completions: Connection refused");
    EXPECT_EQ(request.http_status, 0);
}

// Streams `events` token events, one write each, a little apart, then [DONE]; the connection stays open.
bool stream_tokens(const HttpConnection& c, int events, std::chrono::microseconds gap) {
    c.send(testing::event_stream_headers());
    for (int i = 0; i < events; ++i) {
        std::this_thread::sleep_for(gap);
        if (!c.send_chunk(R"(data: {"choices":[{"text":"x","finish_reason":null}]})"
                          "\n\n"))
            return false;
    }
    c.send_chunk(
        R"(data: {"choices":[{"text":"","finish_reason":"length"}],"usage":{"prompt_tokens":4,"completion_tokens":)" +
        std::to_string(events) + "}}\n\n");
    c.send_chunk("data: [DONE]\n\n");
    return c.send_chunk("");
}

TEST(StreamClient, ManyConcurrentStreamsReuseTheirConnections) {
    LocalHttpServer server([](const HttpRequest&, const HttpConnection& c) { return stream_tokens(c, 8, 200us); });
    StreamClient client(config_for(server.url()), 8);
    constexpr int kRequests = 48;
    for (int i = 0; i < kRequests; ++i) client.send(planned(i, 8), monotonic_ns(), i < 2);
    EXPECT_EQ(client.in_flight(), static_cast<std::size_t>(kRequests));
    std::vector<ServedRequest> ended = collect(client, kRequests);
    EXPECT_EQ(client.in_flight(), 0u);
    std::vector<bool> seen(kRequests);
    for (const ServedRequest& request : ended) {
        EXPECT_EQ(request.outcome, RequestOutcome::ok) << request.error;
        EXPECT_EQ(request.chunks.size(), 8u);
        EXPECT_EQ(request.warmup, request.index < 2);
        expect_times_in_order(request);
        seen.at(static_cast<std::size_t>(request.index)) = true;
    }
    EXPECT_EQ(std::count(seen.begin(), seen.end(), true), kRequests);
    EXPECT_LE(server.connections_accepted(), 8);  // at most max_connections, each reused
}

TEST(StreamClient, CancelAllEndsEveryTransferKeepingItsChunks) {
    LocalHttpServer server([](const HttpRequest&, const HttpConnection& c) {
        c.send(testing::event_stream_headers());
        c.send_chunk(R"(data: {"choices":[{"text":"x"}]})"
                     "\n\n");
        c.wait_for_stop(10s);
        return false;
    });
    StreamClient client(config_for(server.url()), 4);
    for (int i = 0; i < 3; ++i) client.send(planned(i), monotonic_ns(), false);
    // Until every request has its first chunk.
    const std::int64_t deadline = monotonic_ns() + kTestLimitNs;
    std::vector<ServedRequest> early;
    while (server.connections_accepted() < 3 && monotonic_ns() < deadline) {
        auto got = client.poll(10'000'000);
        early.insert(early.end(), got.begin(), got.end());
    }
    for (int i = 0; i < 20; ++i) client.poll(5'000'000);  // the first chunks arrive
    EXPECT_TRUE(early.empty());
    client.cancel_all();
    EXPECT_EQ(client.in_flight(), 0u);
    const std::vector<ServedRequest> ended = client.poll(0);
    ASSERT_EQ(ended.size(), 3u);
    for (const ServedRequest& request : ended) {
        EXPECT_EQ(request.outcome, RequestOutcome::cancelled);
        EXPECT_EQ(request.chunks.size(), 1u);
    }
}

}  // namespace
}  // namespace inferbench::serving
