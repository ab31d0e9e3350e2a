// The real CLI with the torch-eager runner on this machine's PyTorch: iterations measured in Python
// land in the results database like any backend's, and cells PyTorch cannot run are skipped with why.
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "backends/npy_file.hpp"
#include "common/npz_writer.hpp"
#include "e2e/cli_harness.hpp"
#include "store/results_store.hpp"

namespace inferbench {
namespace {

bool torch_importable() {
    // The backend tries python3 on PATH, then /usr/bin/python3: the test needs one of them to have torch.
    return std::system("python3 -c 'import torch' >/dev/null 2>&1") == 0 ||
           std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0;
}

TEST(ExternalE2E, TorchEagerMobilenetIsMeasuredAndStored) {
    if (!torch_importable()) GTEST_SKIP() << "PyTorch is importable by neither python3 nor /usr/bin/python3";
    testing::CliScratch dir;
    dir.write("plan.yaml",
              "models: [mobilenet]\nbackends: [torch-eager]\nprecisions: [fp32, fp16]\n"
              "batch_sizes: [1]\nwarmup: 200ms\nduration: 1s\nbackend_options:\n  torch-eager: {threads: 2}\n");
    const auto r = dir.run("run plan.yaml --db r.db");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto store = store::ResultsStore::open(dir.file("r.db"));
    const auto benchmarks = store.benchmarks();
    ASSERT_EQ(benchmarks.size(), 2u);

    const auto& eager = benchmarks[0];
    ASSERT_EQ(eager.status, BenchmarkStatus::ok) << eager.reason;
    EXPECT_EQ(eager.precision, "fp32");
    EXPECT_FALSE(eager.backend_version.empty());
    EXPECT_GT(eager.load_ns.value_or(0), 0) << "interpreter start, import and model build";
    const auto iterations = store.iterations(eager.benchmark_id);
    ASSERT_GE(iterations.size(), 10u) << "min_iterations";
    for (std::size_t i = 0; i < iterations.size(); ++i) {
        // MobileNet v1 at batch 1 on a CPU: a millisecond at the very least, seconds at the very most.
        EXPECT_GT(iterations[i].e2e_ns, 1'000'000) << i;
        EXPECT_LT(iterations[i].e2e_ns, 5'000'000'000) << i;
        EXPECT_EQ(iterations[i].compute_ns, kNotMeasured) << "no device times on the CPU";
        if (i > 0) {
            EXPECT_GE(iterations[i].start_ns, iterations[i - 1].start_ns + iterations[i - 1].e2e_ns)
                << "one clock, iterations in order";
        }
    }

    // PyTorch before 2.x has no fp16 convolution on the CPU: the runner's --describe finds that out, and
    // the cell is skipped with its words before any worker starts.
    if (benchmarks[1].status == BenchmarkStatus::skipped) {
        EXPECT_NE(benchmarks[1].reason.find("cannot run fp16 convolutions on cpu"), std::string::npos)
            << benchmarks[1].reason;
    } else {
        EXPECT_EQ(benchmarks[1].status, BenchmarkStatus::ok) << benchmarks[1].reason;
    }
}

bool has_metric(const std::vector<store::Metric>& metrics, std::string_view name) {
    for (const auto& m : metrics)
        if (m.name == name) return m.value > 0 && m.unit == "ns";
    return false;
}

bool transformers_importable() {
    return std::system("python3 -c 'import transformers' >/dev/null 2>&1") == 0 ||
           std::system("/usr/bin/python3 -c 'import transformers' >/dev/null 2>&1") == 0;
}

// PyTorch model specs in a plan mixing backends: torch-eager builds them, onnxruntime runs the ONNX file
// torch_export.py makes; a factory that raises fails its cells with one line and the traceback's end
// stored; what this machine cannot build is skipped with the reason; the plan goes on.
TEST(ExternalE2E, ModelSpecsRunOnEveryPathAndBadOnesFailAlone) {
    if (!torch_importable()) GTEST_SKIP() << "PyTorch is importable by neither python3 nor /usr/bin/python3";
    testing::CliScratch dir;
    dir.write("tiny.py",
              "import torch\n\n"
              "def make():\n    return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU()), "
              "torch.rand(1, 3, 32, 32)\n\n"
              "def broken():\n    raise ValueError('no weights for this model')\n");
    dir.write("plan.yaml",
              "models: [\"python:tiny.py:make\", \"python:tiny.py:broken\", hf:bert-base-uncased, swin-t]\n"
              "backends: [torch-eager, onnxruntime]\nbatch_sizes: [2]\nwarmup: 100ms\nduration: 300ms\n"
              "min_iterations: 3\nexclude:\n  - {model: swin-t, backend: onnxruntime}\n"
              "backend_options:\n  torch-eager: {threads: 2}\n");
    const auto r = dir.run("run plan.yaml --db r.db");
    EXPECT_EQ(r.exit_code, 1) << "failed cells: " << r.err;
    const auto store = store::ResultsStore::open(dir.file("r.db"));
    const auto b = store.benchmarks();
    ASSERT_EQ(b.size(), 7u) << "the plan went on past the failures";

    // python:tiny.py:make on torch-eager, then on onnxruntime through the exported ONNX file.
    ASSERT_EQ(b[0].status, BenchmarkStatus::ok) << b[0].reason;
    EXPECT_TRUE(has_metric(store.metrics(b[0].benchmark_id), "torch_model_build_ns")) << "stored apart from the load";
    EXPECT_GE(b[0].warmup_iterations.value_or(-1), 1) << "the runner's warm-up (100 ms, at least one), stored";
    ASSERT_EQ(b[1].status, BenchmarkStatus::ok) << b[1].reason;
    EXPECT_TRUE(b[1].model_path.ends_with(".onnx")) << b[1].model_path;
    EXPECT_NE(b[1].model_path.find("torch_export"), std::string::npos) << "in the model cache";

    // The factory raises: one line each, the traceback's end kept with the benchmark.
    for (const auto* broken : {&b[2], &b[3]}) {
        EXPECT_EQ(broken->status, BenchmarkStatus::failed) << broken->backend;
        EXPECT_NE(broken->reason.find("broken() raised ValueError: no weights for this model"), std::string::npos)
            << broken->reason;
        EXPECT_NE(broken->stderr_tail.find("ValueError: no weights for this model"), std::string::npos)
            << broken->stderr_tail;
        EXPECT_NE(broken->stderr_tail.find("tiny.py"), std::string::npos) << broken->stderr_tail;
    }
    EXPECT_NE(b[3].reason.find("model export for backend onnxruntime failed"), std::string::npos) << b[3].reason;

    if (!transformers_importable()) {
        for (const auto* hf : {&b[4], &b[5]}) {
            EXPECT_EQ(hf->status, BenchmarkStatus::skipped) << hf->backend;
            EXPECT_NE(hf->reason.find("transformers not importable by"), std::string::npos) << hf->reason;
        }
    }
    // A zoo model the runner does not build is skipped, naming the ones it does.
    EXPECT_EQ(b[6].status, BenchmarkStatus::skipped);
    EXPECT_NE(b[6].reason.find("not swin-t"), std::string::npos) << b[6].reason;
    EXPECT_NE(b[6].reason.find("ssd-resnet34"), std::string::npos) << b[6].reason;
}

std::optional<double> metric(const store::ResultsStore& results, std::int64_t benchmark, std::string_view name) {
    for (const auto& m : results.metrics(benchmark))
        if (m.name == name) return m.value;
    return std::nullopt;
}

// The plan's input files reach the runner, which feeds them one per iteration and says so: stored, and shown in
// the summary's inputs column; arrays that do not fit fail the cell with the runner's one line.
TEST(ExternalE2E, TorchEagerCyclesThePlansInputFilesAndTheSummarySaysSo) {
    if (!torch_importable()) GTEST_SKIP() << "PyTorch is importable by neither python3 nor /usr/bin/python3";
    testing::CliScratch dir;
    dir.write("tiny.py", "import torch\n\ndef make():\n    return torch.nn.Sequential(torch.nn.Linear(4, 2)), "
                         "torch.rand(1, 4)\n");
    std::filesystem::create_directories(dir.path() / "set");
    for (int k = 0; k < 3; ++k)
        write_npy_file(dir.path() / "set" / (std::to_string(k) + ".npy"),
                       testing::counting_tensor("input", {2, 4}, static_cast<float>(k)));
    const std::string run = "run --backend torch-eager --model python:tiny.py:make --batch 2 --duration 100ms "
                            "--warmup 0s --min-iterations 6 --set backend_options.torch-eager.threads=1 ";
    const auto planned = dir.run(run + "--inputs set --dry-run");
    ASSERT_EQ(planned.exit_code, 0) << planned.err;
    EXPECT_EQ(planned.out.find("skip"), std::string::npos) << "the runner takes inputs: nothing skipped\n" << planned.out;
    const auto r = dir.run(run + "--inputs set --db r.db");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto results = store::ResultsStore::open(dir.file("r.db"));
    const auto benchmarks = results.benchmarks();
    ASSERT_EQ(benchmarks.size(), 1u);
    ASSERT_EQ(benchmarks[0].status, BenchmarkStatus::ok) << benchmarks[0].reason;
    EXPECT_EQ(metric(results, benchmarks[0].benchmark_id, "harness_input_samples"), 3.0);
    EXPECT_EQ(metric(results, benchmarks[0].benchmark_id, "harness_inputs_cycled"), 1.0);
    const auto csv = dir.run("summary --db r.db --format csv");
    EXPECT_NE(csv.out.find("\"" + dir.file("set") + " (3 samples, cycled)\""), std::string::npos) << csv.out;

    // At batch 1 the arrays of batch 2 do not fit: the cell fails with the runner's line naming file and input.
    const auto misfit = dir.run("run --backend torch-eager --model python:tiny.py:make --batch 1 --duration 50ms "
                                "--warmup 0s --inputs set --db misfit.db");
    EXPECT_EQ(misfit.exit_code, 1) << misfit.err;
    const auto failed = store::ResultsStore::open(dir.file("misfit.db")).benchmarks();
    ASSERT_EQ(failed.size(), 1u);
    EXPECT_NE(failed[0].reason.find("inputs " + dir.file("set") + "/0.npy: shape [2, 4] does not fit input input, "
                                    "which takes [1, 4] at this cell's batch size (the first dimension)"),
              std::string::npos)
        << failed[0].reason;
}

TEST(ExternalE2E, AnUnknownModelLibraryIsAPlanError) {
    testing::CliScratch dir;
    dir.write("plan.yaml", "models: [resnet50, keras:vgg16]\nbackends: [torch-eager]\n");
    const auto r = dir.run("run plan.yaml --db r.db --dry-run");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("plan.yaml:1:20: model 'keras:vgg16': unknown model library 'keras'"), std::string::npos)
        << r.err;
}

// `list backends` asks torch-eager about its default cell, which names no model: a runner that builds
// the zoo's models (as torch_runner.py says it does) is usable, as `run --model mobilenet` finds it.
TEST(ExternalE2E, ListBackendsCallsARunnerThatBuildsZooModelsUsable) {
    testing::CliScratch dir;
    std::filesystem::copy_file(INFERBENCH_FAKE_RUNNER, dir.path() / "torch_runner.py");
    const std::string launcher =
        "env INFERBENCH_RUNNER_DIR='" + dir.path().string() + "' FAKE_RUNNER_ZOO=mobilenet,resnet50";
    const auto r = dir.run("list backends --json", launcher);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    bool listed = false;
    const auto doc = nlohmann::json::parse(r.out);
    for (const auto& row : doc["rows"]) {
        if (row["name"] != "torch-eager") continue;
        listed = true;
        EXPECT_EQ(row["usable"], true) << row.dump();
        EXPECT_EQ(row["version"], "1.0") << row.dump();
    }
    EXPECT_TRUE(listed) << r.out;
}

}  // namespace
}  // namespace inferbench
