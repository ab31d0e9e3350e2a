// Bad input and misleading output seen from the command line: each refused with one line and exit 2,
// or told as it is.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "e2e/cli_harness.hpp"
#include "store/results_store.hpp"

namespace inferbench {
namespace {

using ScratchDir = testing::CliScratch;

constexpr const char* kNullCell = "run --backend null --model null --duration 20ms --warmup 0s";

void expect_refused(const testing::CliResult& r, const std::string& line) {
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err, "inferbench: error: " + line + "\n");
}

TEST(CliInputs, AMisspeltOptionIsNamedWithTheNearestOne) {
    ScratchDir dir;
    expect_refused(dir.run("run --durration 1s --dry-run"),
                   "unknown option --durration; did you mean --duration? (`inferbench run --help` lists the options)");
    expect_refused(dir.run("run --durration=1s --dry-run"),
                   "unknown option --durration; did you mean --duration? (`inferbench run --help` lists the options)");
    expect_refused(dir.run("summary --jsn"),
                   "unknown option --jsn; did you mean --json? (`inferbench summary --help` lists the options)");
    expect_refused(dir.run("run --frobnicate --dry-run"),
                   "unknown option --frobnicate (`inferbench run --help` lists the options)");
}

TEST(CliInputs, AMisspeltCommandIsNamedWithTheNearestOne) {
    ScratchDir dir;
    expect_refused(dir.run("runn"), "unknown command 'runn'; did you mean run? (`inferbench --help` lists the commands)");
    expect_refused(dir.run("frobnicate"), "unknown command 'frobnicate' (`inferbench --help` lists the commands)");
}

TEST(CliInputs, AnEmptyPlanFileIsRefused) {
    ScratchDir dir;
    dir.write("empty.yaml", "");
    expect_refused(dir.run("run empty.yaml --dry-run"),
                   "plan empty.yaml is empty; give at least one key, e.g. models: [resnet50] (without a plan file, run "
                   "uses the default plan)");
}

TEST(CliInputs, ARepeatedPlanKeyIsRefused) {
    ScratchDir dir;
    dir.write("plan.yaml", "models: [null]\nbackends: [null]\nduration: 1s\nduration: 20ms\n");
    expect_refused(dir.run("run plan.yaml --dry-run"),
                   "plan.yaml:4:1: duplicate key 'duration' (first at line 3); keep one of them");
}

TEST(CliInputs, RepeatedValuesAndOutOfRangeNumbersAreRefused) {
    ScratchDir dir;
    expect_refused(dir.run(std::string(kNullCell) + " --batch 1,2,1 --dry-run"),
                   "--batch 1,2,1: batch_sizes lists '1' twice; list each value once");
    expect_refused(dir.run(std::string(kNullCell) + " --batch 99999999999 --dry-run"),
                   "--batch 99999999999: batch size '99999999999' must be a whole number from 1 to 65536");
    expect_refused(dir.run(std::string(kNullCell) + " --min-iterations 100 --max-iterations 10 --dry-run"),
                   "<default plan>: min_iterations 100 is above max_iterations 10; lower min_iterations or raise "
                   "max_iterations (0: no limit)");
    expect_refused(dir.run(std::string(kNullCell) + " --duration 1000h --dry-run"),
                   "--duration 1000h: duration: '1000h' is above the maximum 24h");
}

TEST(CliInputs, TextThatIsNotUtf8IsRefusedBeforeAnythingRuns) {
    ScratchDir dir;
    // printf: the test shell is sh, which has no $'...' quoting.
    expect_refused(dir.run(std::string(kNullCell) + " --name \"$(printf 'caf\\351')\" --db r.db"),
                   "--name caf\\xE9: the value is not valid UTF-8 (byte 0xE9 at offset 3); names and paths must be "
                   "UTF-8 (rename the file or folder)");
    EXPECT_FALSE(std::filesystem::exists(dir.file("r.db")));
    expect_refused(dir.run("run --backend null --model \"$(printf 'm\\377.onnx')\" --dry-run"),
                   "--model m\\xFF.onnx: the value is not valid UTF-8 (byte 0xFF at offset 1); names and paths must be "
                   "UTF-8 (rename the file or folder)");
    dir.write("plan.yaml", "models: [null]\nbackends: [null]\nname: caf\xe9\n");
    expect_refused(dir.run("run plan.yaml --dry-run"),
                   "plan.yaml:3:10: not valid UTF-8 (byte 0xE9 at offset 41); save the plan as UTF-8 text");
}

TEST(CliInputs, AModelThatIsADirectoryOrAFifoSaysSoWithoutWaiting) {
    ScratchDir dir;
    std::filesystem::create_directory(dir.path() / "net.onnx");
    ASSERT_EQ(::mkfifo(dir.file("pipe.onnx").c_str(), 0600), 0);
    const auto directory = dir.run("run --backend onnxruntime --model net.onnx --dry-run");
    EXPECT_EQ(directory.exit_code, 2);
    EXPECT_NE(directory.err.find("model 'net.onnx' is a directory; give a model file"), std::string::npos)
        << directory.err;
    const auto fifo = dir.run("run --backend onnxruntime --model pipe.onnx --dry-run");
    EXPECT_EQ(fifo.exit_code, 2);
    EXPECT_NE(fifo.err.find("model 'pipe.onnx' is not a regular file (a FIFO); give a model file"), std::string::npos)
        << fifo.err;
}

TEST(CliInputs, DryRunChecksBackendOptionsAsRunDoes) {
    ScratchDir dir;
    const std::string line = "<default plan>: backend_options.null.bogus: unknown option; valid options: none";
    expect_refused(dir.run(std::string(kNullCell) + " --set backend_options.null.bogus=1 --dry-run"), line);
    expect_refused(dir.run(std::string(kNullCell) + " --set backend_options.null.bogus=1 --db r.db"), line);
}

TEST(CliInputs, ARunInWhichNothingRanExitsWithThree) {
    ScratchDir dir;
    // The null backend runs only the null model: the one cell is skipped.
    const auto r = dir.run("run --backend null --model resnet50 --batch 1 --duration 20ms --warmup 0s --db r.db");
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("0 ok, 0 failed, 1 skipped"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("nothing was measured: every benchmark was skipped"), std::string::npos) << r.err;
    // Help wraps to the terminal: one wide enough keeps the exit codes on one line.
    EXPECT_NE(dir.run("run --help", "env COLUMNS=1000").out.find("3 nothing ran (every benchmark skipped)"),
              std::string::npos);
}

TEST(CliInputs, TheDefaultRunIsTheLatestWithResults) {
    ScratchDir dir;
    ASSERT_EQ(dir.run(std::string(kNullCell) + " --db r.db").exit_code, 0);
    {
        // What a run in progress (or killed before its first benchmark) leaves: a run without benchmarks.
        auto store = store::ResultsStore::open(dir.file("r.db"));
        store::RunRecord run;
        run.name = "in progress";
        run.started_unix_ms = store.runs().back().started_unix_ms + 1000;
        store.begin_run(run);
    }
    const auto summary = dir.run("summary --db r.db");
    EXPECT_EQ(summary.exit_code, 0) << summary.err;
    EXPECT_EQ(summary.err, "inferbench: run 2 has no results yet; showing run 1\n");
    EXPECT_NE(summary.out.find("null"), std::string::npos) << summary.out;
    const auto report = dir.run("report --db r.db --out rep --no-plots --no-excel --no-html");
    EXPECT_EQ(report.exit_code, 0) << report.err;
    EXPECT_NE(report.err.find("inferbench: run 2 has no results yet; showing run 1\n"), std::string::npos) << report.err;
    EXPECT_TRUE(std::filesystem::exists(dir.path() / "rep" / "summary.csv"));
    // Named, it is still shown as it is.
    EXPECT_EQ(dir.run("summary --db r.db --run 2").err.find("showing run"), std::string::npos);
}

TEST(CliInputs, ListBackendsSaysWhatRunWouldSay) {
    ScratchDir dir;
    const auto listed = dir.run("list backends --json");
    ASSERT_EQ(listed.exit_code, 0) << listed.err;
    const auto rows = nlohmann::json::parse(listed.out).at("rows");
    bool saw_trtexec = false;
    for (const auto& row : rows) {
        ASSERT_TRUE(row.at("usable").is_boolean()) << row.dump();
        EXPECT_EQ(row.at("usable").get<bool>(), row.at("problem").get<std::string>().empty()) << row.dump();
        if (row.at("name") != "trtexec") continue;
        saw_trtexec = true;
        if (row.at("usable").get<bool>()) GTEST_SKIP() << "trtexec is installed here";
        // The reason given is the one a run of trtexec records when it skips the cell.
        dir.write("m.onnx", "");
        const auto run = dir.run("run --backend trtexec --device cuda --model m.onnx --batch 1 --duration 20ms --db r.db");
        EXPECT_EQ(run.exit_code, 3) << run.err;
        const auto benchmarks = store::ResultsStore::open(dir.file("r.db")).benchmarks();
        ASSERT_EQ(benchmarks.size(), 1u);
        EXPECT_EQ(benchmarks[0].status, BenchmarkStatus::skipped);
        EXPECT_EQ(benchmarks[0].reason, row.at("problem").get<std::string>());
    }
    EXPECT_TRUE(saw_trtexec) << listed.out;
}

}  // namespace
}  // namespace inferbench
