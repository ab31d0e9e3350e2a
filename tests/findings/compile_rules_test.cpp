// What torch.compile left undone, from the counts torch-compile's runner stores and the reasons PyTorch printed
// into the benchmark's stored output.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/metrics/load_metrics.hpp"
#include "findings/rules.hpp"
#include "findings_fixture.hpp"

namespace inferbench::findings {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using namespace testing;

StoredBenchmark compiled(double graphs, double breaks, double skips, std::string output = "") {
    auto b = benchmark("cuda:0", "fp16", 1, "torch-compile");
    b.iterations = iterations(50, [](int) { return 1'000'000; });
    b.metrics = {{"torch_compile_first_call_ns", 4e9, "ns"},
                 {"torch_compile_graphs", graphs, "count"},
                 {"torch_compile_graph_breaks", breaks, "count"},
                 {"torch_compile_cudagraph_skips", skips, "count"}};
    b.record.stderr_tail = std::move(output);
    return b;
}

// runners/torch_runner.py writes these names as text: the declared names must stay them.
TEST(CompileFallbacks, TheRunnersCountsAreReadUnderTheDeclaredNames) {
    EXPECT_EQ(load_metrics::kTorchCompileGraphs, "torch_compile_graphs");
    EXPECT_EQ(load_metrics::kTorchCompileGraphBreaks, "torch_compile_graph_breaks");
    EXPECT_EQ(load_metrics::kTorchCompileCudagraphSkips, "torch_compile_cudagraph_skips");
    const StoredRun run({compiled(3, 2, 1)});
    const auto found = compile_fallbacks(run.at(0));
    ASSERT_THAT(ids(found), ElementsAre("compile.cudagraphs_skipped", "compile.graph_breaks"));
    EXPECT_THAT(found[0].evidence.series,
                ElementsAre("benchmark_metrics.torch_compile_cudagraph_skips", "benchmarks.stderr_tail"));
    EXPECT_THAT(found[1].evidence.series,
                ElementsAre("benchmark_metrics.torch_compile_graph_breaks", "benchmarks.stderr_tail"));
}

TEST(CompileFallbacks, SkippedCudaGraphsAndGraphBreaksAreSaidWithPyTorchsReasons) {
    const StoredRun run(
        {compiled(3, 2, 1,
                  "loading model\n  skipping cudagraphs due to mutated inputs (1 instances). Found from :\n"
                  "Graph break in user code at model.py:12\n")});
    const auto found = compile_fallbacks(run.at(0));
    ASSERT_THAT(ids(found), ElementsAre("compile.cudagraphs_skipped", "compile.graph_breaks"));
    EXPECT_THAT(found[0].statement,
                HasSubstr("torch.compile left 1 CUDA graph out (PyTorch: \"skipping cudagraphs due to mutated inputs "
                          "(1 instances). Found from :\"): those kernels launch one by one from the host"));
    EXPECT_EQ(found[0].severity, Severity::warning);
    EXPECT_THAT(found[0].try_next, HasSubstr("cuda_graph=true"));
    EXPECT_THAT(found[1].statement, HasSubstr("split the model into 3 graphs at 2 graph breaks (PyTorch: \"Graph break "
                                              "in user code at model.py:12\")"));
    EXPECT_EQ(found[1].severity, Severity::info);
}

TEST(CompileFallbacks, AWholeGraphSaysNothingAndNeitherDoesABackendThatCountsNothing) {
    const StoredRun run({compiled(1, 0, 0), benchmark("cuda:0", "fp16", 1, "torch-eager")});
    EXPECT_THAT(compile_fallbacks(run.at(0)), IsEmpty());
    EXPECT_THAT(compile_fallbacks(run.at(1)), IsEmpty());
}

TEST(CompileFallbacks, WithoutPyTorchsReasonTheCountsAloneAreSaid) {
    const StoredRun run({compiled(2, 1, 2, "nothing of note")});
    const auto found = compile_fallbacks(run.at(0));
    ASSERT_THAT(ids(found), ElementsAre("compile.cudagraphs_skipped", "compile.graph_breaks"));
    EXPECT_THAT(found[0].statement, HasSubstr("left 2 CUDA graphs out: those kernels"));
    EXPECT_THAT(found[1].statement, HasSubstr("split the model into 2 graphs at 1 graph break: between them"));
}

}  // namespace
}  // namespace inferbench::findings
