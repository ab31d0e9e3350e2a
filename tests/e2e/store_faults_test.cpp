// The results store under faults, through the real CLI: concurrent writers (nothing lost however long
// another writer holds the file), a full disk during a run (the measured benchmark kept, in the table and
// in a recovery file), damaged stores refused before writing, and stores that can only be read.
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "e2e/cli_harness.hpp"
#include "store/results_store.hpp"
#include "store/sqlite.hpp"

namespace inferbench {
namespace {

using Scratch = testing::CliScratch;

constexpr const char* kSmallRun = "run --backend null --model null --batch 1,2 --duration 50ms --warmup 0s --quiet";

// Starts the CLI with each of `args` at once, in the background; returns their exit codes.
std::vector<int> run_together(const Scratch& dir, const std::vector<std::string>& args) {
    std::string script;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string n = std::to_string(i);
        script += "(" + dir.command(args[i]) + " >out" + n + ".txt 2>err" + n + ".txt; echo $? >rc" + n + ".txt) & ";
    }
    script += "wait";
    EXPECT_EQ(std::system(script.c_str()), 0);
    std::vector<int> codes;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string rc = testing::read_file(dir.path() / ("rc" + std::to_string(i) + ".txt"));
        codes.push_back(rc.empty() ? -1 : std::stoi(rc));
    }
    return codes;
}

std::string err_of(const Scratch& dir, std::size_t i) {
    return testing::read_file(dir.path() / ("err" + std::to_string(i) + ".txt"));
}

void expect_every_run_complete(const std::string& db, std::size_t runs, std::size_t cells_per_run) {
    auto store = store::ResultsStore::open(db, store::ResultsStore::Access::read);
    ASSERT_EQ(store.runs().size(), runs);
    for (const auto& run : store.runs()) {
        EXPECT_EQ(run.status, RunStatus::completed) << "run " << run.run_id;
        const auto benchmarks = store.benchmarks(run.run_id);
        EXPECT_EQ(benchmarks.size(), cells_per_run) << "run " << run.run_id;
        for (const auto& b : benchmarks) {
            EXPECT_EQ(b.status, BenchmarkStatus::ok);
            EXPECT_GT(store.iterations(b.benchmark_id).size(), 0u);
        }
    }
}

TEST(StoreFaults, ThreeConcurrentRunsStoreEveryCell) {
    Scratch dir;
    const std::string args =
        "run --backend null --model null --batch 1,2,4,8 --duration 200ms --warmup 10ms --max-iterations 100000 "
        "--quiet --db c3.db";
    const auto codes = run_together(dir, {args, args, args});
    for (std::size_t i = 0; i < codes.size(); ++i) EXPECT_EQ(codes[i], 0) << err_of(dir, i);
    expect_every_run_complete(dir.file("c3.db"), 3, 4);
}

TEST(StoreFaults, AWriteTransactionHeldForSevenSecondsIsWaitedFor) {
    Scratch dir;
    store::ResultsStore::open(dir.file("held.db"));  // the schema exists: the run waits only to store
    std::thread cli([&] {
        run_together(dir, {"run --backend null --model null --batch 1,2 --duration 200ms --warmup 0s --quiet "
                           "--db held.db"});
    });
    {
        auto other = store::Database::open(dir.file("held.db"), SQLITE_OPEN_READWRITE);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (store::ResultsStore::open(dir.file("held.db"), store::ResultsStore::Access::read).runs().empty() &&
               std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        store::Transaction holding(other);
        std::this_thread::sleep_for(std::chrono::seconds(7));
        holding.commit();
    }
    cli.join();
    EXPECT_EQ(testing::read_file(dir.path() / "rc0.txt"), "0\n") << err_of(dir, 0);
    EXPECT_NE(err_of(dir, 0).find("waiting for another writer of held.db"), std::string::npos) << err_of(dir, 0);
    expect_every_run_complete(dir.file("held.db"), 1, 2);
}

TEST(StoreFaults, SeveralProcessesCreatingOneNewFileAllSucceed) {
    for (int round = 0; round < 8; ++round) {
        Scratch dir;
        const std::string args = std::string(kSmallRun) + " --max-iterations 20 --db new.db";
        const auto codes = run_together(dir, {args, args, args, args});
        for (std::size_t i = 0; i < codes.size(); ++i) EXPECT_EQ(codes[i], 0) << "round " << round << ": " << err_of(dir, i);
        expect_every_run_complete(dir.file("new.db"), 4, 2);
    }
}

// A tmpfs of `size` mounted on a scratch folder for the test, unmounted after it.
class SmallDisk : public ::testing::Test {
protected:
    void SetUp() override {
        std::filesystem::create_directories(mount_point_);
        if (::mount("tmpfs", mount_point_.c_str(), "tmpfs", 0, "size=4m") != 0)
            GTEST_SKIP() << "cannot mount a tmpfs here (" << std::strerror(errno) << "); this test needs root";
        mounted_ = true;
    }
    void TearDown() override {
        if (mounted_) ::umount2(mount_point_.c_str(), MNT_DETACH);
    }
    // Leaves about `free_bytes` free on the tmpfs.
    void fill(std::uintmax_t free_bytes) const {
        const auto space = std::filesystem::space(mount_point_);
        std::ofstream filler(mount_point_ / "filler", std::ios::binary);
        const std::string block(4096, 'x');
        for (std::uintmax_t written = 0; written + free_bytes < space.available; written += block.size())
            filler.write(block.data(), static_cast<std::streamsize>(block.size()));
    }

    Scratch dir_;
    std::filesystem::path mount_point_ = dir_.path() / "small";
    bool mounted_ = false;
};

TEST_F(SmallDisk, DiskFullDuringARunKeepsTheMeasuredBenchmark) {
    const auto first = dir_.run(std::string(kSmallRun) + " --max-iterations 10 --db small/r.db");
    ASSERT_EQ(first.exit_code, 0) << first.err;
    fill(96 * 1024);  // room for the run's row, none for 200000 iterations
    ::setenv("TMPDIR", dir_.path().c_str(), 1);
    const auto r = dir_.run(
        "run --backend null --model null --batch 1,2 --duration 10s --warmup 0s --max-iterations 200000 --db small/r.db");
    ::unsetenv("TMPDIR");
    EXPECT_EQ(r.exit_code, 4) << r.err;
    EXPECT_NE(r.err.find("inferbench: error: disk full: results database 'small/r.db'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("the plan stopped there"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("run 2 is marked failed in small/r.db"), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("null"), std::string::npos) << "the table shows the benchmark the store could not take";

    // The recovery file is where the error line says, and holds the benchmark with every iteration.
    const auto at = r.err.find(dir_.path().string() + "/inferbench-recovery-r-");
    ASSERT_NE(at, std::string::npos) << r.err;
    const std::string recovery = r.err.substr(at, r.err.find(' ', at) - at);
    auto kept = store::ResultsStore::open(recovery, store::ResultsStore::Access::read);
    const auto benchmarks = kept.benchmarks();
    ASSERT_EQ(benchmarks.size(), 1u);
    EXPECT_EQ(benchmarks[0].status, BenchmarkStatus::ok);
    EXPECT_EQ(benchmarks[0].batch_size, 1);
    EXPECT_EQ(kept.iterations(benchmarks[0].benchmark_id).size(), 200000u);

    std::filesystem::remove(mount_point_ / "filler");
    auto full = store::ResultsStore::open(dir_.file("small/r.db"), store::ResultsStore::Access::read);
    ASSERT_EQ(full.runs().size(), 2u);
    EXPECT_EQ(full.runs()[1].status, RunStatus::failed);
    EXPECT_TRUE(full.benchmarks(full.runs()[1].run_id).empty());
}

// A store that cannot be created on a full disk leaves no empty file behind to be taken for one.
TEST_F(SmallDisk, AStoreThatCannotBeCreatedLeavesNoFile) {
    fill(0);
    const auto r = dir_.run(std::string(kSmallRun) + " --db small/new.db");
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("small/new.db"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"})
        EXPECT_FALSE(std::filesystem::exists(mount_point_ / (std::string("new.db") + suffix))) << suffix;
}

TEST(StoreFaults, ATruncatedStoreIsRefusedBeforeWriting) {
    Scratch dir;
    // Big enough that `run` used to append to the truncated file and exit 0.
    ASSERT_EQ(dir.run("run --backend null --model null --batch 1,2,4,8 --duration 100ms --warmup 0s --quiet "
                      "--max-iterations 20000 --db t.db")
                  .exit_code,
              0);
    const auto size = std::filesystem::file_size(dir.file("t.db"));
    std::filesystem::resize_file(dir.file("t.db"), size - 1000);
    const auto r = dir.run(std::string(kSmallRun) + " --db t.db");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("inferbench: error: results database t.db is damaged (quick_check: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("sqlite3 t.db .recover | sqlite3 recovered.db` or use another --db"), std::string::npos) << r.err;
    EXPECT_EQ(std::filesystem::file_size(dir.file("t.db")), size - 1000) << "nothing was written";
}

TEST(StoreFaults, ANegativeSchemaVersionIsAClearError) {
    Scratch dir;
    {
        auto db = store::Database::open(dir.file("v.db"), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
        db.exec("PRAGMA user_version = -1");
    }
    const auto r = dir.run(std::string(kSmallRun) + " --db v.db");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err, "inferbench: error: results database v.db has schema version -1, which no inferbench writes: the "
                     "file is damaged or not an inferbench results database; use another --db\n");
}

// Runs as the unprivileged user nobody, for whom file modes count (root ignores them).
const std::string kAsNobody = "setpriv --reuid=65534 --regid=65534 --clear-groups";

bool can_run_as_nobody(const Scratch& dir) {
    return ::geteuid() == 0 && std::system(("setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null")) == 0 &&
           dir.run("--version", kAsNobody).exit_code == 0;
}

TEST(StoreFaults, APermissionErrorSaysPermissionDenied) {
    Scratch dir;
    if (!can_run_as_nobody(dir)) GTEST_SKIP() << "needs root and setpriv to run as nobody";
    const auto r = dir.run(std::string(kSmallRun) + " --db r.db", kAsNobody);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("results database 'r.db': cannot open: unable to open database file (Permission denied)"),
              std::string::npos)
        << r.err;
}

TEST(StoreFaults, SummaryReadsAFileItMayNotWrite) {
    Scratch dir;
    if (!can_run_as_nobody(dir)) GTEST_SKIP() << "needs root and setpriv to run as nobody";
    ASSERT_EQ(dir.run(std::string(kSmallRun) + " --max-iterations 10 --db r.db").exit_code, 0);
    const auto r = dir.run("summary --db r.db --format csv", kAsNobody);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("null"), std::string::npos) << r.out;
}

TEST(StoreFaults, SummaryAndReportReadAStoreOnAReadOnlyMount) {
    Scratch dir;
    ASSERT_EQ(dir.run(std::string(kSmallRun) + " --max-iterations 10 --db rw/r.db").exit_code, 0);
    std::filesystem::create_directories(dir.path() / "ro");
    const std::string rw = dir.file("rw"), ro = dir.file("ro");
    if (::mount(rw.c_str(), ro.c_str(), nullptr, MS_BIND, nullptr) != 0)
        GTEST_SKIP() << "cannot bind-mount here (" << std::strerror(errno) << "); this test needs root";
    const bool read_only = ::mount(nullptr, ro.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) == 0;
    if (read_only) {
        const auto summary = dir.run("summary --db ro/r.db --format csv");
        EXPECT_EQ(summary.exit_code, 0) << summary.err;
        EXPECT_NE(summary.out.find("null"), std::string::npos) << summary.out;
        const auto report = dir.run("report --db ro/r.db --out rep --no-plots --no-excel --no-html");
        EXPECT_EQ(report.exit_code, 0) << report.err;
        EXPECT_TRUE(std::filesystem::exists(dir.path() / "rep" / "summary.csv"));
        const auto run = dir.run(std::string(kSmallRun) + " --db ro/r.db");
        EXPECT_EQ(run.exit_code, 1);
        EXPECT_NE(run.err.find("(Read-only file system)"), std::string::npos) << run.err;
    }
    ::umount2(ro.c_str(), MNT_DETACH);
    ASSERT_TRUE(read_only) << "remounting the bind mount read-only failed";
}

}  // namespace
}  // namespace inferbench
