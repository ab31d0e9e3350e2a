// The plan's input files through the real CLI: an .npz and a folder of samples feed the cell in place of random
// inputs, the summary's note says which, and a misfit fails the cell with one line naming the file and the input.
#include <gtest/gtest.h>

#include <fmt/format.h>

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

// y = Relu(x), x of [N, 4]: what it computes does not matter, that it takes the files' arrays does.
std::string relu_model() {
    models::GraphBuilder g("relu", 1);
    g.add_input("x", models::OnnxElemType::float32, {models::OnnxDim::symbolic("N"), models::OnnxDim::fixed(4)});
    g.add_node({"Relu", "relu", {"x"}, {"y"}, {}});
    g.add_output("y", models::OnnxElemType::float32, {models::OnnxDim::symbolic("N"), models::OnnxDim::fixed(4)});
    return g.serialize();
}

#if INFERBENCH_HAVE_ONNXRUNTIME
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

// A stand-in for trtexec (TensorRT is not needed to test the command line): it "builds" an engine, records its
// arguments and, for --loadInputs, each input's name and file size, fails as trtexec does on a missing file, and
// writes two queries' times.
constexpr const char* kTrtexecStandIn = R"SH(#!/bin/sh
echo "$*" >> calls.txt
engine=; times=
for arg in "$@"; do case "$arg" in
  --help) echo '&&&& RUNNING TensorRT.trtexec [TensorRT v100900] [b34] # trtexec --help'; exit 0 ;;
  --saveEngine=*) engine=${arg#--saveEngine=} ;;
  --exportTimes=*) times=${arg#--exportTimes=} ;;
  --loadInputs=*) for spec in $(echo "${arg#--loadInputs=}" | tr ',' ' '); do
      file=${spec#*:}; [ -f "$file" ] || { echo "[E] cannot open input file $file"; exit 1; }
      echo "${spec%%:*} $(wc -c < "$file")" >> loaded.txt; done ;;
esac; done
if [ -n "$engine" ]; then echo engine > "$engine"; exit 0; fi
cat > "$times" <<'JSON'
[ { "startEnqMs" : 1, "endEnqMs" : 1.1, "startH2dMs" : 1, "endH2dMs" : 1.1, "startComputeMs" : 1.1, "endComputeMs" : 1.5, "startD2hMs" : 1.5, "endD2hMs" : 1.6, "h2dMs" : 0.1, "computeMs" : 0.4, "d2hMs" : 0.1, "latencyMs" : 0.6 }
, { "startEnqMs" : 2, "endEnqMs" : 2.1, "startH2dMs" : 2, "endH2dMs" : 2.1, "startComputeMs" : 2.1, "endComputeMs" : 2.5, "startD2hMs" : 2.5, "endD2hMs" : 2.6, "h2dMs" : 0.1, "computeMs" : 0.4, "d2hMs" : 0.1, "latencyMs" : 0.6 } ]
JSON
echo '&&&& PASSED TensorRT.trtexec [TensorRT v100900] # trtexec'
)SH";

TEST(InputFilesCli, TrtexecIsGivenTheFirstSampleAndTheSummarySaysTheRestWereNotFed) {
    ScratchDir dir;
    dir.write("m.onnx", relu_model());
    std::filesystem::create_directories(dir.path() / "bin");
    dir.write("bin/trtexec", kTrtexecStandIn);
    dir.write("bin/nvidia-smi", "#!/bin/sh\necho 'NVIDIA H200'\n");
    for (const char* tool : {"bin/trtexec", "bin/nvidia-smi"})
        std::filesystem::permissions(dir.path() / tool, std::filesystem::perms::owner_all);
    std::filesystem::create_directories(dir.path() / "set");
    for (int k = 0; k < 3; ++k) write_npy_file(dir.path() / "set" / fmt::format("x_{}.npy", k), counting_tensor("x", {2, 4}));
    const std::string env = "env PATH=" + (dir.path() / "bin").string() + ":/usr/bin:/bin";
    const std::string run = "run --backend trtexec --device cuda --model m.onnx --batch 2 --duration 20ms --warmup 0s ";
    const auto r = dir.run(run + "--inputs set --db r.db", env);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(testing::read_file(dir.path() / "loaded.txt"), "x 32\n") << "2 x 4 float32, one file for the one input";
    const auto results = store::ResultsStore::open(dir.file("r.db"));
    const auto benchmarks = results.benchmarks();
    ASSERT_EQ(benchmarks.size(), 1u);
    EXPECT_EQ(metric(results, benchmarks[0].benchmark_id, "harness_input_samples"), 3.0);
    EXPECT_EQ(metric(results, benchmarks[0].benchmark_id, "harness_inputs_cycled"), 0.0);
    EXPECT_NE(benchmarks[0].stderr_tail.find("trtexec: feeding the first of the 3 samples of " + dir.file("set") +
                                             " to every iteration: trtexec's --loadInputs takes one file per input"),
              std::string::npos)
        << benchmarks[0].stderr_tail;
    EXPECT_NE(dir.run("summary --db r.db --format csv").out.find("\"" + dir.file("set") + " (3 samples, the first alone)\""),
              std::string::npos);

    // Without inputs trtexec makes its own, as before: no --loadInputs, and the summary says nothing of files.
    ASSERT_EQ(dir.run(run + "--db random.db", env).exit_code, 0);
    const std::string calls = testing::read_file(dir.path() / "calls.txt");
    EXPECT_EQ(calls.substr(calls.rfind("--loadEngine")).find("--loadInputs"), std::string::npos) << calls;
    // A ready engine does not say its inputs: --dry-run already marks the cell skipped, with the reason.
    dir.write("ready.engine", "engine");
    const auto planned = dir.run("run --backend trtexec --device cuda --model ready.engine --batch 2 --inputs set --dry-run", env);
    EXPECT_EQ(planned.exit_code, 0) << planned.err;
    EXPECT_NE(planned.out.find("skipped: trtexec takes the plan's inputs for an ONNX model only"), std::string::npos)
        << planned.out;
    // Arrays of another batch fail the cell in prepare, with the line that names the file and the input.
    const auto misfit = dir.run(run.substr(0, run.find("--batch")) + "--batch 1 --duration 20ms --warmup 0s --inputs set --db misfit.db", env);
    EXPECT_EQ(misfit.exit_code, 1) << misfit.err;
    const auto failed = store::ResultsStore::open(dir.file("misfit.db")).benchmarks();
    ASSERT_EQ(failed.size(), 1u);
    EXPECT_EQ(failed[0].reason, "prepare failed: inputs " + dir.file("set") + "/x_0.npy: shape [2, 4] does not fit input x, "
                                "which takes [1, 4] at this cell's batch size (the first dimension)");
}

}  // namespace
}  // namespace inferbench
