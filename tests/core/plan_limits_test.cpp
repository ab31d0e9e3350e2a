// The bounds on what a plan may hold: one text value (a name, a path) and the plan itself, each refused
// with one line before it can make a table, a query or the YAML parser take unbounded time or memory.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <string>

#include "common/scratch_dir.hpp"
#include "core/error.hpp"
#include "core/plan/plan.hpp"

namespace inferbench {
namespace {

const PlanVocabulary kVocabulary{{"resnet50", "null"}, {"onnxruntime", "null"}};

std::string error_of(const std::function<void()>& read) {
    try {
        read();
    } catch (const UserError& e) {
        return e.what();
    }
    return "";
}

TEST(PlanLimits, ANameOrPathLongerThanTheLimitIsOneError) {
    const std::string longest(kMaxTextBytes, 'n');
    EXPECT_EQ(error_of([&] { parse_plan("name: " + longest + "\n", "plan.yaml", kVocabulary); }), "");
    EXPECT_EQ(error_of([&] { parse_plan("name: " + longest + "n\n", "plan.yaml", kVocabulary); }),
              "plan.yaml:1:7: name: the value is 4097 bytes long, above the 4096 bytes a name or path may have; give a "
              "shorter one");
    Plan plan;
    EXPECT_EQ(
        error_of([&] { apply_override(plan, "name", std::string(10'000'000, 'n'), "--set name=...", kVocabulary); }),
        "--set name=...: name: the value is 10000000 bytes long, above the 4096 bytes a name or path may have; "
        "give a shorter one");
    EXPECT_EQ(
        error_of([&] { parse_plan("models: [" + std::string(5000, 'm') + ".onnx]\n", "plan.yaml", kVocabulary); }),
        "plan.yaml:1:10: a model name or path of 5005 bytes, above the 4096 bytes one may have; give a shorter one");
}

TEST(PlanLimits, APlanLargerThanAMebibyteIsRefusedBeforeItIsParsed) {
    const std::string big = "# " + std::string(kMaxPlanBytes, 'x') + "\nmodels: [null]\n";
    EXPECT_EQ(error_of([&] { parse_plan(big, "plan.yaml", kVocabulary); }),
              "plan.yaml: the plan is 1048594 bytes, above the 1048576 bytes a plan may have; a plan lists settings "
              "and names, give one that does");
    testing::ScratchDir dir;
    const std::string path = (dir.path() / "big.yaml").string();
    std::ofstream(path) << big;
    EXPECT_EQ(error_of([&] { load_plan_file(path, kVocabulary); }),
              path +
                  ": the plan is 1048594 bytes, above the 1048576 bytes a plan may have; a plan lists settings and "
                  "names, give one that does");
}

}  // namespace
}  // namespace inferbench
