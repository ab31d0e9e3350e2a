// parallel: per_device's parts one by one: CPU lists, the plan's keys, a child pinned before exec, NVML's nearest
// CPUs and the memory node, a sampler reading chosen GPUs, the lanes and their placements, and which benchmarks
// overlapped. Times are handed in; nothing waits.
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/scratch_dir.hpp"
#include "common/user_error.hpp"
#include "core/cpu_list.hpp"
#include "core/plan/matrix.hpp"
#include "core/plan/plan.hpp"
#include "core/process/subprocess.hpp"
#include "runner/orchestrator/lanes.hpp"
#include "telemetry/gpu_placement.hpp"
#include "telemetry/sampler.hpp"
#include "telemetry/telemetry_env.hpp"

namespace inferbench::runner {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::FakeNvmlScript;

TEST(CpuList, ReadsAndWritesLinuxLists) {
    std::string why;
    EXPECT_EQ(parse_cpu_list("0-3,8, 10-11,2", why), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
    EXPECT_EQ(format_cpu_list(std::vector<int>{0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
    EXPECT_EQ(format_cpu_list(std::vector<int>{}), "");
    EXPECT_FALSE(parse_cpu_list("", why));
    EXPECT_THAT(why, HasSubstr("empty"));
    EXPECT_FALSE(parse_cpu_list("0-x", why));
    EXPECT_EQ(why, "'0-x' is not a CPU number (0 to 1023) or a range of them like 0-7");
    EXPECT_FALSE(parse_cpu_list("1024", why));
    EXPECT_FALSE(parse_cpu_list("0,,1", why));
    EXPECT_FALSE(parse_cpu_list("7-3", why));
    EXPECT_EQ(why, "'7-3' is a range whose end is below its start");
    EXPECT_FALSE(allowed_cpus().empty());
}

Plan plan_of(const std::string& yaml) {
    return parse_plan(yaml, "plan.yaml", {{"null"}, {"null"}});
}

TEST(PlanKeys, ParallelAndCpuAffinity) {
    const int cpu = allowed_cpus().front();
    Plan plan = plan_of("models: [null]\nbackends: [null]\ndevices: [cuda:0, cuda:1]\nparallel: per_device\n"
                        "cpu_affinity: {cuda:1: \"" + std::to_string(cpu) + "\"}\n");
    EXPECT_EQ(plan.settings.parallel, kParallelPerDevice);
    EXPECT_EQ(plan.cpu_affinity.at(Device{DeviceKind::cuda, 1}), std::vector<int>{cpu});
    check_plan(plan);
    // Stored with the run and read back alike.
    const Plan back = plan_from_json(plan_to_json(plan), "run 1", {{"null"}, {"null"}});
    EXPECT_EQ(back.cpu_affinity, plan.cpu_affinity);
    EXPECT_EQ(back.settings.parallel, kParallelPerDevice);
    apply_override(plan, "cpu_affinity.cuda:0", std::to_string(cpu), "--set cpu_affinity.cuda:0=" + std::to_string(cpu),
                   {{"null"}, {"null"}});
    EXPECT_EQ(plan.cpu_affinity.size(), 2u);
    EXPECT_EQ(plan_of("models: [null]\nbackends: [null]\n").settings.parallel, "sequential");
    EXPECT_THAT(testing::user_error([] { plan_of("models: [null]\nparallel: per_gpu\n"); }),
                HasSubstr("parallel: unknown value 'per_gpu'; valid choices: sequential, per_device"));
    EXPECT_THAT(testing::user_error([] { plan_of("models: [null]\ndevices: [cuda:0, cuda]\n"); }), HasSubstr("cuda"));
    EXPECT_THAT(testing::user_error([] { plan_of("models: [null]\ncpu_affinity: {gpu0: \"0\"}\n"); }),
                HasSubstr("cpu_affinity.gpu0: unknown device 'gpu0'"));
    EXPECT_THAT(testing::user_error([] { plan_of("models: [null]\ncpu_affinity: [0]\n"); }),
                HasSubstr("cpu_affinity must map a device to its CPUs"));
}

TEST(Spawn, PinsTheChildBeforeExec) {
    const int cpu = allowed_cpus().back();
    SpawnOptions options;
    options.cpu_affinity = {cpu};
    options.memory_node = 0;  // node 0 exists wherever memory does
    Child child = spawn({"/bin/sh", "-c", "grep Cpus_allowed_list /proc/self/status"}, options);
    std::string out;
    while (drain(child.stdout_pipe(), [&](std::string_view data) { out.append(data); })) wait_readable({child.stdout_pipe().get()}, 1000);
    EXPECT_TRUE(child.wait().success());
    EXPECT_THAT(out, HasSubstr("\t" + std::to_string(cpu) + "\n"));
}

TEST(Spawn, ACpuSetTheKernelRefusesEndsTheChildSayingWhy) {
    SpawnOptions options;
    options.cpu_affinity = {kMaxCpus - 1};  // no such CPU here
    options.stderr_mode = Output::merge;
    if (std::vector<int> cpus = allowed_cpus(); cpus.back() == kMaxCpus - 1) GTEST_SKIP() << "a host of 1024 CPUs";
    Child child = spawn({"/bin/true"}, options);
    std::string out;
    while (drain(child.stdout_pipe(), [&](std::string_view data) { out.append(data); })) wait_readable({child.stdout_pipe().get()}, 1000);
    EXPECT_EQ(child.wait().code, 127);
    EXPECT_THAT(out, HasSubstr("cannot pin to the CPUs asked for (sched_setaffinity)"));
}

TEST(GpuPlacement, NvmlNamesTheNearestCpusAndSysfsTheMemoryNode) {
    FakeNvmlScript script("count = 3\ngpu0.cpu_affinity = 0-3,64\ngpu1.cpu_affinity = 4-7\ngpu2.cpu_affinity = error:3\n"
                          "gpu1.bus_id = 00000000:3B:00.0\n");
    const auto nvml = telemetry::Nvml::open(FAKE_NVML);
    std::string why;
    EXPECT_EQ(nvml->cpu_affinity(0, why), (std::vector<int>{0, 1, 2, 3, 64}));
    EXPECT_TRUE(nvml->cpu_affinity(2, why).empty());
    EXPECT_EQ(why, "nvmlDeviceGetCpuAffinity of GPU 2: Not Supported");
    testing::ScratchDir sys;
    std::filesystem::create_directories(sys.path() / "bus/pci/devices/0000:3b:00.0");
    std::ofstream(sys.path() / "bus/pci/devices/0000:3b:00.0/numa_node") << "1\n";
    const auto placement = telemetry::gpu_placement(*nvml, 1, sys.path());
    EXPECT_EQ(placement.cpus, (std::vector<int>{4, 5, 6, 7}));
    EXPECT_EQ(placement.memory_node, 1);
    std::ofstream(sys.path() / "bus/pci/devices/0000:3b:00.0/numa_node") << "-1\n";
    EXPECT_FALSE(telemetry::pci_numa_node("00000000:3B:00.0", sys.path(), why));
    EXPECT_THAT(why, HasSubstr("says -1"));
    EXPECT_FALSE(telemetry::pci_numa_node("00000000:19:00.0", sys.path(), why));
    EXPECT_THAT(why, HasSubstr("cannot be read"));
}

TEST(Sampler, ReadsOnlyTheGpusAskedFor) {
    FakeNvmlScript script("count = 3\n");
    const telemetry::GpuAccess access = telemetry::open_gpu_access(telemetry::GpuMode::nvml, FAKE_NVML);
    for (const auto& [gpus, expected] : std::vector<std::pair<std::vector<int>, std::set<int>>>{{{1}, {1}}, {{}, {}}}) {
        telemetry::SamplerOptions options;
        options.gpus = gpus;
        telemetry::Sampler sampler(access, options);
        sampler.start(getpid());
        const auto result = sampler.stop();
        std::set<int> seen;
        for (const auto& s : result.gpu) seen.insert(s.gpu_index);
        EXPECT_EQ(seen, expected);
        EXPECT_FALSE(result.cpu.empty()) << "the worker's CPU side is read either way";
    }
}

std::vector<BenchmarkSpec> cells_on(const std::vector<Device>& devices) {
    std::vector<BenchmarkSpec> cells;
    for (const Device& d : devices) {
        BenchmarkSpec spec;
        spec.device = d;
        cells.push_back(spec);
    }
    return cells;
}

TEST(Lanes, OneLanePerDeviceInPlanOrder) {
    const Device cpu{DeviceKind::cpu, 0}, gpu0{DeviceKind::cuda, 0}, gpu1{DeviceKind::cuda, 1};
    const auto cells = cells_on({gpu0, gpu1, gpu0, cpu});
    const auto order = run_order(cells.size(), 2);
    const auto lanes = split_into_lanes(cells, order);
    ASSERT_EQ(lanes.size(), 3u);
    EXPECT_EQ(lanes[0].device, gpu0);
    EXPECT_THAT(lanes[0].positions, ElementsAre(0, 2, 4, 6)) << "cells 0 and 2, then their repeats";
    EXPECT_EQ(lanes[1].device, gpu1);
    EXPECT_THAT(lanes[1].positions, ElementsAre(1, 5));
    EXPECT_EQ(lanes[2].device, cpu);
    EXPECT_THAT(lanes[2].positions, ElementsAre(3, 7));
}

TEST(Lanes, PlacementsFromNvmlThePlanAndWhatIsLeftForTheCpu) {
    FakeNvmlScript script("count = 3\ngpu0.cpu_affinity = 0-3\ngpu1.cpu_affinity = 4-7\ngpu2.cpu_affinity = error:3\n");
    const auto nvml = telemetry::Nvml::open(FAKE_NVML);
    const Device cpu{DeviceKind::cpu, 0}, gpu0{DeviceKind::cuda, 0}, gpu1{DeviceKind::cuda, 1}, gpu2{DeviceKind::cuda, 2};
    Plan plan;
    plan.devices = {gpu0, gpu1, gpu2, cpu};
    const std::vector<int> allowed = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    auto placements = worker_placements(plan, plan.devices, true, nvml.get(), allowed);
    EXPECT_EQ(placements.at(gpu0).cpus, (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(placements.at(gpu1).cpus, (std::vector<int>{4, 5, 6, 7}));
    EXPECT_TRUE(placements.at(gpu2).cpus.empty());
    EXPECT_EQ(placements.at(gpu2).not_pinned, "nvmlDeviceGetCpuAffinity of GPU 2: Not Supported");
    EXPECT_EQ(placements.at(cpu).cpus, (std::vector<int>{8, 9})) << "the CPUs no GPU lane takes";
    // The plan's list wins; a sequential run pins only where the plan says.
    plan.cpu_affinity[gpu1] = {8, 9};
    placements = worker_placements(plan, plan.devices, true, nvml.get(), allowed);
    EXPECT_EQ(placements.at(gpu1).cpus, (std::vector<int>{8, 9}));
    EXPECT_EQ(placements.at(cpu).cpus, (std::vector<int>{4, 5, 6, 7}));
    placements = worker_placements(plan, plan.devices, false, nvml.get(), allowed);
    EXPECT_EQ(placements.size(), 1u);
    // GPU lanes covering every CPU leave the cpu lane unpinned, saying why.
    plan.cpu_affinity.clear();
    placements = worker_placements(plan, plan.devices, true, nvml.get(), std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
    EXPECT_TRUE(placements.at(cpu).cpus.empty());
    EXPECT_THAT(placements.at(cpu).not_pinned, HasSubstr("give cpu_affinity.cpu"));
    placements = worker_placements(plan, plan.devices, true, nullptr, allowed);
    EXPECT_THAT(placements.at(gpu0).not_pinned, HasSubstr("no NVML"));
}

TEST(Lanes, WhereAWorkerRanIsStoredAsItsPinningSource) {
    WorkerPlacement placement{{0, 1, 2, 3}, 1, "", "", "nearest GPU 0 (NVML)"};
    TelemetrySource source = pinning_source(placement);
    EXPECT_EQ(source.source, "pinning");
    EXPECT_EQ(source.status, "ok");
    EXPECT_EQ(source.detail, "CPUs 0-3 (nearest GPU 0 (NVML)); memory node 1 preferred");
    placement.memory_node.reset();
    placement.no_memory_node = "/sys/bus/pci/devices/0000:19:00.0/numa_node says -1 (no memory node given)";
    EXPECT_EQ(pinning_source(placement).detail, "CPUs 0-3 (nearest GPU 0 (NVML)); no memory node preferred: "
                                                "/sys/bus/pci/devices/0000:19:00.0/numa_node says -1 (no memory node given)");
    source = pinning_source({{}, std::nullopt, "nvmlDeviceGetCpuAffinity of GPU 2: Not Supported", "", ""});
    EXPECT_EQ(source.status, "unavailable");
    EXPECT_EQ(source.detail, "not pinned: nvmlDeviceGetCpuAffinity of GPU 2: Not Supported");
}

TEST(ConcurrencyLog, OverlapsOnOtherDevicesBothWays) {
    ConcurrencyLog log;
    const auto a = log.begin(0, 0, "cuda:0", 100);
    const auto b = log.begin(1, 0, "cuda:1", 150);
    const auto skipped = log.begin(2, 0, "cuda:2", 160);
    EXPECT_TRUE(log.end(skipped, 160, true).empty());
    const auto a_list = log.end(a, 200, false);
    const auto c = log.begin(3, 0, "cuda:0", 210);  // a's successor on cuda:0
    const auto b_list = log.end(b, 300, false);
    const auto d = log.begin(4, 0, "cuda:1", 310);
    const auto c_list = log.end(c, 400, false);
    const auto d_list = log.end(d, 500, false);
    EXPECT_EQ(a_list, (std::vector<store::ConcurrentBenchmark>{{1, 0, "cuda:1"}}));
    EXPECT_EQ(b_list, (std::vector<store::ConcurrentBenchmark>{{0, 0, "cuda:0"}, {3, 0, "cuda:0"}}));
    EXPECT_EQ(c_list, (std::vector<store::ConcurrentBenchmark>{{1, 0, "cuda:1"}, {4, 0, "cuda:1"}}));
    EXPECT_EQ(d_list, (std::vector<store::ConcurrentBenchmark>{{3, 0, "cuda:0"}}));
}

}  // namespace
}  // namespace inferbench::runner
