// /proc and powercap readers: parsers on literal file contents, the process-tree reader on a made-up
// /proc (with and without children files) and on a real busy child, RAPL on a made-up powercap tree.
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/scratch_dir.hpp"
#include "core/clock.hpp"
#include "core/process/subprocess.hpp"
#include "telemetry/procfs.hpp"
#include "telemetry/rapl.hpp"

namespace inferbench::telemetry::procfs {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A stat line with the given fields; the others as the kernel writes them for an idle task.
std::string stat_line(int pid, const std::string& comm, int ppid, std::uint64_t utime, std::uint64_t stime,
                      std::uint64_t start, int processor) {
    return std::to_string(pid) + " (" + comm + ") S " + std::to_string(ppid) +
           " 1 1 0 -1 4194560 100 0 0 0 " + std::to_string(utime) + " " + std::to_string(stime) +
           " 0 0 20 0 1 0 " + std::to_string(start) +
           " 3133440 381 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 " + std::to_string(processor) +
           " 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
}

TEST(ProcStat, ReadsTheFieldsOfARealLine) {
    const auto stat = parse_stat(
        "22719 (cat) R 22715 22715 15687 0 -1 4194304 100 0 0 0 7 3 0 0 20 0 1 0 1108873 3133440 381 "
        "18446744073709551615 94359677530112 94359677549993 140731480323040 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 "
        "94359677566000 94359677567616 94360656879616 140731480328844 140731480328864 140731480328864 "
        "140731480330219 0\n");
    ASSERT_TRUE(stat.has_value());
    EXPECT_EQ(stat->pid, 22719);
    EXPECT_EQ(stat->comm, "cat");
    EXPECT_EQ(stat->state, 'R');
    EXPECT_EQ(stat->ppid, 22715);
    EXPECT_EQ(stat->utime_ticks, 7u);
    EXPECT_EQ(stat->stime_ticks, 3u);
    EXPECT_EQ(stat->start_ticks, 1108873u);
    EXPECT_EQ(stat->processor, 1);
}

TEST(ProcStat, CommandNamesWithSpacesAndParentheses) {
    for (const std::string comm : {"tmux: server", "a) (b", ") S 1 2 3", "((", "python3 (worker) 1"}) {
        const auto stat = parse_stat(stat_line(77, comm, 5, 123, 45, 999, 3));
        ASSERT_TRUE(stat.has_value()) << comm;
        EXPECT_EQ(stat->comm, comm);
        EXPECT_EQ(stat->ppid, 5) << comm;
        EXPECT_EQ(stat->utime_ticks, 123u) << comm;
        EXPECT_EQ(stat->stime_ticks, 45u) << comm;
        EXPECT_EQ(stat->start_ticks, 999u) << comm;
        EXPECT_EQ(stat->processor, 3) << comm;
    }
}

TEST(ProcStat, MalformedLinesAreRejected) {
    EXPECT_FALSE(parse_stat("").has_value());
    EXPECT_FALSE(parse_stat("12 (x S 1 2 3").has_value());
    EXPECT_FALSE(parse_stat("12 (x) S 1 2 3\n").has_value()) << "too few fields";
    EXPECT_FALSE(parse_stat("abc (x) S " + std::string(200, ' ')).has_value());
    EXPECT_FALSE(parse_stat(stat_line(1, "x", 0, 1, 2, 3, 0).replace(0, 1, "1 2")).has_value());
}

TEST(SystemStat, TotalAndPerCoreTicks) {
    const auto cpu = parse_system_stat(
        "cpu  100 5 50 800 20 3 2 10 7 0\n"
        "cpu0 60 5 30 400 10 2 1 5 7 0\n"
        "cpu1 40 0 20 400 10 1 1 5 0 0\n"
        "intr 123 4 5\nctxt 999\nbtime 1700000000\nprocs_running 2\n");
    ASSERT_TRUE(cpu.has_value());
    EXPECT_EQ(cpu->all.busy, 100u + 5 + 50 + 3 + 2 + 10);
    EXPECT_EQ(cpu->all.total, cpu->all.busy + 800 + 20);
    ASSERT_EQ(cpu->cores.size(), 2u);
    EXPECT_EQ(cpu->cores[1].busy, 40u + 20 + 1 + 1 + 5);
    EXPECT_FALSE(parse_system_stat("intr 1 2\n").has_value());
}

TEST(MemInfoAndStatus, ValuesInMiB) {
    const auto info = parse_meminfo("MemTotal:       16384000 kB\nMemFree:         1000 kB\nMemAvailable:    8192000 kB\n");
    EXPECT_EQ(info.total_mib, 16000.0);
    EXPECT_EQ(info.available_mib, 8000.0);
    const auto memory = parse_status("Name:\tpython3\nVmPeak:\t  900000 kB\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\n");
    EXPECT_EQ(memory.rss_mib, 100.0);
    EXPECT_EQ(memory.peak_rss_mib, 200.0);
    EXPECT_FALSE(parse_status("Name:\tkthreadd\nState:\tS (sleeping)\n").rss_mib.has_value()) << "kernel threads have none";
}

TEST(Statm, ResidentPagesInMiB) {
    EXPECT_EQ(parse_statm_rss_mib("300000 25600 1000 10 0 200000 0\n", 4096), 100.0);
    EXPECT_EQ(parse_statm_rss_mib("1 512 0 0 0 0 0", 65536), 32.0);
    EXPECT_FALSE(parse_statm_rss_mib("", 4096).has_value());
    EXPECT_FALSE(parse_statm_rss_mib("12 x", 4096).has_value());
    EXPECT_FALSE(parse_statm_rss_mib("0 0 0 0 0 0 0\n", 4096).has_value()) << "a zombie's statm: not read, not 0";
}

TEST(Children, Pids) {
    EXPECT_THAT(parse_children("123 456 "), ElementsAre(123, 456));
    EXPECT_TRUE(parse_children("").empty());
}

// A made-up /proc: a worker (100, threads 100 and 101) with a child process (200).
class FakeProc : public ::testing::Test {
protected:
    void task(int pid, int tid, std::uint64_t utime, int processor, int ppid = 1) {
        const auto dir = proc_.path() / std::to_string(pid) / "task" / std::to_string(tid);
        std::filesystem::create_directories(dir);
        std::ofstream(dir / "stat") << stat_line(tid, "worker", ppid, utime, 0, 1000 + static_cast<unsigned>(tid), processor);
    }
    void process(int pid, std::uint64_t utime, int ppid, std::uint64_t rss_kib) {
        const auto dir = proc_.path() / std::to_string(pid);
        std::filesystem::create_directories(dir);
        std::ofstream(dir / "stat") << stat_line(pid, "worker", ppid, utime, 0, 1000 + static_cast<unsigned>(pid), 0);
        std::ofstream(dir / "status") << "VmHWM:\t" << 2 * rss_kib << " kB\nVmRSS:\t" << rss_kib << " kB\n";
        std::ofstream(dir / "statm") << 10 * rss_kib * 1024 / page_ << " " << rss_kib * 1024 / page_ << " 100 10 0 500 0\n";
    }
    void children(int pid, int tid, const std::string& list) {
        std::ofstream(proc_.path() / std::to_string(pid) / "task" / std::to_string(tid) / "children") << list;
    }
    void tree(std::uint64_t main_ticks, std::uint64_t helper_ticks, std::uint64_t child_ticks, bool children_files) {
        process(100, main_ticks + helper_ticks, 1, 1024);
        task(100, 100, main_ticks, 0);
        task(100, 101, helper_ticks, 1);
        process(200, child_ticks, 100, 2048);
        task(200, 200, child_ticks, 1, 100);
        process(300, 999, 1, 4096);  // not in the tree
        task(300, 300, 999, 0);
        if (children_files) {
            children(100, 100, "");
            children(100, 101, "200 ");
            children(200, 200, "");
            children(300, 300, "");
        }
    }

    testing::ScratchDir proc_;
    const double hz_ = static_cast<double>(sysconf(_SC_CLK_TCK));
    const std::uint64_t page_ = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
};

TEST_F(FakeProc, TreeCpuPerCoreAndMemory) {
    for (const bool children_files : {true, false}) {
        tree(0, 0, 0, children_files);
        ProcessTreeReader reader(100, proc_.path(), 0);
        const auto first = reader.read(1'000'000'000);
        EXPECT_THAT(first.pids, ElementsAre(100, 200)) << children_files;
        EXPECT_FALSE(first.cpu_pct.has_value()) << "nothing to take a difference from";
        EXPECT_EQ(first.rss_mib, 3.0);
        EXPECT_EQ(first.peak_rss_mib, 6.0);
        // One second later: the main thread used 0.5 s on CPU 0, the helper 0.25 s and the child 0.25 s on CPU 1.
        tree(static_cast<std::uint64_t>(hz_ / 2), static_cast<std::uint64_t>(hz_ / 4), static_cast<std::uint64_t>(hz_ / 4),
             children_files);
        const auto second = reader.read(2'000'000'000);
        ASSERT_TRUE(second.cpu_pct.has_value());
        EXPECT_NEAR(*second.cpu_pct, 100.0, 1e-9) << children_files;
        ASSERT_GE(second.cpu_pct_per_core.size(), 2u);
        EXPECT_NEAR(second.cpu_pct_per_core[0], 50.0, 1e-9);
        EXPECT_NEAR(second.cpu_pct_per_core[1], 50.0, 1e-9);
        std::filesystem::remove_all(proc_.path() / "100");
        std::filesystem::remove_all(proc_.path() / "200");
        std::filesystem::remove_all(proc_.path() / "300");
    }
}

// Between the once-a-second readings: the CPU share and RSS, no per-core shares, no peak RSS.
TEST_F(FakeProc, FrequentReadingsLeaveTheCostlyPartsOut) {
    tree(0, 0, 0, true);
    ProcessTreeReader reader(100, proc_.path(), 0);
    reader.read(1'000'000'000);
    tree(static_cast<std::uint64_t>(hz_ / 10), 0, 0, true);
    const auto frequent = reader.read(1'100'000'000, /*occasional=*/false);
    ASSERT_TRUE(frequent.cpu_pct.has_value());
    EXPECT_NEAR(*frequent.cpu_pct, 100.0, 1e-9);
    EXPECT_EQ(frequent.rss_mib, 3.0);
    EXPECT_FALSE(frequent.peak_rss_mib.has_value());
    EXPECT_TRUE(frequent.cpu_pct_per_core.empty());
    const auto occasional = reader.read(1'200'000'000, /*occasional=*/true);
    EXPECT_EQ(occasional.peak_rss_mib, 6.0);
    ASSERT_GE(occasional.cpu_pct_per_core.size(), 1u);
    EXPECT_NEAR(occasional.cpu_pct_per_core[0], 50.0, 1e-9) << "0.1 s of CPU 0 over the 0.2 s since the last per-core reading";
}

// A worker that has exited but is not yet reaped (the sample taken as a cell is torn down): its statm
// reads all zeros. Its resident set is absent from the reading, never 0.
TEST_F(FakeProc, AZombieTreeHasNoResidentSet) {
    tree(0, 0, 0, true);
    ProcessTreeReader reader(100, proc_.path(), 0);
    EXPECT_EQ(reader.read(1'000'000'000).rss_mib, 3.0);
    children(100, 101, "");
    std::filesystem::remove_all(proc_.path() / "200");
    std::ofstream(proc_.path() / "100" / "statm") << "0 0 0 0 0 0 0\n";
    std::ofstream(proc_.path() / "100" / "status") << "State:\tZ (zombie)\n";
    const auto teardown = reader.read(1'100'000'000);
    EXPECT_THAT(teardown.pids, ElementsAre(100));
    EXPECT_FALSE(teardown.rss_mib.has_value());
    EXPECT_FALSE(teardown.peak_rss_mib.has_value());
}

TEST_F(FakeProc, AnEndedChildLeavesTheTreeAndAMissingRootIsSaid) {
    tree(0, 0, 0, true);
    ProcessTreeReader reader(100, proc_.path(), 0);
    EXPECT_THAT(reader.read(1'000'000'000).pids, ElementsAre(100, 200));
    children(100, 101, "");
    std::filesystem::remove_all(proc_.path() / "200");
    EXPECT_THAT(reader.read(1'100'000'000).pids, ElementsAre(100));
    EXPECT_TRUE(reader.root_seen());
    ProcessTreeReader absent(4242, proc_.path(), 0);
    EXPECT_TRUE(absent.read(1).pids.empty());
    EXPECT_FALSE(absent.root_seen());
}

TEST(ProcessTree, ABusyChildOfThisProcess) {
    Child child = spawn({"/bin/sh", "-c", "while :; do :; done"});
    ProcessTreeReader reader(child.pid());
    const std::int64_t t0 = monotonic_ns();
    reader.read(t0);
    usleep(500'000);
    const auto reading = reader.read(monotonic_ns());
    ASSERT_TRUE(reading.cpu_pct.has_value());
    EXPECT_GT(*reading.cpu_pct, 10.0);
    EXPECT_LT(*reading.cpu_pct, 110.0);
    EXPECT_GT(reading.rss_mib.value_or(0), 0.0);
    EXPECT_THAT(reading.pids, ElementsAre(child.pid()));
}

TEST(Host, CpuAndMemory) {
    HostReader host;
    EXPECT_FALSE(host.read().cpu_pct.has_value());
    usleep(50'000);
    const auto reading = host.read();
    ASSERT_TRUE(reading.cpu_pct.has_value());
    EXPECT_GE(*reading.cpu_pct, 0.0);
    EXPECT_LE(*reading.cpu_pct, 100.0);
    EXPECT_GT(reading.memory_total_mib.value_or(0), 0.0);
    EXPECT_GT(reading.memory_used_mib.value_or(0), 0.0);
}

class FakePowercap : public ::testing::Test {
protected:
    void domain(const std::string& dir, const std::string& name, std::uint64_t energy_uj, std::uint64_t range_uj) {
        std::filesystem::create_directories(root_.path() / dir);
        root_.write(dir + "/name", name + "\n");
        root_.write(dir + "/energy_uj", std::to_string(energy_uj) + "\n");
        root_.write(dir + "/max_energy_range_uj", std::to_string(range_uj) + "\n");
    }
    testing::ScratchDir root_;
};

TEST_F(FakePowercap, PackagesSummedAcrossAWrap) {
    domain("intel-rapl:0", "package-0", 1'000'000, 2'000'000);
    domain("intel-rapl:0:0", "core", 5, 2'000'000);     // a part of package 0: not added again
    domain("intel-rapl:1", "package-1", 1'990'000, 2'000'000);
    domain("intel-rapl:2", "psys", 7, 2'000'000);        // the platform: more than the packages
    RaplReader rapl(root_.path());
    ASSERT_TRUE(rapl.available()) << rapl.unavailable_reason();
    EXPECT_EQ(rapl.describe(), "package-0, package-1");
    EXPECT_EQ(rapl.read_joules(), 0.0);
    root_.write("intel-rapl:0/energy_uj", "1500000\n");  // +0.5 J
    root_.write("intel-rapl:1/energy_uj", "10000\n");    // wrapped: 10'000 + 10'000 uJ
    const auto joules = rapl.read_joules();
    ASSERT_TRUE(joules.has_value());
    EXPECT_NEAR(*joules, 0.5 + 0.02, 1e-12);
}

TEST_F(FakePowercap, NoPackageSaysWhy) {
    RaplReader rapl(root_.path() / "missing");
    EXPECT_FALSE(rapl.available());
    EXPECT_THAT(rapl.unavailable_reason(), HasSubstr("no RAPL package domain under"));
}

}  // namespace
}  // namespace inferbench::telemetry::procfs
