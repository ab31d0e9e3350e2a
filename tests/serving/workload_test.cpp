#include "serving/workload.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "serving/workload_json.hpp"
#include "serving/workload_text.hpp"

namespace inferbench::serving {
namespace {

WorkloadSettings token_settings() {
    WorkloadSettings s;
    s.input_tokens = 50;
    s.output_tokens = 20;
    s.vocab = 32000;
    s.requests = 40;
    s.seed = 9;
    return s;
}

bool starts_with(const std::vector<std::int64_t>& whole, const std::vector<std::int64_t>& part) {
    return whole.size() >= part.size() && std::equal(part.begin(), part.end(), whole.begin());
}

TEST(Workload, FixedTokenIdsHaveExactLengthsAndIdsInRange) {
    const auto requests = make_workload(token_settings());
    ASSERT_EQ(requests.size(), 40U);
    for (std::size_t i = 0; i < requests.size(); ++i) {
        const auto& r = requests[i];
        EXPECT_EQ(r.index, static_cast<std::int64_t>(i));
        EXPECT_EQ(r.session, -1);
        EXPECT_EQ(r.prefix_group, -1);
        EXPECT_EQ(r.prompt_token_ids.size(), 50U);
        EXPECT_EQ(r.input_tokens, 50);
        EXPECT_EQ(r.max_tokens, 20);
        EXPECT_TRUE(r.prompt_text.empty());
        EXPECT_TRUE(r.messages.empty());
        for (const auto id : r.prompt_token_ids) {
            EXPECT_GE(id, kDefaultFirstTokenId);
            EXPECT_LT(id, 32000);
        }
    }
    EXPECT_NE(requests[0].prompt_token_ids, requests[1].prompt_token_ids);
}

TEST(Workload, SameSeedSameWorkloadAnotherSeedAnother) {
    auto s = token_settings();
    EXPECT_EQ(make_workload(s), make_workload(s));
    const auto first = make_workload(s);
    s.seed = 10;
    EXPECT_NE(make_workload(s), first);
}

TEST(Workload, PinnedFingerprintsStayTheSameAcrossBuilds) {
    // A seed names its workload in stored runs: what it gives must not change with compiler, library or CPU.
    auto s = token_settings();
    s.requests = 3;
    s.input_tokens = 8;
    s.output_tokens = 4;
    EXPECT_EQ(make_workload(s)[0].prompt_token_ids,
              (std::vector<std::int64_t>{207, 18848, 8483, 14304, 27379, 17155, 1394, 24447}));
    s.api = ServingApi::chat;
    s.prompt_form = PromptForm::text;
    s.turns = 2;
    EXPECT_EQ(workload_fingerprint(make_workload(s)), "877bd90fd773aad9");
}

TEST(Workload, UniformLengthsStayInTheirRangeAroundTheMean) {
    const auto lengths = draw_lengths(100, LengthDistribution::uniform, 0.5, 1000, 20'000, 3, "test");
    double sum = 0;
    for (const auto l : lengths) {
        ASSERT_GE(l, 50);
        ASSERT_LE(l, 150);
        sum += static_cast<double>(l);
    }
    EXPECT_NEAR(sum / 20'000, 100.0, 1.0);
    EXPECT_EQ(*std::min_element(lengths.begin(), lengths.end()), 50);
    EXPECT_EQ(*std::max_element(lengths.begin(), lengths.end()), 150);
}

TEST(Workload, NormalLengthsHaveTheirMeanAndDeviationAndAreClamped) {
    const auto lengths = draw_lengths(1000, LengthDistribution::normal, 0.1, 5000, 50'000, 4, "test");
    double sum = 0;
    double sum_sq = 0;
    for (const auto l : lengths) {
        sum += static_cast<double>(l);
        sum_sq += static_cast<double>(l) * static_cast<double>(l);
    }
    const double mean = sum / 50'000;
    EXPECT_NEAR(mean, 1000.0, 2.0);
    EXPECT_NEAR(std::sqrt(sum_sq / 50'000 - mean * mean), 100.0, 2.0);
    const auto wide = draw_lengths(10, LengthDistribution::normal, 3.0, 20, 10'000, 4, "test");
    EXPECT_EQ(*std::min_element(wide.begin(), wide.end()), 1);
    EXPECT_EQ(*std::max_element(wide.begin(), wide.end()), 20);
    const auto fixed = draw_lengths(7, LengthDistribution::fixed, 0.9, 20, 100, 4, "test");
    EXPECT_TRUE(std::all_of(fixed.begin(), fixed.end(), [](auto l) { return l == 7; }));
}

TEST(Workload, PrefixGroupsShareTheirFirstTokens) {
    auto s = token_settings();
    s.prefix_groups = 3;
    s.prefix_tokens = 30;
    const auto requests = make_workload(s);
    for (const auto& r : requests) {
        EXPECT_EQ(r.prefix_group, r.index % 3);
        EXPECT_EQ(r.input_tokens, 50);  // the prefix counts towards the prompt's length
        const auto& same = requests[static_cast<std::size_t>(r.prefix_group)];
        EXPECT_TRUE(
            std::equal(same.prompt_token_ids.begin(), same.prompt_token_ids.begin() + 30, r.prompt_token_ids.begin()));
    }
    EXPECT_FALSE(std::equal(requests[0].prompt_token_ids.begin(), requests[0].prompt_token_ids.begin() + 30,
                            requests[1].prompt_token_ids.begin()));
    s.prefix_tokens = 80;  // longer than the prompt: the prefix and one token of its own
    EXPECT_EQ(make_workload(s)[0].input_tokens, 81);
}

TEST(Workload, MultiTurnPromptsCarryTheConversationWithPlannedAnswers) {
    auto s = token_settings();
    s.turns = 3;
    s.requests = 7;  // sessions of 3, 3 and 1
    const auto requests = make_workload(s);
    ASSERT_EQ(requests.size(), 7U);
    const std::vector<std::pair<std::int64_t, std::int64_t>> session_turn = {{0, 0}, {0, 1}, {0, 2}, {1, 0},
                                                                             {1, 1}, {1, 2}, {2, 0}};
    for (std::size_t i = 0; i < requests.size(); ++i) {
        EXPECT_EQ(requests[i].session, session_turn[i].first);
        EXPECT_EQ(requests[i].turn, session_turn[i].second);
    }
    for (std::size_t i : {1U, 2U, 4U, 5U}) {
        const auto& before = requests[i - 1];
        const auto& now = requests[i];
        EXPECT_TRUE(starts_with(now.prompt_token_ids, before.prompt_token_ids));
        // the earlier prompt, its planned answer (max_tokens long), then the new user part
        EXPECT_EQ(now.input_tokens, before.input_tokens + before.max_tokens + 50);
        EXPECT_EQ(static_cast<std::int64_t>(now.prompt_token_ids.size()), now.input_tokens);
    }
    EXPECT_EQ(requests[6].input_tokens, 50);
}

TEST(Workload, TextPromptsAreSeededWordsCountedAsTokens) {
    auto s = token_settings();
    s.prompt_form = PromptForm::text;
    s.vocab = 0;  // not needed for text
    const auto requests = make_workload(s);
    for (const auto& r : requests) {
        EXPECT_TRUE(r.prompt_token_ids.empty());
        EXPECT_EQ(count_words(r.prompt_text), 50);
        EXPECT_EQ(r.input_tokens, 50);
    }
    EXPECT_NE(requests[0].prompt_text, requests[1].prompt_text);
}

TEST(Workload, ChatSessionsAlternateUserAndPlannedAssistantWithTheSharedPrefixAsSystem) {
    auto s = token_settings();
    s.api = ServingApi::chat;
    s.prompt_form = PromptForm::text;
    s.turns = 2;
    s.requests = 4;
    s.prefix_groups = 1;
    s.prefix_tokens = 10;
    const auto requests = make_workload(s);
    ASSERT_EQ(requests[1].messages.size(), 4U);
    EXPECT_EQ(requests[1].messages[0].role, "system");
    EXPECT_EQ(requests[1].messages[1].role, "user");
    EXPECT_EQ(requests[1].messages[2].role, "assistant");
    EXPECT_EQ(requests[1].messages[3].role, "user");
    EXPECT_EQ(count_words(requests[1].messages[2].content), requests[0].max_tokens);
    EXPECT_EQ(requests[0].messages[0], requests[2].messages[0]);  // one group: one system prompt
    EXPECT_EQ(requests[0].input_tokens, 50);
    EXPECT_TRUE(requests[0].prompt_text.empty());
}

TEST(Workload, ProblemsAreRefusedWithOneLine) {
    auto expect_problem = [](WorkloadSettings s, std::string_view word) {
        const auto problem = workload_problem(s);
        ASSERT_TRUE(problem.has_value()) << word;
        EXPECT_NE(problem->find(word), std::string::npos) << *problem;
        EXPECT_THROW(make_workload(s), UserError);
    };
    auto s = token_settings();
    EXPECT_FALSE(workload_problem(s).has_value());
    auto chat = s;
    chat.api = ServingApi::chat;
    expect_problem(chat, "token_ids");
    auto no_vocab = s;
    no_vocab.vocab = 0;
    expect_problem(no_vocab, "vocabulary");
    auto turns = s;
    turns.turns = kMaxTurns + 1;
    expect_problem(turns, "turns");
    auto spread = s;
    spread.distribution = LengthDistribution::uniform;
    spread.spread = 1.5;
    expect_problem(spread, "spread");
    auto none = s;
    none.requests = 0;
    expect_problem(none, "requests");
    auto too_long = s;
    too_long.input_tokens = s.max_input_tokens + 1;
    expect_problem(too_long, "input_tokens");
    auto prefix = s;
    prefix.prefix_groups = 2;
    expect_problem(prefix, "prefix_tokens");
    auto empty = s;
    empty.source.clear();
    expect_problem(empty, "source");
}

TEST(Workload, NamesRoundTrip) {
    for (auto d : {LengthDistribution::fixed, LengthDistribution::uniform, LengthDistribution::normal})
        EXPECT_EQ(parse_length_distribution(to_string(d)), d);
    for (auto f : {PromptForm::token_ids, PromptForm::text}) EXPECT_EQ(parse_prompt_form(to_string(f)), f);
    EXPECT_FALSE(parse_length_distribution("poisson").has_value());
}

}  // namespace
}  // namespace inferbench::serving
