// How torch-aoti gets its package, SDK-free: the exporter's request for a cell, its time limit and cache,
// its answer as the converted model (compile time as load time, from the cache or not, or a skip), the
// version check, and the package's inputs at the cell's batch.
#include "backends/torch_aoti/aoti_package.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/metrics/load_metrics.hpp"

namespace inferbench {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

BenchmarkSpec cell() {
    BenchmarkSpec spec;
    spec.backend = "torch-aoti";
    spec.device = Device{DeviceKind::cuda, 1};
    spec.precision = Precision::bf16;
    spec.batch_size = 32;
    spec.model_cache_dir = "/cache/models";
    return spec;
}

external::ExportedModel exported(std::vector<TensorInfo> inputs = {{"x", DType::f16, {-1, 3, 224, 224}}}) {
    external::ExportedModel model;
    model.path = "/cache/models/converted/torch_export/resnet50.pt2";
    model.seconds = 41.25;
    model.torch_version = "2.11.0+cu130";
    model.inputs = std::move(inputs);
    return model;
}

double metric(const ConvertedModel& converted, std::string_view name) {
    for (const auto& m : converted.metrics)
        if (m.name == name) return m.value;
    ADD_FAILURE() << "no metric " << name;
    return -1;
}

TEST(AotiPackage, RequestsOnePackagePerCellUnderTheModelCache) {
    const auto request = aoti_export_request("torchvision:resnet50", cell(), parse_aoti_options({}));
    EXPECT_EQ(request.spec, "torchvision:resnet50");
    EXPECT_EQ(request.format, external::ExportFormat::pt2);
    EXPECT_EQ(request.precision, Precision::bf16);
    EXPECT_EQ(request.batch, 32);
    EXPECT_EQ(request.device, (Device{DeviceKind::cuda, 1}));
    EXPECT_EQ(request.cache_dir, "/cache/models/converted/torch_export");
    EXPECT_EQ(request.seq_len, 0);
    EXPECT_TRUE(request.options.empty());
    EXPECT_THAT(external::export_arguments(request),
                ElementsAre("--spec", "torchvision:resnet50", "--format", "pt2", "--precision", "bf16", "--batch", "32",
                            "--device", "cuda:1", "--cache-dir", "/cache/models/converted/torch_export"));
}

TEST(AotiPackage, DynamicBatchSeqLenAndExporterOptionsGoIntoTheRequest) {
    const auto request = aoti_export_request(
        "bert", cell(),
        parse_aoti_options({{"dynamic_batch", "true"}, {"seq_len", "384"}, {"export_options", "a=1 b=2"}}));
    EXPECT_FALSE(request.batch);
    EXPECT_THAT(external::export_arguments(request),
                ElementsAre("--spec", "bert", "--format", "pt2", "--precision", "bf16", "--batch", "dynamic", "--device",
                            "cuda:1", "--cache-dir", "/cache/models/converted/torch_export", "--seq-len", "384",
                            "--option", "a=1", "--option", "b=2"));
}

TEST(AotiPackage, TheExporterStopsBeforeTheBenchmarksTimeoutToSaySo) {
    EXPECT_EQ(export_timeout_ns(0), 0) << "no timeout stays none";
    EXPECT_EQ(export_timeout_ns(600'000'000'000), 570'000'000'000) << "10 min: 30 s to report";
    EXPECT_EQ(export_timeout_ns(10'000'000'000), 9'000'000'000) << "a tenth of a short one";
}

TEST(AotiPackage, ACompileIsLoadTimeAndSaysWhetherItCameFromTheCache) {
    const ConvertedModel compiled = converted_package({exported(), ""});
    EXPECT_EQ(compiled.model_path, "/cache/models/converted/torch_export/resnet50.pt2");
    EXPECT_EQ(compiled.load_ns, 41'250'000'000);
    EXPECT_TRUE(compiled.skip_reason.empty());
    EXPECT_DOUBLE_EQ(metric(compiled, load_metrics::kCompileSeconds), 41.25);
    EXPECT_DOUBLE_EQ(metric(compiled, load_metrics::kCompileCacheHit), 0);

    external::ExportedModel cached = exported();
    cached.cache_hit = true;
    cached.seconds = 0.004;
    const ConvertedModel from_cache = converted_package({cached, ""});
    EXPECT_EQ(from_cache.load_ns, 4'000'000);
    EXPECT_DOUBLE_EQ(metric(from_cache, load_metrics::kCompileCacheHit), 1);
}

TEST(AotiPackage, WhatThisPyTorchCannotMakeSkipsTheCell) {
    const ConvertedModel skipped = converted_package({std::nullopt, "PyTorch 1.13.0 has no aoti_compile_and_package"});
    EXPECT_EQ(skipped.skip_reason, "PyTorch 1.13.0 has no aoti_compile_and_package");
    EXPECT_TRUE(skipped.model_path.empty());
    EXPECT_TRUE(skipped.metrics.empty());
    EXPECT_EQ(skipped.load_ns, 0);
}

TEST(AotiPackage, APackageRunsOnlyOnThePyTorchThatCompiledIt) {
    EXPECT_FALSE(version_problem(exported(), "2.11.0", ""));
    const auto problem = version_problem(exported(), "2.10.1", "/opt/py/bin/python");
    ASSERT_TRUE(problem);
    EXPECT_THAT(*problem, AllOf(HasSubstr("resnet50.pt2"), HasSubstr("PyTorch 2.11.0+cu130 (/opt/py/bin/python)"),
                                HasSubstr("LibTorch 2.10.1"), HasSubstr("backend_options.torch-aoti.python"),
                                HasSubstr("scripts/setup.sh")));
    external::ExportedModel debian = exported();
    debian.torch_version = "1.13.0a0";
    EXPECT_FALSE(version_problem(debian, "1.13.0", "")) << "a pre-release tag is the same release";
}

TEST(AotiPackage, InputsTakeTheCellsBatch) {
    EXPECT_THAT(package_inputs(exported(), 8)[0].shape, ElementsAre(8, 3, 224, 224));
    EXPECT_EQ(package_inputs(exported(), 8)[0].dtype, DType::f16);
    const auto fixed = exported({{"input_ids", DType::i64, {32, 384}}, {"attention_mask", DType::i64, {32, 384}}});
    const auto inputs = package_inputs(fixed, 32);
    ASSERT_EQ(inputs.size(), 2u);
    EXPECT_EQ(inputs[1].name, "attention_mask");
    EXPECT_THAT(inputs[1].shape, ElementsAre(32, 384));
}

TEST(AotiPackage, InputsItCannotFeedAreOneLineErrors) {
    const auto message = [](const external::ExportedModel& model, std::int64_t batch) -> std::string {
        try {
            package_inputs(model, batch);
        } catch (const UserError& e) {
            return e.what();
        }
        return "(no error)";
    };
    EXPECT_THAT(message(exported({{"x", DType::f32, {1, 4}}}), 8),
                AllOf(HasSubstr("fixed batch size of 1"), HasSubstr("batch size 8")));
    EXPECT_THAT(message(exported({{"ids", DType::i64, {-1, -1}}}), 8),
                AllOf(HasSubstr("input ids"), HasSubstr("dynamic dimension 1")));
    EXPECT_THAT(message(exported({}), 8), AllOf(HasSubstr("resnet50.pt2"), HasSubstr("named no inputs")));
}

TEST(AotiPackage, TheGraphFallbackIsAFigure) {
    const BackendMetric fallback = cuda_graph_fallback_metric();
    EXPECT_EQ(fallback.name, load_metrics::kCudaGraphFallback);
    EXPECT_EQ(fallback.value, 1);
}

}  // namespace
}  // namespace inferbench
