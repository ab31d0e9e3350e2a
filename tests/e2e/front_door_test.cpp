// What a newcomer meets first: --version's build facts, the bash completion, and an installed copy that
// runs from its own prefix.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <string>

#include "e2e/cli_harness.hpp"

namespace inferbench::testing {
namespace {

// What the completion function offers for the words typed so far (the last one being completed).
std::string completions(const CliScratch& scratch, const std::string& typed) {
    const auto made = scratch.run("completion bash");
    EXPECT_EQ(made.exit_code, 0) << made.err;
    std::ofstream(scratch.path() / "completion.bash") << made.out;
    const std::string command =
        "cd '" + scratch.path().string() + "' && bash -c 'source completion.bash; COMP_WORDS=(" + typed +
        "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); [[ \"" + typed + "\" == *\" \" ]] && { COMP_WORDS+=(\"\"); "
        "COMP_CWORD=$((COMP_CWORD + 1)); }; _inferbench; printf \"%s\\n\" \"${COMPREPLY[@]}\"' > offered.txt 2>&1";
    EXPECT_EQ(std::system(command.c_str()), 0);
    return read_file(scratch.path() / "offered.txt");
}

TEST(FrontDoor, VersionNamesTheCommitTheBackendsAndTheirFrameworks) {
    CliScratch scratch;
    const auto result = scratch.run("--version");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_TRUE(std::regex_search(result.out, std::regex(R"(^inferbench \d+\.\d+\.\d+\n)"))) << result.out;
    EXPECT_TRUE(std::regex_search(result.out, std::regex(R"(commit: +([0-9a-f]{12}(-dirty)?|unknown)\n)"))) << result.out;
    EXPECT_NE(result.out.find("backend modules: null (built in)"), std::string::npos) << result.out;
#if INFERBENCH_HAVE_ONNXRUNTIME
    EXPECT_NE(result.out.find("onnxruntime"), std::string::npos) << result.out;
    EXPECT_TRUE(std::regex_search(result.out, std::regex(R"(ONNX Runtime 1\.\d+\.\d+ \(headers: API \d+\))"))) << result.out;
#endif
}

TEST(FrontDoor, BashCompletesCommandsSubcommandsFlagsAndPlanKeys) {
    CliScratch scratch;
    EXPECT_EQ(completions(scratch, "inferbench ru"), "run\n");
    EXPECT_EQ(completions(scratch, "inferbench models ins"), "inspect\n");
    EXPECT_EQ(completions(scratch, "inferbench run --dry"), "--dry-run\n");
    EXPECT_EQ(completions(scratch, "inferbench run --set min_it"), "min_iterations=\n");
    EXPECT_EQ(completions(scratch, "inferbench summary --each"), "--each-repeat\n");
    // A flag of another command is not offered; an option's value is left to file names (nothing offered).
    EXPECT_EQ(completions(scratch, "inferbench summary --dry"), "\n");
    EXPECT_EQ(completions(scratch, "inferbench run --db "), "\n");
}

}  // namespace
}  // namespace inferbench::testing
