// The real CLI with the torch-eager runner on this machine's PyTorch: iterations measured in Python
// land in the results database like any backend's, and cells PyTorch cannot run are skipped with why.
#include <cstdlib>

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace inferbench
