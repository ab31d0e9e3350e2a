#include "serving/workload_file.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/temp_dir.hpp"
#include "serving/workload_json.hpp"

namespace inferbench::serving {
namespace {

WorkloadSettings file_settings(ServingApi api = ServingApi::completions) {
    WorkloadSettings s;
    s.source = "prompts.jsonl";
    s.api = api;
    s.output_tokens = 64;
    s.requests = 0;
    return s;
}

std::string error_of(std::string_view content, const WorkloadSettings& s) {
    try {
        workload_from_content(content, "prompts.jsonl", s);
    } catch (const UserError& e) {
        return e.what();
    }
    return "accepted";
}

TEST(WorkloadFile, ReadsPromptsTokenIdsAndOutputLengths) {
    const auto requests = workload_from_content(
        "{\"prompt\": \"one two three four five six seven eight nine ten\", \"max_tokens\": 7}\n"
        "\n"
        "{\"prompt\": [5, 6, 7], \"output_tokens\": 9}\r\n"
        "{\"prompt\": \"hello\"}\n",
        "prompts.jsonl", file_settings());
    ASSERT_EQ(requests.size(), 3U);
    EXPECT_EQ(requests[0].index, 0);
    EXPECT_EQ(requests[0].prompt_text, "one two three four five six seven eight nine ten");
    EXPECT_EQ(requests[0].input_tokens, 13);  // 10 words x 1.3
    EXPECT_EQ(requests[0].max_tokens, 7);
    EXPECT_EQ(requests[1].prompt_token_ids, (std::vector<std::int64_t>{5, 6, 7}));
    EXPECT_EQ(requests[1].input_tokens, 3);
    EXPECT_EQ(requests[1].max_tokens, 9);
    EXPECT_EQ(requests[2].max_tokens, 64);  // the settings' output_tokens
    EXPECT_EQ(requests[2].index, 2);
    auto fixed = file_settings();
    fixed.output_from_source = false;
    EXPECT_EQ(workload_from_content("{\"prompt\": \"a\", \"max_tokens\": 7}", "f", fixed)[0].max_tokens, 64);
}

TEST(WorkloadFile, ChatTakesMessagesAndTextPromptsAsUserMessages) {
    const auto requests = workload_from_content(
        R"({"messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi there"}]})"
        "\n"
        R"({"prompt": "what is it"})",
        "chat.jsonl", file_settings(ServingApi::chat));
    ASSERT_EQ(requests.size(), 2U);
    EXPECT_EQ(requests[0].messages.size(), 2U);
    EXPECT_EQ(requests[0].messages[1], (ChatMessage{"user", "hi there"}));
    EXPECT_EQ(requests[0].input_tokens, 6);  // ceil(2 x 1.3) each
    EXPECT_EQ(requests[1].messages, (std::vector<ChatMessage>{{"user", "what is it"}}));
    EXPECT_TRUE(requests[1].prompt_text.empty());
}

TEST(WorkloadFile, ShareGptTakesTheFirstHumanTurnAndTheAnswersLength) {
    const auto requests = workload_from_content(
        R"({"conversations": [{"from": "system", "value": "x"}, {"from": "human", "value": "tell me a story"},)"
        R"( {"from": "gpt", "value": "once upon a time there was a cat"}, {"from": "human", "value": "more"}]})"
        "\n"
        R"({"conversations": [{"from": "human", "value": "no answer here"}]})"
        "\n"
        R"({"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "a b"}], "max_tokens": 3})",
        "sharegpt.jsonl", file_settings());
    ASSERT_EQ(requests.size(), 3U);
    EXPECT_EQ(requests[0].prompt_text, "tell me a story");
    EXPECT_EQ(requests[0].max_tokens, 11);  // 8 words x 1.3, rounded up
    EXPECT_EQ(requests[1].max_tokens, 64);
    EXPECT_EQ(requests[2].max_tokens, 3);
}

TEST(WorkloadFile, ABadLineNamesTheFileTheLineAndWhatIsWrong) {
    const auto s = file_settings();
    EXPECT_EQ(error_of("{\"prompt\": \"a\"}\n{\"prompt\": \"b\",, }\n", s),
              "prompts.jsonl line 2: invalid JSON at column 16: each line must be one JSON object");
    EXPECT_EQ(error_of("{\"prompt\": \"a\"}\n\n{\"text\": \"b\"}", s),
              "prompts.jsonl line 3: no prompt: give \"prompt\", \"messages\" or ShareGPT's \"conversations\"");
    EXPECT_EQ(error_of("{\"conversations\": []}", s),
              "prompts.jsonl line 1: empty conversation: \"conversations\" holds no turns");
    EXPECT_NE(error_of("{\"conversations\": [{\"from\": \"gpt\", \"value\": \"x\"}]}", s).find("no human turn"),
              std::string::npos);
    EXPECT_NE(error_of("[1, 2]", s).find("line 1: not a JSON object"), std::string::npos);
    EXPECT_NE(error_of("{\"prompt\": \"a\", \"max_tokens\": -1}", s).find("\"max_tokens\" is not an integer"),
              std::string::npos);
    EXPECT_NE(error_of("{\"messages\": [{\"role\": \"user\", \"content\": \"a\"}]}", s).find("need api chat"),
              std::string::npos);
    EXPECT_NE(error_of("{\"prompt\": [1, 2]}", file_settings(ServingApi::chat)).find("needs api completions"),
              std::string::npos);
    EXPECT_NE(error_of("{\"prompt\": []}", s).find("no prompt"), std::string::npos);
    EXPECT_NE(error_of("\n\n", s).find("holds no requests"), std::string::npos);
}

TEST(WorkloadFile, TakesTheFirstRequestsAndRefusesMoreThanItHolds) {
    auto s = file_settings();
    s.requests = 2;
    const std::string content = "{\"prompt\": \"a\"}\n{\"prompt\": \"b\"}\n{\"prompt\": \"c\"}\n";
    const auto two = workload_from_content(content, "f", s);
    ASSERT_EQ(two.size(), 2U);
    EXPECT_EQ(two[1].prompt_text, "b");
    s.requests = 4;
    EXPECT_EQ(error_of(content, s),
              "prompts.jsonl holds 3 requests, fewer than the 4 asked for: lower requests (0 takes them all) or add "
              "records");
}

TEST(WorkloadFile, BoundedInSizeAndLines) {
    EXPECT_NE(error_of(std::string(static_cast<std::size_t>(kMaxWorkloadFileLines) + 1, '\n'), file_settings())
                  .find("more than 1000000 lines"),
              std::string::npos);
    TempDir dir("serving-workload");
    const auto big = dir.path() / "big.jsonl";
    const int fd = ::open(big.c_str(), O_CREAT | O_WRONLY, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, kMaxWorkloadFileBytes + 1), 0);  // sparse: nothing is read
    ::close(fd);
    auto s = file_settings();
    s.source = big.string();
    try {
        make_workload(s);
        ADD_FAILURE() << "a file over the limit was read";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("more than the 268435456 a workload file may hold"), std::string::npos)
            << e.what();
    }
}

TEST(WorkloadFile, AStoredWorkloadIsReplayedExactly) {
    WorkloadSettings synthetic;
    synthetic.vocab = 5000;
    synthetic.requests = 12;
    synthetic.turns = 3;
    synthetic.distribution = LengthDistribution::uniform;
    synthetic.spread = 0.5;
    const auto planned = make_workload(synthetic);
    TempDir dir("serving-workload");
    const auto file = dir.path() / "workload.json";
    std::ofstream(file) << workload_json(planned).dump();
    auto replay = file_settings();
    replay.source = file.string();
    replay.requests = 3;  // a replay is whole whatever requests says
    EXPECT_EQ(make_workload(replay), planned);
    replay.api = ServingApi::chat;
    try {
        make_workload(replay);
        ADD_FAILURE() << "a completions workload replayed as chat";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("is a completions request, but the cell's api is chat"),
                  std::string::npos);
    }
}

TEST(WorkloadFile, AMissingFileIsOneLine) {
    auto s = file_settings();
    s.source = "/nonexistent/prompts.jsonl";
    try {
        make_workload(s);
        ADD_FAILURE();
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("/nonexistent/prompts.jsonl"), std::string::npos);
    }
}

}  // namespace
}  // namespace inferbench::serving
