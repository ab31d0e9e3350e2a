// What a user sees on a terminal: tables that fit its width, --columns, a progress line that never
// wraps, and `report` that says where its files went instead of printing the table again.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

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
    EXPECT_NE(bad.err.find("--columns latency: the summary table has no such column; valid names: model, backend"),
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
