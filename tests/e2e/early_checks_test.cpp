// Every flag of a command is checked before it does anything: a misspelt column name or option costs
// no measuring time and leaves no run behind; and the help says every exit code the command can give.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/plan/settings.hpp"
#include "e2e/cli_harness.hpp"

namespace inferbench {
namespace {

using ::testing::HasSubstr;
using ScratchDir = testing::CliScratch;

TEST(EarlyChecks, UnknownColumnOfRunFailsBeforeAnythingRunsOrIsStored) {
    ScratchDir dir;
    const auto r = dir.run("run --backend null --model null --batch 1 --duration 0.1s --columns model,nosuch --db T.db");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr("--columns nosuch: the summary table has no such column; valid names: benchmark_ids, repeat, model,"));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;  // no progress line: nothing ran
    EXPECT_EQ(r.out, "");
    EXPECT_FALSE(std::filesystem::exists(dir.file("T.db")));
    // The same names work once they are right.
    const auto good = dir.run("run --backend null --model null --batch 1 --duration 0.1s --columns model,p99_ms "
                              "--db T.db --quiet");
    ASSERT_EQ(good.exit_code, 0) << good.err;
    EXPECT_TRUE(good.out.starts_with("model")) << good.out;
}

TEST(EarlyChecks, RunHelpListsEveryExitCode) {
    ScratchDir dir;
    const auto help = dir.run("run --help");
    ASSERT_EQ(help.exit_code, 0);
    // The help wraps to the width: its words are read with every run of white space as one space.
    const std::string text = std::regex_replace(help.out, std::regex("\\s+"), " ");
    for (const char* code : {"0 all benchmarks ok", "1 at least one failed", "2 bad input", "3 nothing ran",
                             "4 the results store could not take", "130 interrupted by Ctrl-C", "143 by SIGTERM",
                             "129 by SIGHUP", "5 is `compare --fail-on-regression`"})
        EXPECT_THAT(text, HasSubstr(code));
    EXPECT_THAT(text, HasSubstr("backend_options map: backend -> {option: value}; `inferbench list backends "
                                "--options` lists them"));
}

// A flag that sets a run setting says that setting's one help text (core/plan/settings), the text the plan keys
// below the options show for it, in its own words nowhere else.
TEST(EarlyChecks, RunFlagsSayTheirSettingsHelp) {
    ScratchDir dir;
    const auto help = dir.run("run --help");
    ASSERT_EQ(help.exit_code, 0);
    const std::string text = std::regex_replace(help.out, std::regex("\\s+"), " ");
    const std::pair<const char*, const char*> flags[] = {
        {"--duration", "duration"},   {"--scenario", "scenario"},         {"--warmup", "warmup"},
        {"--warmup-iterations", "warmup_iterations"},                     {"--min-iterations", "min_iterations"},
        {"--max-iterations", "max_iterations"},                           {"--timeout", "timeout"},
        {"--seed", "seed"},           {"--inputs", "inputs"},             {"--name", "name"},
        {"--out", "output_dir"},      {"--db", "db"}};
    for (const auto& [flag, key] : flags) {
        const SettingField* field = find_setting(key);
        ASSERT_NE(field, nullptr) << key;
        EXPECT_THAT(text, HasSubstr(std::string(flag) + " TEXT ... " + std::string(field->help))) << flag;
    }
    // The axes have no setting: their flags keep their own words.
    EXPECT_THAT(text, HasSubstr("--batch TEXT ... batch sizes, comma-separated, e.g. 1,8,32"));
}

TEST(EarlyChecks, ListBackendsOptionsSaysEachOptionsTypeDefaultAndHelp) {
    ScratchDir dir;
    const auto r = dir.run("list backends --options fault --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto rows = nlohmann::json::parse(r.out)["rows"];
    ASSERT_EQ(rows.size(), 4u) << r.out;
    EXPECT_EQ(rows[3], (nlohmann::json{{"backend", "fault"}, {"option", "sleep_ms"}, {"type", "integer"},
                                       {"default", "0"}, {"help", "sleep per inference"}}));
    // Every backend when none is named: the null backend has none, fault's are there.
    const auto all = dir.run("list backends --options");
    ASSERT_EQ(all.exit_code, 0) << all.err;
    EXPECT_THAT(all.out, HasSubstr("fault_batch"));
    const auto misspelt = dir.run("list backends --options faul");
    EXPECT_EQ(misspelt.exit_code, 2);
    EXPECT_THAT(misspelt.err, HasSubstr("--options faul: no such backend; did you mean fault?"));
    EXPECT_EQ(dir.run("list models --options").exit_code, 2);
}

TEST(EarlyChecks, AMisspeltBackendOptionGetsTheNearestName) {
    ScratchDir dir;
    const auto r = dir.run("run --backend fault --model null --batch 1 --set backend_options.fault.sleep_m=1 --dry-run");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_THAT(r.err, HasSubstr("backend_options.fault.sleep_m: unknown option; did you mean sleep_ms?; valid options: "
                                 "fault, phase, fault_batch, sleep_ms (`inferbench list backends --options fault`"));
}

}  // namespace
}  // namespace inferbench
