// What a user sees on a terminal: tables that fit its width, --columns, a progress line that never
// wraps, and `report` that says where its files went instead of printing the table again.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "e2e/cli_harness.hpp"

namespace inferbench {
namespace {

using ScratchDir = testing::CliScratch;

// The widest line, in characters (UTF-8 code points), of text split at `separators`.
std::size_t widest(const std::string& text, const std::string& separators = "\n") {
    std::size_t widest = 0, current = 0;
    for (const char ch : text) {
        if (separators.find(ch) != std::string::npos) {
            widest = std::max(widest, current);
            current = 0;
        } else if ((static_cast<unsigned char>(ch) & 0xC0) != 0x80) {
            ++current;
        }
    }
    return std::max(widest, current);
}

// The CLI run as CliScratch::run does, with `environment` ("COLUMNS=80") before it.
testing::CliResult run_with(const ScratchDir& dir, const std::string& environment, const std::string& args) {
    const std::string command = "cd '" + dir.path().string() + "' && env INFERBENCH_BACKEND_PATH='" +
                                INFERBENCH_TEST_BACKEND_DIR + "' " + environment + " '" + INFERBENCH_EXE + "' " +
                                args + " >stdout.txt 2>stderr.txt";
    const int status = std::system(command.c_str());
    testing::CliResult result;
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.out = testing::read_file(dir.path() / "stdout.txt");
    result.err = testing::read_file(dir.path() / "stderr.txt");
    return result;
}

class Outputs : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = new ScratchDir;
        const auto r = dir_->run("run --backend null --model null --batch 1,2,4 --duration 50ms --warmup 0s "
                                 "--max-iterations 500 --db r.db --quiet");
        ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    static void TearDownTestSuite() { delete dir_; }
    static ScratchDir* dir_;
};
ScratchDir* Outputs::dir_ = nullptr;

TEST_F(Outputs, TablesFitTheWidthFromColumnsElseOneHundredWhenPiped) {
    // Headings and notes around the tables too (the devices catalog's heading was 111 wide).
    for (const char* command : {"summary --db r.db", "summary --db r.db --runs", "list models", "list backends",
                                "devices", "devices h200-sxm", "list devices", "roofline --db r.db",
                                "models inspect mobilenet --batch 1"}) {
        const auto piped = dir_->run(command);
        ASSERT_EQ(piped.exit_code, 0) << command << ": " << piped.err;
        EXPECT_LE(widest(piped.out), 100u) << command << "\n" << piped.out;
        for (const char* width : {"80", "60"}) {
            const auto narrow = run_with(*dir_, std::string("COLUMNS=") + width, command);
            EXPECT_LE(widest(narrow.out), std::stoul(width)) << command << " at " << width << "\n" << narrow.out;
        }
    }
    // On a CPU nothing measured GPU time, power or clocks: no such columns, in any format.
    const auto summary = dir_->run("summary --db r.db");
    EXPECT_EQ(summary.out.find("gpu p50"), std::string::npos) << summary.out;
    EXPECT_EQ(summary.out.find("SM MHz"), std::string::npos);
    EXPECT_EQ(dir_->run("summary --db r.db --format csv").out.find("sm_clock_mean_mhz"), std::string::npos);
}

TEST_F(Outputs, ColumnsChooseAndAnUnknownOneIsABadInput) {
    const auto chosen = dir_->run("summary --db r.db --columns batch_size,throughput_per_s,p999_ms");
    ASSERT_EQ(chosen.exit_code, 0) << chosen.err;
    const std::string header = chosen.out.substr(0, chosen.out.find('\n'));
    EXPECT_TRUE(header.starts_with("batch  inf/s ") && header.ends_with(" p99.9")) << chosen.out;
    const auto bad = dir_->run("summary --db r.db --columns batch_size,latency");
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find("--columns latency: the summary table has no such column; valid names: benchmark_ids, repeat, model, backend"),
              std::string::npos)
        << bad.err;
}

TEST_F(Outputs, CompareFitsTheWidthAndSaysTheSidesRanWithDifferentSettings) {
    ASSERT_EQ(dir_->run("run --backend null --model null --batch 1,2,4 --duration 80ms --warmup 0s "
                        "--max-iterations 500 --db other.db --quiet")
                  .exit_code,
              0);
    const std::string command = "compare --db r.db --db other.db";
    for (const char* width : {"100", "60"}) {
        const auto r = run_with(*dir_, std::string("COLUMNS=") + width, command);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        EXPECT_LE(widest(r.out), std::stoul(width)) << width << "\n" << r.out;
        EXPECT_NE(r.out.find("warning: the sides ran with different settings"), std::string::npos) << r.out;
        EXPECT_NE(r.out.find("differs: [1] 50ms, [2] 80ms"), std::string::npos) << r.out;
    }
    const auto chosen = dir_->run(command + " --columns batch_size,s2_speedup");
    ASSERT_EQ(chosen.exit_code, 0) << chosen.err;
    EXPECT_NE(chosen.out.find("\nbatch  [2] x\n"), std::string::npos) << chosen.out;
}

// The lines of `text` that start with `prefix`.
std::vector<std::string> lines_starting(const std::string& text, const std::string& prefix) {
    std::vector<std::string> lines;
    std::size_t start = 0;
    while (start < text.size()) {
        const auto end = text.find('\n', start);
        const std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
        if (line.starts_with(prefix)) lines.push_back(line);
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return lines;
}

TEST_F(Outputs, SummaryNamesEachRowsBenchmarkIdInEveryFormat) {
    const auto csv = dir_->run("summary --db r.db --format csv");
    ASSERT_EQ(csv.exit_code, 0) << csv.err;
    EXPECT_TRUE(csv.out.starts_with("benchmark_ids,model,")) << csv.out;
    EXPECT_NE(csv.out.find("\n1,null,"), std::string::npos) << csv.out;
    EXPECT_NE(csv.out.find("\n3,null,"), std::string::npos) << csv.out;
    const auto json = nlohmann::json::parse(dir_->run("summary --db r.db --json").out);
    EXPECT_EQ(json["rows"][1]["benchmark_ids"], "2");
    EXPECT_TRUE(dir_->run("summary --db r.db --format md").out.starts_with("| id | model |"));
    const auto text = dir_->run("summary --db r.db");
    EXPECT_EQ(lines_starting(text.out, "id ").size(), 1u) << text.out;
    EXPECT_EQ(lines_starting(text.out, "3 ").size(), 1u) << text.out;
}

TEST_F(Outputs, EachRepeatRowsCarryTheirRepeatAndIds) {
    ASSERT_EQ(dir_->run("run --backend null --model null --batch 1 --duration 20ms --warmup 0s --max-iterations 200 "
                        "--set repeats=2 --db repeats.db --quiet")
                  .exit_code,
              0);
    const auto each = dir_->run("summary --db repeats.db --each-repeat --format csv");
    ASSERT_EQ(each.exit_code, 0) << each.err;
    EXPECT_TRUE(each.out.starts_with("benchmark_ids,repeat,model,")) << each.out;
    EXPECT_NE(each.out.find("\n1,1,null,"), std::string::npos) << each.out;
    EXPECT_NE(each.out.find("\n2,2,null,"), std::string::npos) << each.out;
    const auto text = dir_->run("summary --db repeats.db --each-repeat");
    EXPECT_EQ(lines_starting(text.out, "id  repeat").size(), 1u) << text.out;
    const auto combined = nlohmann::json::parse(dir_->run("summary --db repeats.db --json").out);
    ASSERT_EQ(combined["rows"].size(), 1u);
    EXPECT_EQ(combined["rows"][0]["benchmark_ids"], "1,2");
    EXPECT_FALSE(combined["rows"][0].contains("repeat"));
}

// The headings of every part of a table (a line followed by its rule of dashes).
std::string headings(const std::string& table) {
    std::string found;
    std::size_t start = 0;
    while (start < table.size()) {
        const auto end = table.find('\n', start);
        if (end == std::string::npos) break;
        if (table.compare(end + 1, 2, "--") == 0) found += table.substr(start, end - start) + "\n";
        start = end + 1;
    }
    return found;
}

// Rows that differ in their options alone must not look identical on a narrow terminal: the options
// column stays, constant columns are said once above the table, the headline figures stay.
void expect_sweep_told_apart(const std::string& out, std::size_t width, const std::string& first,
                             const std::string& second) {
    EXPECT_LE(widest(out), width) << out;
    const std::string heads = headings(out);
    for (const char* heading : {"options", "iters", "mean", "±95%", "p50", "p90", "p99", "inf/s"})
        EXPECT_NE(heads.find(heading), std::string::npos) << heading << " at " << width << "\n" << out;
    EXPECT_NE(out.find(first), std::string::npos) << out;
    EXPECT_NE(out.find(second), std::string::npos) << out;
}

TEST_F(Outputs, ASweepKeepsTheColumnThatTellsItsRowsApart) {
    const std::string run_args = "run --backend fault --model null --batch 1 --duration 100ms --warmup 0s "
                                 "--min-iterations 2 --set backend_options.fault.sleep_ms=1,2 --db sweep.db --quiet";
    const auto run = run_with(*dir_, "COLUMNS=100", run_args);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    expect_sweep_told_apart(run.out, 100, "sleep_ms=1", "sleep_ms=2");
    for (const char* width : {"100", "60"}) {
        const auto summary = run_with(*dir_, std::string("COLUMNS=") + width, "summary --db sweep.db");
        ASSERT_EQ(summary.exit_code, 0) << summary.err;
        expect_sweep_told_apart(summary.out, std::stoul(width), "sleep_ms=1", "sleep_ms=2");
    }
    const auto narrow = run_with(*dir_, "COLUMNS=60", "summary --db sweep.db");
    EXPECT_TRUE(narrow.out.starts_with("model: null · backend: fault · device: cpu")) << narrow.out;
    EXPECT_EQ(headings(narrow.out).find("device"), std::string::npos) << "said once, above\n" << narrow.out;
}

#if INFERBENCH_HAVE_ONNXRUNTIME
// Issue 32's own sweep: 14.43 ms and 30.93 ms rows that looked identical at 100 columns.
TEST_F(Outputs, AThreadSweepOnOnnxRuntimeKeepsItsOptionsColumn) {
    const auto run = run_with(*dir_, "COLUMNS=100",
                              "run --model mobilenet --backend onnxruntime --batch 1 --duration 150ms --warmup 0s "
                              "--min-iterations 2 --set backend_options.onnxruntime.intra_op_threads=1,2 "
                              "--db ort-sweep.db --quiet");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    expect_sweep_told_apart(run.out, 100, "intra_op_threads=1", "intra_op_threads=2");
    const auto summary = run_with(*dir_, "COLUMNS=100", "summary --db ort-sweep.db");
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    expect_sweep_told_apart(summary.out, 100, "intra_op_threads=1", "intra_op_threads=2");
    EXPECT_NE(summary.out.find("device: cpu"), std::string::npos) << summary.out;
}
#endif

TEST_F(Outputs, QuietLeavesOutNotesAndHints) {
    const auto devices = dir_->run("devices --quiet");
    ASSERT_EQ(devices.exit_code, 0) << devices.err;
    EXPECT_EQ(devices.out.find("Catalog ("), std::string::npos) << devices.out;
    EXPECT_EQ(devices.out.find("no GPU listed"), std::string::npos) << devices.out;
    EXPECT_NE(dir_->run("devices").out.find("Catalog ("), std::string::npos);
    const auto inspect = dir_->run("models inspect mobilenet --batch 1 --quiet");
    ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
    EXPECT_EQ(inspect.out.find("conventions:"), std::string::npos) << inspect.out;
    EXPECT_NE(dir_->run("models inspect mobilenet --batch 1").out.find("conventions:"), std::string::npos);
}

TEST_F(Outputs, ReportSaysAReasonSharedBySkippedFilesOnce) {
    // Two groups (one per backend), neither with GPU samples: the reason is said once for both workbooks.
    ASSERT_EQ(dir_->run("run --backend null,fault --model null --batch 1 --duration 20ms --warmup 0s "
                        "--max-iterations 100 --db groups.db --quiet")
                  .exit_code,
              0);
    const auto r = dir_->run("report --db groups.db --out rep --no-plots --no-html");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::size_t said = 0;
    for (std::size_t at = 0; (at = r.out.find("no GPU samples stored", at)) != std::string::npos; ++at) ++said;
    EXPECT_EQ(said, 1u) << r.out;
    EXPECT_NE(r.out.find("skipped 2 files, no GPU samples stored: gpu-"), std::string::npos) << r.out;
}

TEST_F(Outputs, ProgressAndNotesOfARunFitTheWidthWhenPiped) {
    // A skip reason and the note on the early-stopping minimum made lines of 150 and more characters.
    const auto r = dir_->run("run --backend fault --model null --batch 1 --precision int8 --device cuda:0 "
                             "--duration 50ms --warmup 0s --db skipped.db");
    EXPECT_NE(r.err.find("skipped: backend fault does not run on cuda:0"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("each cell measures at least 64 queries"), std::string::npos) << r.err;
    EXPECT_LE(widest(r.err), 100u) << r.err;
}

TEST_F(Outputs, HelpProbeAndImportLinesFitTheWidth) {
    for (const char* width : {"100", "80"}) {
        const auto help = run_with(*dir_, std::string("COLUMNS=") + width, "run --help");
        ASSERT_EQ(help.exit_code, 0) << help.err;
        EXPECT_LE(widest(help.out), std::stoul(width)) << help.out;
        EXPECT_NE(help.out.find("duration           duration   5s"), std::string::npos) << help.out;
    }
    const auto probe = run_with(*dir_, "COLUMNS=100", "probe --cpu --probes fma_fp32 --repetitions 1 --no-store");
    ASSERT_EQ(probe.exit_code, 0) << probe.err;
    EXPECT_LE(widest(probe.out), 100u) << probe.out;
    EXPECT_NE(probe.out.find("fma_fp32"), std::string::npos) << probe.out;
    const std::string log = "h200-load-query-200ms.csv";
    std::filesystem::copy_file(std::string(INFERBENCH_FIXTURES_DIR) + "/nvidia-smi/" + log, dir_->path() / log,
                               std::filesystem::copy_options::overwrite_existing);
    const auto imported = dir_->run("import nvidia-smi " + log + " --db imported.db");
    ASSERT_EQ(imported.exit_code, 0) << imported.err;
    EXPECT_LE(widest(imported.out), 100u) << imported.out;
    EXPECT_NE(imported.out.find("clock event reasons: SW power cap"), std::string::npos) << imported.out;
}

TEST_F(Outputs, ProgressLineIsCutToTheTerminalWidth) {
    // `script` gives the run a terminal; COLUMNS says how wide it is.
    if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "util-linux script not installed";
    // The fault backend's 1 ms inferences: lines are redrawn for 1.5 s per cell with few iterations to store.
    const std::string command = "cd '" + dir_->path().string() + "' && COLUMNS=60 INFERBENCH_BACKEND_PATH='" +
                                INFERBENCH_TEST_BACKEND_DIR + "' script -qec \"'" + std::string(INFERBENCH_EXE) +
                                "' run --backend fault --model null --batch 1,2 --duration 1500ms --warmup 0s "
                                "--set backend_options.fault.sleep_ms=1 --db p.db\" /dev/null >tty.txt 2>&1";
    testing::CliResult r;
    const int status = std::system(command.c_str());
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = testing::read_file(dir_->path() / "tty.txt");
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    ASSERT_NE(r.out.find("iterations"), std::string::npos) << "live lines were drawn\n" << r.out;
    // Every rewritten line (between carriage returns) fits in 60 columns.
    for (std::size_t at = 0; (at = r.out.find('\r', at)) != std::string::npos; ++at) {
        const auto end = r.out.find_first_of("\r\n", at + 1);
        std::string line = r.out.substr(at + 1, end == std::string::npos ? std::string::npos : end - at - 1);
        if (line.starts_with("\033[K")) line.erase(0, 3);
        if (line.find("iterations") != std::string::npos) {
            EXPECT_LE(widest(line), 59u) << line;
        }
    }
}

}  // namespace
}  // namespace inferbench
