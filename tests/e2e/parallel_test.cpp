// parallel: per_device end to end: the real CLI with fake GPUs (the fake libnvidia-ml of tests/telemetry, each GPU
// naming its nearest CPUs) and test backends runs one lane per device at once. What is checked is what the store
// and the worker processes show: benchmarks of different devices overlapped and say so, never two on one device,
// each worker pinned where its GPU's CPUs are, a failure in one lane leaves the other going, Ctrl-C stops every lane,
// and a killed run resumes. No timing is asserted beyond "overlapped".
#include <signal.h>
#include <sys/mount.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/cpu_list.hpp"
#include "e2e/background_cli.hpp"
#include "store/results_store.hpp"
#include "store/sqlite.hpp"
#include "telemetry/telemetry_env.hpp"

namespace inferbench {
namespace {

using ::testing::HasSubstr;
using testing::BackgroundCli;
using testing::ScopedEnv;
using testing::tagged_workers;
using testing::unique_tag;
using testing::wait_until;
using ScratchDir = testing::CliScratch;
using namespace std::chrono_literals;

// Two CPUs this test may use (one twice on a machine of one), each fake GPU's nearest.
std::pair<int, int> two_cpus() {
    const std::vector<int> cpus = allowed_cpus();
    if (cpus.empty()) return {0, 0};
    return {cpus.front(), cpus.size() > 1 ? cpus[1] : cpus.front()};
}

// The fake NVML of two GPUs, GPU 0 nearest CPU a and GPU 1 nearest CPU b, for as long as this lives.
class FakeGpus {
public:
    FakeGpus(int a, int b)
        : script_("count = 2\ngpu0.cpu_affinity = " + std::to_string(a) + "\ngpu1.cpu_affinity = " + std::to_string(b) +
                  "\n"),
          library_("INFERBENCH_NVML_LIBRARY", FAKE_NVML) {}

private:
    testing::FakeNvmlScript script_;
    ScopedEnv library_;
};

std::string plan_text(const std::string& devices, const std::string& batches, const std::string& duration,
                      const std::string& extra = "") {
    return "models: [null]\nbackends: [scripted]\ndevices: [" + devices + "]\nbatch_sizes: [" + batches +
           "]\nduration: " + duration + "\nwarmup: 0s\nidle_baseline: 0s\nmin_iterations: 1\nparallel: per_device\n" +
           extra;
}

std::map<std::string, std::vector<store::BenchmarkRecord>> by_device(const std::vector<store::BenchmarkRecord>& all) {
    std::map<std::string, std::vector<store::BenchmarkRecord>> lanes;
    for (const auto& b : all) lanes[b.device].push_back(b);
    for (auto& [device, list] : lanes)
        std::sort(list.begin(), list.end(), [](const auto& x, const auto& y) { return x.started_unix_ms < y.started_unix_ms; });
    return lanes;
}

bool lists(const store::BenchmarkRecord& b, const store::BenchmarkRecord& other) {
    return std::any_of(b.concurrent.begin(), b.concurrent.end(), [&](const store::ConcurrentBenchmark& c) {
        return c.ordinal == other.ordinal && c.repeat == other.repeat && c.device == other.device;
    });
}

std::string cpus_allowed_list(pid_t pid) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(status, line);)
        if (line.starts_with("Cpus_allowed_list:")) return std::string(line.substr(line.find_first_not_of(" \t", 18)));
    return "";
}

int exit_code(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }

TEST(PerDevice, LanesOverlapNeverShareADeviceArePinnedAndSaySo) {
    ScratchDir dir;
    const auto [a, b] = two_cpus();
    FakeGpus gpus(a, b);
    dir.write("plan.yaml", plan_text("cuda:0, cuda:1", "1, 2", "1s", "repeats: 2\ntelemetry_rate_hz: 20\n"));
    const std::string tag = unique_tag();
    BackgroundCli cli(dir, {"run", "plan.yaml", "--db", "r.db"}, tag);
    // Both lanes' workers at once, each pinned to its GPU's CPU, as the kernel reports it.
    std::set<std::string> pinned;
    wait_until([&] {
        const auto workers = tagged_workers(tag);
        if (workers.size() == 2)
            for (const pid_t pid : workers) pinned.insert(cpus_allowed_list(pid));
        return pinned.size() >= (a == b ? 1u : 2u);
    }, 30s);
    ASSERT_EQ(exit_code(cli.wait()), 0) << cli.err();
    EXPECT_EQ(pinned, (std::set<std::string>{std::to_string(a), std::to_string(b)}));

    const auto store = store::ResultsStore::open(dir.file("r.db"));
    const auto all = store.benchmarks();
    ASSERT_EQ(all.size(), 8u);
    const auto lanes = by_device(all);
    ASSERT_EQ(lanes.size(), 2u);
    for (const auto& [device, list] : lanes) {
        ASSERT_EQ(list.size(), 4u);
        const std::string cpu = std::to_string(device == "cuda:0" ? a : b);
        std::vector<std::pair<std::int64_t, std::int64_t>> order;
        for (std::size_t i = 0; i < list.size(); ++i) {
            EXPECT_EQ(list[i].status, BenchmarkStatus::ok) << list[i].reason;
            EXPECT_EQ(list[i].cpu_affinity, cpu) << device;
            if (i > 0) {
                EXPECT_LE(list[i - 1].ended_unix_ms, list[i].started_unix_ms) << "two benchmarks at once on " << device;
            }
            order.emplace_back(list[i].ordinal % 2, list[i].repeat);  // batch 1, 2 of the device; repeats interleaved
            for (const auto& s : store.gpu_samples(list[i].benchmark_id))
                EXPECT_EQ(s.gpu_index, device == "cuda:0" ? 0 : 1) << "a lane samples its own GPU only";
            const auto sources = store.telemetry_sources(list[i].benchmark_id);
            const auto procfs = std::find_if(sources.begin(), sources.end(), [](const auto& s) { return s.source == "procfs"; });
            ASSERT_NE(procfs, sources.end());
            EXPECT_THAT(procfs->detail, HasSubstr("the whole host's, other devices' workers included"));
            const auto pinning = std::find_if(sources.begin(), sources.end(), [](const auto& s) { return s.source == "pinning"; });
            ASSERT_NE(pinning, sources.end());
            EXPECT_THAT(pinning->detail, HasSubstr("CPUs " + cpu + " (nearest GPU " + device.substr(5) + " (NVML))"));
        }
        EXPECT_EQ(order, (std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 0}, {1, 0}, {0, 1}, {1, 1}}))
            << "a lane keeps the plan's order, repeats interleaved";
    }
    // Overlaps, as recorded: each pair listed both ways, on the other device, with stored times that meet.
    int pairs = 0;
    for (const auto& x : all) {
        for (const auto& c : x.concurrent) EXPECT_NE(c.device, x.device);
        for (const auto& y : all) {
            if (!lists(x, y)) continue;
            ++pairs;
            EXPECT_TRUE(lists(y, x)) << "overlap is mutual";
            EXPECT_LE(x.started_unix_ms, y.ended_unix_ms);
            EXPECT_LE(y.started_unix_ms, x.ended_unix_ms);
        }
    }
    EXPECT_GE(pairs, 2) << "the two lanes ran at once";
    // The progress names each lane's device and the benchmark's place in it.
    EXPECT_THAT(cli.err(), HasSubstr("[cuda:0 1/4 null scripted cuda:0 fp32 b1"));
    EXPECT_THAT(cli.err(), HasSubstr("[cuda:1 4/4 null scripted cuda:1 fp32 b2"));
    const auto summary = dir.run("summary --db r.db --columns benchmark_ids,device,note");
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    EXPECT_THAT(summary.out, HasSubstr("ran at the same time as"));
    EXPECT_THAT(summary.out, HasSubstr("on cuda:1"));
}

// A worker killed in the cpu lane fails its benchmark; the lane goes on, and so does the GPU's.
TEST(PerDevice, AFailureInOneLaneLeavesTheOthersGoing) {
    ScratchDir dir;
    const auto [a, b] = two_cpus();
    FakeGpus gpus(a, b);
    dir.write("plan.yaml", "models: [null]\nbackends: [fault, scripted]\ndevices: [cpu, cuda:0]\nbatch_sizes: [1, 2]\n"
                           "duration: 300ms\nwarmup: 0s\nidle_baseline: 0s\nmin_iterations: 1\nparallel: per_device\n"
                           "backend_options:\n  fault: {fault: sigkill, fault_batch: 1, sleep_ms: 1}\n");
    const auto r = dir.run("run plan.yaml --db r.db");
    EXPECT_EQ(r.exit_code, 1) << "a failed benchmark: " << r.err;
    const auto lanes = by_device(store::ResultsStore::open(dir.file("r.db")).benchmarks());
    std::map<std::string, std::vector<std::string>> outcomes;
    for (const auto& [device, list] : lanes)
        for (const auto& bm : list) outcomes[device].push_back(bm.backend + " b" + std::to_string(bm.batch_size) + " " +
                                                             std::string(to_string(bm.status)));
    EXPECT_EQ(outcomes["cpu"], (std::vector<std::string>{"fault b1 failed", "fault b2 ok", "scripted b1 ok", "scripted b2 ok"}));
    EXPECT_EQ(outcomes["cuda:0"],
              (std::vector<std::string>{"fault b1 skipped", "fault b2 skipped", "scripted b1 ok", "scripted b2 ok"}));
    EXPECT_THAT(lanes.at("cpu").front().reason, HasSubstr("killed by signal 9"));
}

// Ctrl-C asks every lane's worker to stop: each benchmark running is kept as interrupted, no lane goes on, and
// no worker outlives inferbench.
TEST(PerDevice, CtrlCStopsEveryLane) {
    ScratchDir dir;
    const auto [a, b] = two_cpus();
    FakeGpus gpus(a, b);
    dir.write("plan.yaml", plan_text("cuda:0, cuda:1", "1, 2", "30s", "telemetry_enabled: false\n"));
    const std::string tag = unique_tag();
    BackgroundCli cli(dir, {"run", "plan.yaml", "--db", "r.db", "--quiet"}, tag);
    ASSERT_TRUE(wait_until([&] { return tagged_workers(tag).size() == 2; }, 30s)) << cli.err();
    std::this_thread::sleep_for(1s);  // inside both measured loops
    cli.signal(SIGINT);
    EXPECT_EQ(exit_code(cli.wait()), 130) << cli.err();
    EXPECT_TRUE(tagged_workers(tag).empty());
    const auto store = store::ResultsStore::open(dir.file("r.db"));
    EXPECT_EQ(store.runs().at(0).status, RunStatus::interrupted);
    const auto all = store.benchmarks();
    ASSERT_EQ(all.size(), 2u) << "no lane starts another benchmark";
    std::set<std::string> devices;
    for (const auto& bm : all) {
        devices.insert(bm.device);
        EXPECT_EQ(bm.status, BenchmarkStatus::interrupted) << bm.reason;
        EXPECT_GT(store.iterations(bm.benchmark_id).size(), 0u) << "what was measured is kept";
    }
    EXPECT_EQ(devices, (std::set<std::string>{"cuda:0", "cuda:1"}));
}

// The ok benchmarks stored so far (ordinal, repeat) -> their start, read without writing the file.
std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> ok_so_far(const std::string& path) {
    std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> found;
    if (!std::filesystem::exists(path)) return found;
    try {
        const auto db = store::Database::open(path, SQLITE_OPEN_READONLY);
        store::Statement ok = db.prepare("SELECT ordinal, repeat_index, started_unix_ms FROM benchmarks WHERE status = 'ok'");
        while (ok.step()) found[{ok.column_int64(0), ok.column_int64(1)}] = ok.column_int64(2);
    } catch (const std::exception&) {
    }
    return found;
}

// A per_device run whose orchestrator was killed goes on with `run --resume`, lanes again: each cell once, those
// finished before the kill not measured again.
TEST(PerDevice, AKilledRunResumes) {
    ScratchDir dir;
    const auto [a, b] = two_cpus();
    FakeGpus gpus(a, b);
    dir.write("plan.yaml", plan_text("cuda:0, cuda:1", "1, 2, 3", "1s", "telemetry_enabled: false\n"));
    const std::string tag = unique_tag();
    std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> before;
    {
        BackgroundCli cli(dir, {"run", "plan.yaml", "--db", "r.db", "--quiet"}, tag);
        ASSERT_TRUE(wait_until([&] { return !(before = ok_so_far(dir.file("r.db"))).empty(); }, 30s)) << cli.err();
        cli.signal(SIGKILL);
        cli.wait();
    }
    before = ok_so_far(dir.file("r.db"));
    ASSERT_TRUE(wait_until([&] { return tagged_workers(tag).empty(); }, 5s)) << "workers die with their orchestrator";
    const auto r = dir.run("run --resume latest --db r.db --quiet");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto store = store::ResultsStore::open(dir.file("r.db"));
    ASSERT_EQ(store.runs().size(), 1u);
    EXPECT_EQ(store.runs().at(0).status, RunStatus::completed);
    std::set<std::pair<std::int64_t, std::int64_t>> cells;
    for (const auto& bm : store.benchmarks()) {
        EXPECT_EQ(bm.status, BenchmarkStatus::ok);
        EXPECT_TRUE(cells.emplace(bm.ordinal, bm.repeat).second) << "each cell once";
        if (const auto it = before.find({bm.ordinal, bm.repeat}); it != before.end()) {
            EXPECT_EQ(bm.started_unix_ms, it->second) << "a benchmark finished before the kill is not measured again";
        }
    }
    EXPECT_EQ(cells.size(), 6u);
}

// A full disk stops every lane: each lane's running benchmark goes to the recovery file, no lane starts another, the
// run is marked failed and inferbench exits 4.
TEST(PerDevice, AStoreFailureStopsEveryLane) {
    ScratchDir dir;
    const auto small = dir.path() / "small";
    std::filesystem::create_directories(small);
    if (::mount("tmpfs", small.c_str(), "tmpfs", 0, "size=4m") != 0)
        GTEST_SKIP() << "cannot mount a tmpfs here (" << std::strerror(errno) << "); this test needs root";
    struct Unmount {
        std::filesystem::path at;
        ~Unmount() { ::umount2(at.c_str(), MNT_DETACH); }
    } unmount{small};
    const auto [a, b] = two_cpus();
    FakeGpus gpus(a, b);
    ASSERT_EQ(dir.run("run --backend null --model null --batch 1 --max-iterations 10 --warmup 0s --quiet --db small/r.db")
                  .exit_code,
              0);
    {  // leave room for the run's row, none for 200000 iterations
        const auto space = std::filesystem::space(small);
        std::ofstream filler(small / "filler", std::ios::binary);
        const std::string block(4096, 'x');
        for (std::uintmax_t written = 0; written + 96 * 1024 < space.available; written += block.size())
            filler.write(block.data(), static_cast<std::streamsize>(block.size()));
    }
    ScopedEnv tmpdir("TMPDIR", dir.path().string());
    const auto r = dir.run("run --model null --backend null --device cuda:0,cuda:1 --batch 1,2 --duration 10s "
                           "--warmup 0s --max-iterations 200000 --set telemetry_enabled=false --set idle_baseline=0s "
                           "--parallel per_device --db small/r.db");
    EXPECT_EQ(r.exit_code, 4) << r.err;
    EXPECT_THAT(r.err, HasSubstr("disk full: results database 'small/r.db'"));
    const auto at = r.err.find(dir.path().string() + "/inferbench-recovery-r-");
    ASSERT_NE(at, std::string::npos) << r.err;
    auto kept = store::ResultsStore::open(r.err.substr(at, r.err.find(' ', at) - at), store::ResultsStore::Access::read);
    std::set<std::string> devices;
    for (const auto& bm : kept.benchmarks()) {
        devices.insert(bm.device);
        EXPECT_EQ(bm.batch_size, 1) << "no lane starts another benchmark";
        EXPECT_EQ(kept.iterations(bm.benchmark_id).size(), 200000u);
    }
    EXPECT_EQ(devices, (std::set<std::string>{"cuda:0", "cuda:1"})) << "each lane's benchmark is kept";
    std::filesystem::remove(small / "filler");
    auto full = store::ResultsStore::open(dir.file("small/r.db"), store::ResultsStore::Access::read);
    ASSERT_EQ(full.runs().size(), 2u);
    EXPECT_EQ(full.runs()[1].status, RunStatus::failed);
}

TEST(PerDevice, BadInputGivesOneLineAndExitCodeTwo) {
    ScratchDir dir;
    auto r = dir.run("run --backend null --model null --device cuda:0,cuda:0 --parallel per_device --db r.db");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_THAT(r.err, HasSubstr("cuda:0"));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    dir.write("plan.yaml", plan_text("cuda:0", "1", "100ms", "cpu_affinity: {cuda:1: \"0\"}\n"));
    r = dir.run("run plan.yaml --db r.db");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, "inferbench: error: plan.yaml:10:15: cpu_affinity.cuda:1: cuda:1 is not one of the plan's devices "
                     "(cuda:0); remove the entry or add the device\n");
    dir.write("plan.yaml", plan_text("cuda:0", "1", "100ms", "cpu_affinity: {cuda:0: \"3-1\"}\n"));
    r = dir.run("run plan.yaml --db r.db");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, "inferbench: error: plan.yaml:10:24: cpu_affinity.cuda:0: '3-1' is a range whose end is below its start\n");
    dir.write("plan.yaml", plan_text("cuda:0", "1", "100ms", "cpu_affinity: {cuda:0: \"0\", cuda: \"1\"}\n"));
    r = dir.run("run plan.yaml --db r.db");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_THAT(r.err, HasSubstr("cpu_affinity.cuda: cuda:0 is given twice"));
    r = dir.run("run --backend null --model null --device cuda:0 --set cpu_affinity.cuda:0=1023 --db r.db");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_THAT(r.err, HasSubstr("cpu_affinity.cuda:0: CPU 1023 is not one inferbench may run on here"));
    EXPECT_FALSE(std::filesystem::exists(dir.file("r.db"))) << "nothing is stored by a refused plan";
}

}  // namespace
}  // namespace inferbench
