#include "serving/workload_json.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "serving/workload.hpp"

namespace inferbench::serving {
namespace {

std::vector<PlannedRequest> mixed_workload() {
    WorkloadSettings s;
    s.vocab = 1000;
    s.requests = 6;
    s.turns = 2;
    s.prefix_groups = 2;
    s.prefix_tokens = 5;
    s.distribution = LengthDistribution::normal;
    s.spread = 0.3;
    auto requests = make_workload(s);
    s.prompt_form = PromptForm::text;
    for (auto r : make_workload(s)) requests.push_back(std::move(r));
    s.api = ServingApi::chat;
    for (auto r : make_workload(s)) requests.push_back(std::move(r));
    for (std::size_t i = 0; i < requests.size(); ++i) requests[i].index = static_cast<std::int64_t>(i);
    return requests;
}

TEST(WorkloadJson, RoundTripIsExact) {
    const auto requests = mixed_workload();
    const auto json = workload_json(requests);
    EXPECT_EQ(json["format"], kWorkloadFormat);
    EXPECT_EQ(workload_from_json(json), requests);
    // and through text, as a stored file holds it
    EXPECT_EQ(workload_from_json(nlohmann::json::parse(json.dump())), requests);
    // text with quotes, newlines and non-ASCII survives too
    std::vector<PlannedRequest> odd(1);
    odd[0].prompt_text = "say \"hi\"\n\tand caf\u00e9 \xF0\x9F\x98\x80";
    odd[0].max_tokens = 3;
    EXPECT_EQ(workload_from_json(nlohmann::json::parse(workload_json(odd).dump())), odd);
}

TEST(WorkloadJson, FingerprintNamesTheExactRequests) {
    const auto requests = mixed_workload();
    const auto fingerprint = workload_fingerprint(requests);
    EXPECT_EQ(fingerprint.size(), 16U);
    EXPECT_EQ(fingerprint, workload_fingerprint(workload_from_json(workload_json(requests))));
    auto changed = requests;
    changed[0].prompt_token_ids[3] += 1;
    EXPECT_NE(workload_fingerprint(changed), fingerprint);
    changed = requests;
    changed[2].max_tokens += 1;
    EXPECT_NE(workload_fingerprint(changed), fingerprint);
}

TEST(WorkloadJson, RefusesWhatIsNotAStoredWorkload) {
    EXPECT_THROW(workload_from_json(nlohmann::json::parse(R"({"prompt": "x"})")), UserError);
    EXPECT_THROW(workload_from_json(nlohmann::json::parse(
                     R"({"format": "inferbench-serving-workload", "version": 2, "requests": []})")),
                 UserError);
    const auto bad = [](const char* request) {
        const auto text =
            std::string(R"({"format": "inferbench-serving-workload", "version": 1, "requests": [)") + request + "]}";
        try {
            workload_from_json(nlohmann::json::parse(text));
        } catch (const UserError& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    const char* base = R"("index": 0, "session": -1, "turn": 0, "prefix_group": -1, "input_tokens": 2)";
    EXPECT_NE(bad((std::string("{") + base + R"(, "max_tokens": 4})").c_str()).find("exactly one"), std::string::npos);
    EXPECT_NE(bad((std::string("{") + base + R"(, "max_tokens": 0, "prompt_text": "a"})").c_str()).find("max_tokens"),
              std::string::npos);
    EXPECT_NE(
        bad((std::string("{") + base + R"(, "max_tokens": 4, "prompt_token_ids": [1, -2]})").c_str()).find("token id"),
        std::string::npos);
    EXPECT_NE(bad(R"({"index": "zero"})").find("request 0: \"index\""), std::string::npos);
    EXPECT_EQ(bad((std::string("{") + base + R"(, "max_tokens": 4, "prompt_text": "a b"})").c_str()), "accepted");
}

}  // namespace
}  // namespace inferbench::serving
