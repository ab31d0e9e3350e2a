// The roofline: the model's arithmetic by hand, the roofs of a device (datasheet and latest probes), and
// benchmarks placed from a results database.
#include <gtest/gtest.h>

#include "analysis/roofline_placement.hpp"
#include "core/error.hpp"
#include "devices/cpu_peaks.hpp"
#include "devices/roofline.hpp"
#include "roofline_fixture.hpp"

namespace inferbench::devices {
namespace {

using testing_fixture::kH200Environment;
using testing_fixture::RooflineDb;

// H200 SXM, fp16 dense: 1979 / 2 = 989.5 TFLOP/s; HBM3e: 4.8 TB/s.
constexpr double kPeak = 989.5e12;
constexpr double kBandwidth = 4.8e12;

TEST(RooflineMath, RidgePointAndAttainableOfTheH200) {
    EXPECT_NEAR(ridge_point(kPeak, kBandwidth), 206.146, 1e-3);  // FLOP per byte
    EXPECT_DOUBLE_EQ(attainable_rate(kPeak, kBandwidth, 10), 48e12);
    EXPECT_DOUBLE_EQ(attainable_rate(kPeak, kBandwidth, 1000), kPeak);
    EXPECT_EQ(bound_at(kPeak, kBandwidth, 10), Bound::memory);
    EXPECT_EQ(bound_at(kPeak, kBandwidth, 206.2), Bound::compute);
    EXPECT_DOUBLE_EQ(percent_of_attainable(24e12, 48e12), 50);
    EXPECT_DOUBLE_EQ(percent_of_attainable(1, 0), 0);
    EXPECT_EQ(bound_name(Bound::memory), "memory-bound");
}

TEST(RooflineMath, BenchmarkPrecisionsMapToTheirRoofs) {
    EXPECT_EQ(roof_precision("fp32"), Precision::fp32);
    EXPECT_EQ(roof_precision("fp16"), Precision::fp16);
    EXPECT_EQ(roof_precision("bf16"), Precision::bf16);
    EXPECT_EQ(roof_precision("int8"), Precision::int8);
    EXPECT_EQ(roof_precision("fp8"), Precision::fp8);
    EXPECT_EQ(roof_precision("mixed"), std::nullopt);
}

TEST_F(RooflineDb, DeviceRoofsAreTheDatasheetsAndTheLatestProbes) {
    probe("h200-sxm", "gemm_bf16", 700, "TFLOP/s", 1000);
    probe("h200-sxm", "gemm_bf16", 800, "TFLOP/s", 2000);
    probe("h200-sxm", "dram_copy", 4200, "GB/s");
    probe("h200-sxm", "dram_triad", 4100, "GB/s");
    probe("h200-sxm", "l2_read", 9000, "GB/s");
    probe("h200-sxm", "fma_fp16x2", 130, "TFLOP/s");  // not a roof of any benchmark precision
    const auto roofs = device_roofs(catalog_.find("h200-sxm"), store_->probes("h200-sxm"));
    EXPECT_EQ(roofs.key, "h200-sxm");
    ASSERT_NE(roofs.compute_roof(Precision::bf16, false), nullptr);
    EXPECT_DOUBLE_EQ(roofs.compute_roof(Precision::bf16, false)->per_s, 989.5e12);
    EXPECT_EQ(roofs.compute_roof(Precision::bf16, false)->what, "tensor cores, dense");
    EXPECT_EQ(roofs.compute_roof(Precision::fp32, false)->what, "CUDA cores");
    EXPECT_EQ(roofs.compute_roof(Precision::int4, false), nullptr);  // Hopper has no INT4
    ASSERT_NE(roofs.compute_roof(Precision::bf16, true), nullptr);
    EXPECT_DOUBLE_EQ(roofs.compute_roof(Precision::bf16, true)->per_s, 800e12);
    EXPECT_EQ(roofs.compute_roof(Precision::fp16, true), nullptr);
    EXPECT_DOUBLE_EQ(roofs.dram(false)->bytes_per_s, 4800e9);
    EXPECT_DOUBLE_EQ(roofs.dram(true)->bytes_per_s, 4200e9);
    EXPECT_EQ(roofs.dram(true)->what, "probe dram_copy");
    EXPECT_EQ(roofs.compute.size(), 8u);  // 7 datasheet precisions + measured bf16
    EXPECT_EQ(roofs.memory.size(), 3u);   // DRAM datasheet, DRAM measured, L2 measured
}

// A partial sum (nodes left uncosted) or a figure at data-dependent maxima is no total: placing it
// would draw a made-up intensity and rate.
TEST_F(RooflineDb, ABenchmarkWhoseCostIsNotATotalIsNotPlaced) {
    const auto r = run(kH200Environment);
    const auto metric = [](std::string_view name, double value) {
        return std::vector<store::Metric>{{std::string(name), value, "count"}};
    };
    benchmark(r, "cuda:0", "bf16", 8, 8.2e9, 1e8, BenchmarkStatus::ok, 100, 1'000'000'000,
              metric(model_metrics::kCostUnknownNodes, 0));  // complete: placed
    benchmark(r, "cuda:0", "bf16", 8, 0.48e9, 1e8, BenchmarkStatus::ok, 100, 1'000'000'000,
              metric(model_metrics::kCostUnknownNodes, 642));
    benchmark(r, "cuda:0", "bf16", 8, 5.75e9, 1e8, BenchmarkStatus::ok, 100, 1'000'000'000,
              metric(model_metrics::kCostDataDependentNodes, 277));
    const auto set = placed();
    ASSERT_EQ(set.points.size(), 1u);
    EXPECT_DOUBLE_EQ(set.points[0].flops_per_inference, 8.2e9);
    ASSERT_EQ(set.skipped.size(), 2u);
    EXPECT_NE(set.skipped[0].find("model cost not a total: 642 nodes not costed (FLOPs and bytes are lower bounds)"),
              std::string::npos)
        << set.skipped[0];
    EXPECT_NE(set.skipped[1].find("277 nodes costed at the largest sizes the data allows (FLOPs and bytes are upper "
                                  "bounds)"),
              std::string::npos)
        << set.skipped[1];
}

TEST_F(RooflineDb, BenchmarksArePlacedUnderBothRoofs) {
    const auto r = run(kH200Environment);
    const auto bf16 = benchmark(r, "cuda:0", "bf16", 8, 8.2e9, 1e8);  // 82 FLOP/B, 800 inferences/s
    const auto int8 = benchmark(r, "cuda:0", "int8", 8, 8.2e9, 1e7);  // 820 OP/B
    benchmark(r, "cuda:0", "fp16", 8, std::nullopt, std::nullopt);    // no model cost: skipped
    benchmark(r, "cuda:0", "fp16", 8, 8.2e9, 1e8, BenchmarkStatus::failed);  // skipped
    probe("h200-sxm", "gemm_bf16", 800, "TFLOP/s");
    probe("h200-sxm", "gemm_int8", 1600, "TOPS");
    probe("h200-sxm", "dram_copy", 4200, "GB/s");
    probe("h200-sxm", "dram_triad", 4100, "GB/s");
    const auto set = placed();
    ASSERT_EQ(set.points.size(), 2u);
    ASSERT_EQ(set.skipped.size(), 2u);
    EXPECT_NE(set.skipped[0].find("no model-cost metrics"), std::string::npos) << set.skipped[0];
    EXPECT_NE(set.skipped[1].find("status failed"), std::string::npos) << set.skipped[1];
    ASSERT_EQ(set.devices.size(), 1u);
    EXPECT_EQ(set.devices[0].key, "h200-sxm");
    EXPECT_EQ(set.devices[0].identified_by, "PCI device id 0x2335");

    const auto& p = set.points[0];
    EXPECT_EQ(p.benchmark.benchmark_id, bf16);
    EXPECT_EQ(p.label, "net b8 bf16");
    EXPECT_DOUBLE_EQ(p.intensity, 82);
    EXPECT_DOUBLE_EQ(p.throughput_per_s, 800);
    EXPECT_DOUBLE_EQ(p.achieved_per_s, 6.56e12);
    ASSERT_TRUE(p.datasheet && p.measured);
    EXPECT_DOUBLE_EQ(p.datasheet->attainable_per_s, 82 * 4.8e12);  // 393.6 TFLOP/s, under the bandwidth roof
    EXPECT_NEAR(p.datasheet->percent, 6.56 / 393.6 * 100, 1e-9);   // 1.667 %
    EXPECT_EQ(p.datasheet->bound, Bound::memory);
    EXPECT_DOUBLE_EQ(p.measured->attainable_per_s, 82 * 4.2e12);  // the better of copy and triad
    EXPECT_NEAR(p.measured->percent, 6.56 / 344.4 * 100, 1e-9);   // 1.905 %
    EXPECT_EQ(p.measured->bound, Bound::memory);

    const auto& q = set.points[1];
    EXPECT_EQ(q.benchmark.benchmark_id, int8);
    EXPECT_TRUE(q.integer);
    EXPECT_EQ(q.datasheet->bound, Bound::compute);  // 820 OP/B is past the ridge at 1979 / 4.8 = 412
    EXPECT_DOUBLE_EQ(q.datasheet->attainable_per_s, 1979e12);
    EXPECT_DOUBLE_EQ(q.measured->attainable_per_s, 1600e12);
    EXPECT_NEAR(q.measured->percent, 6.56 / 1600 * 100, 1e-9);
}

TEST_F(RooflineDb, Fp32NotesTheTf32RoofAndMissingProbesAreSaid) {
    const auto r = run(kH200Environment);
    benchmark(r, "cuda:0", "fp32", 1, 1e9, 1e7);
    const auto set = placed();
    ASSERT_EQ(set.points.size(), 1u);
    const auto& p = set.points[0];
    EXPECT_DOUBLE_EQ(p.datasheet->peak_per_s, 67e12);  // CUDA cores
    EXPECT_FALSE(p.measured);
    ASSERT_FALSE(p.notes.empty());
    EXPECT_NE(p.notes[0].find("with TF32 allowed the tensor-core roof is 494.5 TFLOP/s"), std::string::npos)
        << p.notes[0];
    ASSERT_FALSE(set.devices[0].notes.empty());
    EXPECT_NE(set.devices[0].notes[0].find("no measured roofs for NVIDIA H200 SXM 141GB: run `inferbench probe --db"),
              std::string::npos)
        << set.devices[0].notes[0];
}

TEST_F(RooflineDb, AGpuTheRunDidNotRecordNeedsRoofsKey) {
    const auto r = run(R"({"cpu_model": "Test CPU 9000"})");
    benchmark(r, "cuda:0", "bf16", 8, 8.2e9, 1e8);
    auto set = placed();
    ASSERT_EQ(set.points.size(), 1u);
    EXPECT_FALSE(set.points[0].datasheet);
    EXPECT_EQ(set.devices[0].key, "");
    EXPECT_NE(set.devices[0].notes[0].find("did not record which GPU cuda:0 is"), std::string::npos);
    EXPECT_NE(set.devices[0].notes[0].find("pass --roofs KEY"), std::string::npos);

    set = placed({"h100-sxm"});
    ASSERT_TRUE(set.points[0].datasheet);
    EXPECT_EQ(set.devices[0].identified_by, "--roofs h100-sxm");
    EXPECT_DOUBLE_EQ(set.points[0].datasheet->attainable_per_s, 82 * 3.35e12);
    EXPECT_THROW(placed({"h300"}), UserError);
}

TEST_F(RooflineDb, AGpuOutsideTheCatalogStillShowsItsAchievedRate) {
    const auto r = run(
        R"({"gpus": {"source": "nvml", "devices": [{"index": 0, "name": "NVIDIA B200", "pci_device_id": "0x290110DE"}]}})");
    benchmark(r, "cuda:0", "bf16", 8, 8.2e9, 1e8);
    const auto set = placed();
    ASSERT_EQ(set.points.size(), 1u);
    EXPECT_DOUBLE_EQ(set.points[0].achieved_per_s, 6.56e12);
    EXPECT_FALSE(set.points[0].datasheet);
    EXPECT_EQ(set.devices[0].key, "gpu:b200");
    EXPECT_EQ(set.devices[0].notes[0],
              "no catalog entry for NVIDIA B200 (PCI device id 0x2901); add one to data/devices.yaml");
}

TEST_F(RooflineDb, ACpuOfAnotherMachineHasNoEstimateButItsProbesCount) {
    const auto r = run(kH200Environment);
    benchmark(r, "cpu", "fp32", 1, 1e9, 1e8);
    store_->add_probe({0, "cpu:Test CPU 9000", "Test CPU 9000", "", 1, "fma_fp32", 2.0, "TFLOP/s", "fp32", "{}"});
    store_->add_probe({0, "cpu:Test CPU 9000", "Test CPU 9000", "", 1, "dram_triad", 100, "GB/s", "", "{}"});
    const auto set = placed();
    ASSERT_EQ(set.points.size(), 1u);
    const auto& p = set.points[0];
    EXPECT_FALSE(p.datasheet);
    ASSERT_TRUE(p.measured);
    EXPECT_DOUBLE_EQ(p.measured->attainable_per_s, 10 * 100e9);  // 10 FLOP/B x 100 GB/s
    EXPECT_EQ(p.measured->bound, Bound::memory);
    EXPECT_NE(set.devices[0].notes[0].find("no estimated peaks for Test CPU 9000"), std::string::npos);
}

TEST_F(RooflineDb, ThisHostsCpuIsEstimatedAndPairedWithItsMeasuredBandwidth) {
    const auto host = host_cpuinfo();
    const auto estimate = estimate_cpu_peaks(host, host_max_freq_khz());
    ASSERT_TRUE(estimate);
    const auto r = run(R"({"cpu_model": ")" + host.model_name + R"("})");
    benchmark(r, "cpu", "fp32", 1, 1e9, 1e8);
    auto set = placed();
    EXPECT_FALSE(set.points[0].datasheet);  // no bandwidth known yet
    store_->add_probe({0, cpu_device_key(host.model_name), host.model_name, "", 1, "dram_copy", 50, "GB/s", "", "{}"});
    set = placed();
    const auto& p = set.points[0];
    ASSERT_TRUE(p.datasheet);
    EXPECT_EQ(p.datasheet->origin, RoofOrigin::estimated);
    EXPECT_EQ(p.datasheet->bandwidth_origin, RoofOrigin::measured);
    EXPECT_NEAR(p.datasheet->peak_per_s, estimate->fp32_gflops * 1e9, 1e-6 * p.datasheet->peak_per_s);
    EXPECT_NEAR(p.datasheet->attainable_per_s, std::min(estimate->fp32_gflops * 1e9, 10 * 50e9),
                1e-6 * p.datasheet->peak_per_s);
}

TEST_F(RooflineDb, TheCpuNoteAsksForProbeOnlyUntilProbesAreStored) {
    const auto host = host_cpuinfo();
    const auto r = run(R"({"cpu_model": ")" + host.model_name + R"("})");
    benchmark(r, "cpu", "fp32", 1, 1e9, 1e8);
    const auto notes = [&] {
        std::string all;
        const auto set = placed();
        for (const auto& note : set.devices.at(0).notes) all += note + "\n";
        return all;
    };
    EXPECT_NE(notes().find("`inferbench probe --device cpu` measures it"), std::string::npos) << notes();
    const std::string key = cpu_device_key(host.model_name);
    store_->add_probe({0, key, host.model_name, "", 1, "dram_copy", 50, "GB/s", "", "{}"});
    store_->add_probe({0, key, host.model_name, "", 1, "fma_fp32", 0.5, "TFLOP/s", "fp32", "{}"});
    EXPECT_EQ(notes().find("inferbench probe --"), std::string::npos) << notes();
    EXPECT_EQ(notes().find("no measured roofs"), std::string::npos) << notes();
    EXPECT_NE(notes().find("beside the measured roofs `inferbench probe` stored"), std::string::npos) << notes();
}

}  // namespace
}  // namespace inferbench::devices
