// The real CLI: `inferbench devices`, `inferbench probe --device cpu`, and `inferbench roofline` on a
// database made by a real `inferbench run` (ONNX Runtime, MobileNet) with the CPU probed beside it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "e2e/cli_harness.hpp"
#include "store/results_store.hpp"

namespace inferbench::testing {
namespace {

TEST(DevicesCli, ListsTheCatalogAndWhatIsPresent) {
    CliScratch scratch;
    const auto r = scratch.run("devices");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("h200-sxm"), std::string::npos);
    EXPECT_NE(r.out.find("NVIDIA GeForce RTX 2080"), std::string::npos);
    EXPECT_NE(r.out.find("Present:"), std::string::npos);
    EXPECT_NE(r.out.find("cpu:"), std::string::npos);
    EXPECT_NE(r.out.find("estimated: "), std::string::npos);
}

TEST(DevicesCli, JsonHasEveryEntryWithItsSources) {
    CliScratch scratch;
    const auto r = scratch.run("devices --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto doc = nlohmann::json::parse(r.out);
    EXPECT_EQ(doc.at("schema_version"), 2);
    ASSERT_GE(doc.at("devices").size(), 13u);
    for (const auto& d : doc.at("devices")) {
        EXPECT_EQ(d.at("peaks").size(), 8u) << d.at("key");
        EXPECT_TRUE(doc.at("sources").contains(d.at("memory_bandwidth_gb_s").at("source").get<std::string>()));
    }
    ASSERT_GE(doc.at("present").size(), 1u);
    EXPECT_EQ(doc.at("present")[0].at("device"), "cpu");
}

TEST(DevicesCli, OneEntryWithEveryFigureAndItsSource) {
    CliScratch scratch;
    // Wide enough for every figure, note and URL on one line: this checks what is said, not the layout.
    const auto r = scratch.run("devices h200-sxm", "COLUMNS=400");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("989.5 TFLOP/s dense, 1979 sparse (tensor cores)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("NVIDIA quotes only the sparse rate: dense = 1979 / 2"), std::string::npos);
    EXPECT_NE(r.out.find("https://www.nvidia.com/en-us/data-center/h200/"), std::string::npos);
    EXPECT_NE(r.out.find("0x2335"), std::string::npos);
    const auto bad = scratch.run("devices h300");
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find("no catalog entry 'h300'; valid keys: rtx-2080, t4"), std::string::npos) << bad.err;
}

TEST(DevicesCli, ABrokenCatalogFileIsOneLineWithItsPosition) {
    CliScratch scratch;
    scratch.write("bad.yaml", "version: 1\nsources: {}\n");
    const std::string env = "INFERBENCH_DEVICES_FILE='" + scratch.file("bad.yaml") + "' ";
    const int status = std::system(
        ("cd '" + scratch.path().string() + "' && " + env + "'" + INFERBENCH_EXE + "' devices >out.txt 2>err.txt")
            .c_str());
    EXPECT_EQ(WEXITSTATUS(status), 2);
    const auto err = read_file(scratch.path() / "err.txt");
    EXPECT_NE(err.find(scratch.file("bad.yaml") + ":2:10: sources must be a mapping"), std::string::npos) << err;
}

TEST(DevicesCli, ProbesTheCpuAndStoresTheFigures) {
    CliScratch scratch;
    const auto r = scratch.run("probe --cpu --memory-size 8MiB --repetitions 1 --db r.db");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const char* name : {"fma_fp32", "fma_fp64", "dram_copy", "dram_triad"})
        EXPECT_NE(r.out.find(name), std::string::npos);
    EXPECT_NE(r.out.find("stored 4 figures in r.db"), std::string::npos) << r.out;
    // A CPU has no datasheet: its reference figures are estimates, and the table says so.
    EXPECT_NE(r.out.find(" est. "), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("% of datasheet"), std::string::npos) << r.out;
    const auto results = store::ResultsStore::open(scratch.path() / "r.db");
    const auto probes = results.probes();
    ASSERT_EQ(probes.size(), 4u);
    for (const auto& p : probes) {
        EXPECT_TRUE(p.device_key.starts_with("cpu:")) << p.device_key;
        EXPECT_GT(p.value, 0) << p.name;
    }
    const auto json =
        scratch.run("probe --device cpu --probes dram_copy --memory-size 4MiB --repetitions 1 --no-store --json");
    ASSERT_EQ(json.exit_code, 0) << json.err;
    const auto rows = nlohmann::json::parse(json.out).at("rows");
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].at("probe"), "dram_copy");
    EXPECT_EQ(rows[0].at("unit"), "GB/s");
}

TEST(DevicesCli, ProbeSaysWhyAGpuCannotBeProbed) {
    CliScratch scratch;
    const auto bogus = scratch.run("probe --probes gemm_fp4");
    EXPECT_EQ(bogus.exit_code, 2);
    EXPECT_NE(bogus.err.find("unknown probe 'gemm_fp4'"), std::string::npos) << bogus.err;
    EXPECT_EQ(scratch.run("probe --device gpu7").exit_code, 2);
    // No GPU here: asking for one is an environment error that says why.
    const auto gpu = scratch.run("probe --device 0 --no-store");
    EXPECT_EQ(gpu.exit_code, 1);
    EXPECT_TRUE(gpu.err.find("no CUDA device usable") != std::string::npos ||
                gpu.err.find("no CUDA probe module") != std::string::npos)
        << gpu.err;
}

#if INFERBENCH_HAVE_ONNXRUNTIME
TEST(DevicesCli, RooflineOfARealRunWithTheCpuProbed) {
    CliScratch scratch;
    const auto run = scratch.run("run --backend onnxruntime --model mobilenet --batch 1 --duration 300ms --db r.db");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const auto before = scratch.run("roofline --db r.db");
    ASSERT_EQ(before.exit_code, 0) << before.err;
    EXPECT_NE(before.out.find("mobilenet b1 fp32"), std::string::npos) << before.out;
    EXPECT_NE(before.out.find("no measured roofs"), std::string::npos) << before.out;
    ASSERT_EQ(scratch.run("probe --cpu --memory-size 16MiB --repetitions 1 --db r.db").exit_code, 0);
    const auto r = scratch.run("roofline --db r.db --out plots --format png,svg");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.out.find("memory-bound") != std::string::npos || r.out.find("compute-bound") != std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("wrote plots/roofline-cpu_"), std::string::npos) << r.out;
    // Once probe has stored the CPU's roofs, nothing asks for it to run again.
    EXPECT_EQ(r.out.find("` measures"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("no measured roofs"), std::string::npos) << r.out;
    const auto json = scratch.run("roofline --db r.db --json");
    ASSERT_EQ(json.exit_code, 0) << json.err;
    const auto doc = nlohmann::json::parse(json.out);
    ASSERT_EQ(doc.at("points").size(), 1u);
    const auto& p = doc.at("points")[0];
    EXPECT_EQ(p.at("point"), "mobilenet b1 fp32");
    EXPECT_GT(p.at("intensity_op_per_byte").get<double>(), 1.0);
    EXPECT_GT(p.at("achieved").get<double>(), 0.0);
    EXPECT_GT(p.at("of_measured_pct").get<double>(), 0.0);
    EXPECT_FALSE(p.at("bound_measured").get<std::string>().empty());
    const auto none = scratch.run("roofline --db r.db --model resnet50");
    EXPECT_EQ(none.exit_code, 2);
    EXPECT_NE(none.err.find("--model resnet50: not found"), std::string::npos) << none.err;
}
#endif

}  // namespace
}  // namespace inferbench::testing
