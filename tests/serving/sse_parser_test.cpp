#include "serving/sse_parser.hpp"

#include <gtest/gtest.h>

#include <random>

#include "serving/openai_fixtures.hpp"

namespace inferbench::serving {
namespace {

std::vector<SseEvent> parse_whole(std::string_view bytes) {
    SseParser parser;
    std::vector<SseEvent> events;
    EXPECT_TRUE(parser.feed(bytes, events));
    return events;
}

std::vector<SseEvent> parse_split(std::string_view bytes, const std::vector<std::size_t>& cuts) {
    SseParser parser;
    std::vector<SseEvent> events;
    std::size_t from = 0;
    for (const std::size_t cut : cuts) {
        EXPECT_TRUE(parser.feed(bytes.substr(from, cut - from), events));
        from = cut;
    }
    EXPECT_TRUE(parser.feed(bytes.substr(from), events));
    return events;
}

TEST(SseParser, LinesEndWithLfCrLfOrCr) {
    const std::vector<SseEvent> expected = {{"", "a"}, {"", "b"}, {"", "c"}};
    EXPECT_EQ(parse_whole("data: a\n\ndata: b\r\n\r\ndata: c\r\r"), expected);
}

TEST(SseParser, DataLinesJoinedCommentsAndOtherFieldsIgnored) {
    const auto events = parse_whole(": keep-alive\nid: 7\nretry: 10\nevent: update\ndata: one\ndata:two\ndata\n\n");
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].event, "update");
    EXPECT_EQ(events[0].data, "one\ntwo\n");  // one space after the colon is dropped; a bare "data" is empty
}

TEST(SseParser, BlankLinesWithoutDataMakeNoEvent) {
    EXPECT_TRUE(parse_whole("\n\n: comment\n\n\r\n").empty());
    EXPECT_EQ(parse_whole("data:\n\n"), (std::vector<SseEvent>{{"", ""}}));  // an empty data line is an event
}

TEST(SseParser, AnUnendedEventIsHeldBack) {
    SseParser parser;
    std::vector<SseEvent> events;
    ASSERT_TRUE(parser.feed("data: {\"a\":1}\n", events));
    EXPECT_TRUE(events.empty());
    EXPECT_TRUE(parser.has_partial_event());
    ASSERT_TRUE(parser.feed("\n", events));
    EXPECT_EQ(events, (std::vector<SseEvent>{{"", "{\"a\":1}"}}));
    EXPECT_FALSE(parser.has_partial_event());
}

TEST(SseParser, CrLfSplitBetweenPiecesEndsOneLine) {
    // The CR ends the line; an LF in the next piece belongs to it, not a blank line ending the event.
    EXPECT_EQ(parse_split("data: a\r\ndata: b\r\n\r\n", {8}), (std::vector<SseEvent>{{"", "a\nb"}}));
    EXPECT_EQ(parse_split("data: a\r\n\r\n", {8, 9, 10}), (std::vector<SseEvent>{{"", "a"}}));
}

TEST(SseParser, AnEventOverTheLimitIsAnError) {
    SseParser parser(64);
    std::vector<SseEvent> events;
    ASSERT_TRUE(parser.feed("data: small\n\n", events));
    EXPECT_EQ(events.size(), 1u);
    const std::string endless(40, 'x');
    EXPECT_TRUE(parser.feed("data: " + endless, events));
    EXPECT_FALSE(parser.feed(endless, events));  // a line that never ends
    EXPECT_NE(parser.error().find("longer than 64 bytes"), std::string::npos);
    EXPECT_FALSE(parser.feed("\n\n", events));  // nothing more is taken
    EXPECT_EQ(events.size(), 1u);

    SseParser lines(64);  // many short data lines of one event count together
    bool ok = true;
    for (int i = 0; i < 20 && ok; ++i) ok = lines.feed("data: 0123456789\n", events);
    EXPECT_FALSE(ok);
}

TEST(SseParser, FixturesGiveTheSameEventsWhereverTheyAreCut) {
    for (const char* name :
         {"completions-stream.http", "chat-stream.http", "completions-stream-invalid-utf8-error.http"}) {
        SCOPED_TRACE(name);
        const std::string body = testing::http_body(testing::openai_fixture(name));
        const std::vector<SseEvent> whole = parse_whole(body);
        ASSERT_GE(whole.size(), 7u);
        for (std::size_t cut = 0; cut <= body.size(); ++cut) ASSERT_EQ(parse_split(body, {cut}), whole) << cut;
        std::mt19937_64 random(35);
        for (int round = 0; round < 200; ++round) {
            std::vector<std::size_t> cuts(1 + random() % 40);
            for (std::size_t& cut : cuts) cut = random() % (body.size() + 1);
            std::sort(cuts.begin(), cuts.end());
            ASSERT_EQ(parse_split(body, cuts), whole) << round;
        }
        std::vector<std::size_t> every_byte(body.size());  // one byte per piece
        for (std::size_t i = 0; i < body.size(); ++i) every_byte[i] = i;
        ASSERT_EQ(parse_split(body, every_byte), whole);
    }
}

TEST(SseParser, CrLfLineEndingsGiveTheSameEvents) {
    const std::string body = testing::http_body(testing::openai_fixture("completions-stream.http"));
    std::string crlf;
    for (const char c : body) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
    const std::vector<SseEvent> whole = parse_whole(body);
    for (std::size_t cut = 0; cut <= crlf.size(); ++cut) ASSERT_EQ(parse_split(crlf, {cut}), whole) << cut;
}

}  // namespace
}  // namespace inferbench::serving
