#include "serving/openai_stream.hpp"

#include <gtest/gtest.h>

#include <random>

#include "serving/openai_fixtures.hpp"
#include "serving/sse_parser.hpp"

namespace inferbench::serving {
namespace {

// A body fed in pieces cut at `cuts`; every piece's events arrive at the piece's number.
ServedRequest assemble_pieces(std::string_view body, ServingApi api, const std::vector<std::size_t>& cuts,
                              std::int64_t max_tokens = 16) {
    SseParser parser;
    ResponseAssembler assembler;
    ServedRequest request;
    std::vector<SseEvent> events;
    std::size_t from = 0;
    std::int64_t piece = 0;
    auto feed = [&](std::string_view bytes) {
        EXPECT_TRUE(parser.feed(bytes, events));
        for (const SseEvent& event : events) assembler.add_event(event.data, piece, api, request);
        events.clear();
        ++piece;
    };
    for (const std::size_t cut : cuts) {
        feed(body.substr(from, cut - from));
        from = cut;
    }
    feed(body.substr(from));
    assembler.finish(true, max_tokens, request);
    return request;
}

ServedRequest assemble(std::string_view body, ServingApi api, std::int64_t max_tokens = 16) {
    return assemble_pieces(body, api, {}, max_tokens);
}

std::string fixture_body(const char* name) { return testing::http_body(testing::openai_fixture(name)); }

// The chunks' times and token counts without the times.
std::int64_t total_tokens(const ServedRequest& request) {
    std::int64_t total = 0;
    for (const ServedChunk& chunk : request.chunks) total += chunk.tokens;
    return total;
}

TEST(OpenAiStream, LlamaServerCompletionsStream) {
    const ServedRequest request = assemble(fixture_body("completions-stream.http"), ServingApi::completions);
    EXPECT_EQ(request.outcome, RequestOutcome::ok) << request.error;
    ASSERT_EQ(request.chunks.size(), 16u);  // the final event has no text: not a token
    EXPECT_EQ(total_tokens(request), 16);
    EXPECT_EQ(request.finish_reason, "length");
    EXPECT_EQ(request.input_tokens, 16);
    EXPECT_EQ(request.output_tokens, 16);
    EXPECT_EQ(request.cached_tokens, 0);
    EXPECT_DOUBLE_EQ(request.server_prompt_ms, 0.845);
    EXPECT_DOUBLE_EQ(request.server_generation_ms, 2.595);
}

TEST(OpenAiStream, LlamaServerChatStreamRoleDeltaIsNoToken) {
    const ServedRequest request = assemble(fixture_body("chat-stream.http"), ServingApi::chat);
    EXPECT_EQ(request.outcome, RequestOutcome::ok) << request.error;
    EXPECT_EQ(request.chunks.size(), 16u);
    EXPECT_EQ(total_tokens(request), 16);
    EXPECT_EQ(request.finish_reason, "length");
    EXPECT_EQ(request.input_tokens, 55);
    EXPECT_EQ(request.output_tokens, 16);
    EXPECT_DOUBLE_EQ(request.server_prompt_ms, 1.901);
    EXPECT_DOUBLE_EQ(request.server_generation_ms, 2.674);
}

TEST(OpenAiStream, ErrorEventMidStreamIsServerErrorKeepingItsChunks) {
    const ServedRequest request =
        assemble(fixture_body("completions-stream-invalid-utf8-error.http"), ServingApi::completions);
    EXPECT_EQ(request.outcome, RequestOutcome::server_error);
    EXPECT_EQ(request.error, "The model produced output that does not match the expected Content-only format");
    EXPECT_EQ(request.chunks.size(), 6u);
}

TEST(OpenAiStream, FixturesGiveTheSameRequestWhereverTheyAreCut) {
    const std::pair<const char*, ServingApi> fixtures[] = {
        {"completions-stream.http", ServingApi::completions},
        {"chat-stream.http", ServingApi::chat},
        {"completions-stream-invalid-utf8-error.http", ServingApi::completions}};
    for (const auto& [name, api] : fixtures) {
        SCOPED_TRACE(name);
        const std::string body = fixture_body(name);
        ServedRequest whole = assemble(body, api);
        for (std::size_t cut = 0; cut <= body.size(); ++cut) {
            ServedRequest split = assemble_pieces(body, api, {cut});
            ASSERT_EQ(split.chunks.size(), whole.chunks.size());
            for (std::size_t i = 0; i < split.chunks.size(); ++i) {
                // Only the piece that completed an event gives its time: 0 before the cut, 1 after.
                ASSERT_EQ(split.chunks[i].arrival_ns, split.chunks[i].arrival_ns == 0 ? 0 : 1);
                split.chunks[i].arrival_ns = whole.chunks[i].arrival_ns;
            }
            ASSERT_EQ(split, whole) << cut;
        }
        std::mt19937_64 random(35);
        for (int round = 0; round < 100; ++round) {
            std::vector<std::size_t> cuts(1 + random() % 30);
            for (std::size_t& cut : cuts) cut = random() % (body.size() + 1);
            std::sort(cuts.begin(), cuts.end());
            ServedRequest split = assemble_pieces(body, api, cuts);
            for (std::size_t i = 1; i < split.chunks.size(); ++i)
                ASSERT_LE(split.chunks[i - 1].arrival_ns, split.chunks[i].arrival_ns);
            for (std::size_t i = 0; i < split.chunks.size() && i < whole.chunks.size(); ++i)
                split.chunks[i].arrival_ns = whole.chunks[i].arrival_ns;
            ASSERT_EQ(split, whole) << round;
        }
    }
}

TEST(OpenAiStream, NonStreamedBody) {
    const std::string body = fixture_body("completions-nostream.http");
    ResponseAssembler assembler;
    ServedRequest request;
    assembler.add_body(body, 42, ServingApi::completions, request);
    assembler.finish(true, 8, request);
    EXPECT_EQ(request.outcome, RequestOutcome::ok) << request.error;
    EXPECT_EQ(request.chunks, (std::vector<ServedChunk>{{.arrival_ns = 42, .tokens = 8}}));
    EXPECT_EQ(request.input_tokens, 16);
    EXPECT_EQ(request.output_tokens, 8);
    EXPECT_EQ(request.cached_tokens, 15);
    EXPECT_EQ(request.finish_reason, "length");
    EXPECT_DOUBLE_EQ(request.server_prompt_ms, 0.354);
    EXPECT_DOUBLE_EQ(request.server_generation_ms, 0.897);
    EXPECT_EQ(parse_response_body(body, ServingApi::completions).text, "0 bd bga av ch<0xCF>H");
}

TEST(OpenAiStream, ChatBodyTextIsTheMessage) {
    const StreamEvent event = parse_response_body(
        R"({"choices":[{"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]})", ServingApi::chat);
    EXPECT_EQ(event.kind, StreamEvent::Kind::data);
    EXPECT_EQ(event.text, "hi");
    EXPECT_EQ(event.finish_reason, "stop");
}

TEST(OpenAiStream, ContinuousUsageCountsEachChunksTokens) {
    // vLLM with stream_options.continuous_usage_stats: every chunk carries the usage so far.
    const std::string body =
        "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}],"
        "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":0}}\n\n"
        "data: {\"choices\":[{\"delta\":{\"content\":\"a b "
        "c\"}}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":3}}\n\n"
        "data: "
        "{\"choices\":[{\"delta\":{\"content\":\"d\"}}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":4}}\n\n"
        "data: {\"choices\":[{\"delta\":{\"content\":\"\"},\"finish_reason\":\"length\"}],"
        "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":4}}\n\n"
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":4}}\n\n"
        "data: [DONE]\n\n";
    const ServedRequest request = assemble(body, ServingApi::chat, 4);
    EXPECT_EQ(request.outcome, RequestOutcome::ok) << request.error;
    ASSERT_EQ(request.chunks.size(), 2u);
    EXPECT_EQ(request.chunks[0].tokens, 3);
    EXPECT_EQ(request.chunks[1].tokens, 1);
    EXPECT_EQ(request.output_tokens, 4);
}

TEST(OpenAiStream, EmptyCompletionHasNoChunks) {
    const std::string body =
        "data: {\"choices\":[{\"text\":\"\",\"finish_reason\":\"stop\"}],"
        "\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":0}}\n\ndata: [DONE]\n\n";
    ServedRequest request = assemble(body, ServingApi::completions, 0);
    EXPECT_EQ(request.outcome, RequestOutcome::ok);
    EXPECT_TRUE(request.chunks.empty());
    EXPECT_EQ(request.output_tokens, 0);
    EXPECT_EQ(request.finish_reason, "stop");
    // The same with ignore_eos and 16 asked for: the server stopped early.
    request = assemble(body, ServingApi::completions, 16);
    EXPECT_EQ(request.outcome, RequestOutcome::wrong_token_count);
    EXPECT_EQ(request.error, "the server's usage says 0 output tokens, 16 were asked for with ignore_eos");
}

TEST(OpenAiStream, WithoutDoneTheStreamIsTruncated) {
    const std::string body = fixture_body("completions-stream.http");
    const std::string cut = body.substr(0, body.find("data: [DONE]"));
    const ServedRequest request = assemble(cut, ServingApi::completions);
    EXPECT_EQ(request.outcome, RequestOutcome::truncated);
    EXPECT_EQ(request.chunks.size(), 16u);  // kept with their times
    EXPECT_EQ(request.output_tokens, 16);
}

TEST(OpenAiStream, MalformedEvents) {
    const std::pair<const char*, const char*> cases[] = {
        {"data: <html>oops</html>\n\n", "not JSON: <html>oops</html>"},
        {"data: {\"object\":\"list\",\"data\":[]}\n\n",
         "JSON without choices, usage or error (another API?): {\"object\":\"list\",\"data\":[]}"},
        {"data: [1,2]\n\n", "JSON that is not an object: [1,2]"},
    };
    for (const auto& [body, message] : cases) {
        const ServedRequest request = assemble(std::string(body) + "data: [DONE]\n\n", ServingApi::completions);
        EXPECT_EQ(request.outcome, RequestOutcome::malformed) << body;
        EXPECT_EQ(request.error, message);
    }
}

TEST(OpenAiStream, ErrorEventWithoutMessageObject) {
    const StreamEvent event = parse_stream_event(R"({"error":"overloaded"})", ServingApi::completions);
    EXPECT_EQ(event.kind, StreamEvent::Kind::error);
    EXPECT_EQ(event.message, "overloaded");
}

TEST(OpenAiStream, OneLine) {
    EXPECT_EQ(one_line("a\nb\r\n\tc  "), "a b c");
    EXPECT_EQ(one_line(std::string(400, 'x')), std::string(300, 'x') + "...");
    // Cut on a character boundary: "é" is two bytes.
    std::string accents;
    for (int i = 0; i < 200; ++i) accents += "\xC3\xA9";
    const std::string cut = one_line(accents, 5);
    EXPECT_EQ(cut, "\xC3\xA9\xC3\xA9...");
}

}  // namespace
}  // namespace inferbench::serving
