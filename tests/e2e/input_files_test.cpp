// The plan's input files through the real CLI: an .npz and a folder of samples feed the cell in place of random
// inputs, the summary's note says which, and a misfit fails the cell with one line naming the file and the input.
#include <gtest/gtest.h>

#include "common/npz_writer.hpp"
#include "e2e/cli_harness.hpp"
#include "models/onnx_builder.hpp"
#include "store/results_store.hpp"

namespace inferbench {
namespace {

using ScratchDir = testing::CliScratch;
using inferbench::testing::counting_tensor;
using inferbench::testing::write_npz;

std::optional<double> metric(const store::ResultsStore& results, std::int64_t benchmark, std::string_view name) {
    for (const auto& m : results.metrics(benchmark))
        if (m.name == name) return m.value;
    return std::nullopt;
}

TEST(InputFilesCli, TheNullBackendTakesAnNpzAndTheSummarySaysSo) {
    ScratchDir dir;
    write_npz(dir.file("x.npz"), {counting_tensor("x", {1, 4})});
    const auto r = dir.run("run --backend null --model null --batch 1 --inputs x.npz --duration 30ms --warmup 0s --db r.db");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto results = store::ResultsStore::open(dir.file("r.db"));
    const auto benchmarks = results.benchmarks();
    ASSERT_EQ(benchmarks.size(), 1u);
    EXPECT_EQ(metric(results, benchmarks[0].benchmark_id, "harness_input_samples"), 1.0);
    const auto csv = dir.run("summary --db r.db --format csv");
    EXPECT_NE(csv.out.find("," + dir.file("x.npz") + " (1 sample),"), std::string::npos) << csv.out;
    // Random inputs say their seed, in the inputs column.
    ASSERT_EQ(dir.run("run --backend null --model null --batch 1 --duration 30ms --warmup 0s --seed 7 --db random.db")
                  .exit_code,
              0);
    EXPECT_NE(dir.run("summary --db random.db --format csv").out.find(",random (seed 7),"), std::string::npos);
    EXPECT_NE(dir.run("summary --db random.db --format md").out.find("| random (seed 7) |"), std::string::npos);
}

TEST(InputFilesCli, AMissingFileIsOneLine) {
    ScratchDir dir;
    const auto r = dir.run("run --backend null --model null --batch 1 --inputs nowhere.npz --duration 30ms --warmup 0s --db r.db");
    EXPECT_EQ(r.exit_code, 1) << r.err;
    const auto benchmarks = store::ResultsStore::open(dir.file("r.db")).benchmarks();
    ASSERT_EQ(benchmarks.size(), 1u);
    EXPECT_EQ(benchmarks[0].reason, "prepare failed: inputs " + dir.file("nowhere.npz") + ": no such file or folder");
}

#if INFERBENCH_HAVE_ONNXRUNTIME
// y = Relu(x), x of [N, 4]: what it computes does not matter, that it takes the files' arrays does.
std::string relu_model() {
    models::GraphBuilder g("relu", 1);
    g.add_input("x", models::OnnxElemType::float32, {models::OnnxDim::symbolic("N"), models::OnnxDim::fixed(4)});
    g.add_node({"Relu", "relu", {"x"}, {"y"}, {}});
    g.add_output("y", models::OnnxElemType::float32, {models::OnnxDim::symbolic("N"), models::OnnxDim::fixed(4)});
    return g.serialize();
}

TEST(InputFilesCli, OnnxRuntimeRunsAnNpzAndAFolderCycledAndRefusesAMisfit) {
    ScratchDir dir;
    dir.write("m.onnx", relu_model());
    write_npz(dir.file("b2.npz"), {counting_tensor("x", {2, 4})});
    for (int k = 0; k < 3; ++k) {
        std::filesystem::create_directories(dir.path() / "set" / std::to_string(k));
        write_npy_file(dir.path() / "set" / std::to_string(k) / "x.npy", counting_tensor("x", {2, 4}, static_cast<float>(k)));
    }
    const std::string run = "run --backend onnxruntime --model m.onnx --batch 2 --duration 50ms --warmup 0s "
                            "--min-iterations 6 --inputs ";
    ASSERT_EQ(dir.run(run + "b2.npz --db npz.db").exit_code, 0);
    const auto cycled = dir.run(run + "set --db set.db");
    ASSERT_EQ(cycled.exit_code, 0) << cycled.err;
    const auto results = store::ResultsStore::open(dir.file("set.db"));
    const auto benchmarks = results.benchmarks();
    ASSERT_EQ(benchmarks.size(), 1u);
    EXPECT_EQ(benchmarks[0].status, BenchmarkStatus::ok) << benchmarks[0].reason;
    EXPECT_EQ(metric(results, benchmarks[0].benchmark_id, "harness_input_samples"), 3.0);
    EXPECT_EQ(metric(results, benchmarks[0].benchmark_id, "harness_inputs_cycled"), 1.0);
    EXPECT_NE(dir.run("summary --db set.db --format csv").out.find("\"" + dir.file("set") +
                                                                   " (3 samples, cycled)\""),
              std::string::npos);
    EXPECT_NE(dir.run("summary --db npz.db --format csv").out.find("," + dir.file("b2.npz") + " (1 sample),"),
              std::string::npos);
    // At batch 1 the arrays of batch 2 do not fit: the cell fails with the line, the next cell runs.
    const auto misfit = dir.run("run --backend onnxruntime --model m.onnx --batch 1 --duration 30ms --warmup 0s "
                                "--inputs b2.npz --db misfit.db");
    EXPECT_EQ(misfit.exit_code, 1);
    const auto failed = store::ResultsStore::open(dir.file("misfit.db")).benchmarks();
    ASSERT_EQ(failed.size(), 1u);
    EXPECT_EQ(failed[0].reason, "prepare failed: inputs " + dir.file("b2.npz") +
                                    ":x.npy: shape [2, 4] does not fit input x, which takes [1, 4] at this cell's batch "
                                    "size (the first dimension)");
}
#endif

}  // namespace
}  // namespace inferbench
