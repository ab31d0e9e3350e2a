// The torch-aoti backend on this machine's LibTorch (1.13, CPU) against the fake AOTIModelPackageLoader
// (fake_aoti/) and the fake exporter (tests/backends/external/fakes/torch_export): the package made before
// the load and its compile as load time, the cache, skips and failures as one line each, the loader's
// settings, the inputs at the cell's batch, outputs, and the module as the CLI opens it. The CUDA path
// (torch_cuda's events and graphs) is compiled here against the fake header and runs on the GPU host only.
#include "backends/torch_aoti/aoti_backend.hpp"

#include <dlfcn.h>
#include <stdlib.h>

#include <cstring>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backends/random_inputs.hpp"
#include "common/scratch_dir.hpp"
#include "core/error.hpp"
#include "core/metrics/load_metrics.hpp"
#include "fake_aoti_control.hpp"

namespace inferbench {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

double metric(const std::vector<BackendMetric>& metrics, std::string_view name) {
    for (const auto& m : metrics)
        if (m.name == name) return m.value;
    return -1;
}

std::vector<float> floats(const HostTensor& tensor) {
    std::vector<float> values(tensor.data.size() / sizeof(float));
    std::memcpy(values.data(), tensor.data.data(), tensor.data.size());
    return values;
}

class AotiBackendTest : public ::testing::Test {
protected:
    AotiBackendTest() {
        setenv("INFERBENCH_RUNNER_DIR", INFERBENCH_FAKE_EXPORTER_DIR, 1);
        fake_aoti::reset();
        spec_.backend = "torch-aoti";
        spec_.model = "resnet50";
        spec_.batch_size = 3;
        spec_.timeout_ns = 120'000'000'000;
        spec_.model_cache_dir = (dir_.path() / "models").string();
        spec_.backend_options = {{"python", INFERBENCH_TEST_PYTHON}, {"threads", "1"}};
    }
    ~AotiBackendTest() override { unsetenv("INFERBENCH_RUNNER_DIR"); }

    // convert_model and load as the worker calls them; the converted model.
    ConvertedModel convert_and_load(const std::string& model) {
        ConvertedModel converted = backend_->convert_model(model, spec_);
        if (converted.skip_reason.empty()) backend_->load(converted.model_path, spec_);
        return converted;
    }
    std::string error_of(const std::string& model) {
        try {
            convert_and_load(model);
            backend_->prepare(make_random_inputs(backend_->inputs(), 1));
        } catch (const std::exception& e) {
            return e.what();
        }
        return "(no error)";
    }

    testing::ScratchDir dir_;
    BenchmarkSpec spec_;
    std::unique_ptr<Backend> backend_ = make_torch_aoti_backend();
};

TEST_F(AotiBackendTest, DescribesItself) {
    EXPECT_EQ(backend_->name(), "torch-aoti");
    EXPECT_EQ(backend_->version(), "1.13.0") << "this LibTorch's";
    const Capabilities caps = backend_->capabilities();
    EXPECT_THAT(caps.devices, ElementsAre(DeviceKind::cpu)) << "Debian's LibTorch has no CUDA";
    EXPECT_THAT(caps.precisions, ElementsAre(Precision::fp32, Precision::fp16, Precision::bf16));
    EXPECT_THAT(caps.model_formats, ElementsAre("pt2"));
    EXPECT_TRUE(caps.builds_zoo_models) << "zoo names go to the exporter as they are";
    EXPECT_FALSE(caps.device_timing);
    EXPECT_EQ(backend_->options().size(), 7u);
}

TEST_F(AotiBackendTest, CompilesBeforeTheLoadAndCountsTheCompileAsLoadTime) {
    const ConvertedModel converted = convert_and_load("resnet50");
    EXPECT_TRUE(converted.skip_reason.empty());
    EXPECT_THAT(converted.model_path, HasSubstr(spec_.model_cache_dir + "/converted/torch_export/"));
    EXPECT_GE(converted.load_ns, 300'000'000) << "the fake's compile";
    EXPECT_GE(metric(converted.metrics, load_metrics::kCompileSeconds), 0.3);
    EXPECT_EQ(metric(converted.metrics, load_metrics::kCompileCacheHit), 0);
    const auto calls = fake_aoti::calls();
    EXPECT_EQ(calls.last_path, converted.model_path);
    EXPECT_EQ(calls.last_model_name, "model");
    EXPECT_FALSE(calls.last_run_single_threaded);
    EXPECT_EQ(calls.last_device_index, -1) << "the CPU";

    const auto inputs = backend_->inputs();
    ASSERT_EQ(inputs.size(), 1u);
    EXPECT_EQ(inputs[0].name, "x");
    EXPECT_EQ(inputs[0].dtype, DType::f32);
    EXPECT_THAT(inputs[0].shape, ElementsAre(3, 4));
    const auto host_inputs = make_random_inputs(inputs, 5);
    backend_->prepare(host_inputs);
    DeviceTimes times;
    backend_->infer(times);
    EXPECT_EQ(times.compute_ns, kNotMeasured) << "no device timing on the CPU";
    EXPECT_EQ(fake_aoti::calls().runs, 2);
    const auto outputs = backend_->last_outputs();
    ASSERT_EQ(outputs.size(), 1u);
    EXPECT_EQ(outputs[0].info.name, "output0");
    EXPECT_THAT(outputs[0].info.shape, ElementsAre(3, 4));
    const auto in = floats(host_inputs[0]);
    const auto out = floats(outputs[0]);
    ASSERT_EQ(out.size(), in.size());
    for (std::size_t i = 0; i < in.size(); ++i) EXPECT_FLOAT_EQ(out[i], 2 * in[i]) << i;
    EXPECT_TRUE(backend_->prepared_metrics().empty()) << "no graph was asked for";
    backend_.reset();
    EXPECT_EQ(fake_aoti::calls().loaders_alive, 0);
}

TEST_F(AotiBackendTest, TheNextBenchmarkFindsThePackageInTheCache) {
    const ConvertedModel first = convert_and_load("resnet50");
    auto next = make_torch_aoti_backend();
    const ConvertedModel again = next->convert_model("resnet50", spec_);
    EXPECT_EQ(again.model_path, first.model_path);
    EXPECT_EQ(metric(again.metrics, load_metrics::kCompileCacheHit), 1);
    EXPECT_LT(again.load_ns, 300'000'000) << "a lookup, not a compile";
    spec_.precision = Precision::bf16;
    EXPECT_EQ(metric(next->convert_model("resnet50", spec_).metrics, load_metrics::kCompileCacheHit), 0)
        << "the precision is part of the key";
}

TEST_F(AotiBackendTest, HalfPrecisionPackagesTakeHalfInputs) {
    spec_.precision = Precision::bf16;
    convert_and_load("mobilenet");
    EXPECT_EQ(backend_->inputs()[0].dtype, DType::bf16);
    backend_->prepare(make_random_inputs(backend_->inputs(), 1));
    EXPECT_EQ(backend_->last_outputs()[0].info.dtype, DType::bf16);
}

TEST_F(AotiBackendTest, ADynamicBatchPackageTakesTheCellsBatch) {
    spec_.backend_options["dynamic_batch"] = "true";
    spec_.batch_size = 5;
    convert_and_load("resnet50");
    EXPECT_THAT(backend_->inputs()[0].shape, ElementsAre(5, 4));
    backend_->prepare(make_random_inputs(backend_->inputs(), 1));
    EXPECT_THAT(backend_->last_outputs()[0].info.shape, ElementsAre(5, 4));
}

TEST_F(AotiBackendTest, WhatThisPyTorchCannotCompileIsSkipped) {
    const ConvertedModel converted = backend_->convert_model("fake:unsupported", spec_);
    EXPECT_THAT(converted.skip_reason, HasSubstr("no torch._inductor.aoti_compile_and_package"));
    EXPECT_TRUE(converted.metrics.empty());
}

TEST_F(AotiBackendTest, BadInputAndFailedCompilesAreOneLine) {
    EXPECT_THAT(error_of("tv:resnet50"), HasSubstr("unknown library 'tv'"));
    EXPECT_EQ(error_of("fake:raises"), "fake:raises: the factory raised RuntimeError: out of memory; fix the factory");
    EXPECT_THAT(error_of("fake:oom"), HasSubstr("out-of-memory killer"));
}

TEST_F(AotiBackendTest, APackageOfAnotherPyTorchIsRefusedBeforeItLoads) {
    EXPECT_THAT(error_of("fake:foreign"),
                AllOf(HasSubstr("compiled by PyTorch 2.10.0+cu130"), HasSubstr("runs LibTorch 1.13.0"),
                      HasSubstr("backend_options.torch-aoti.python")));
    EXPECT_EQ(fake_aoti::calls().loaders_alive, 0);
}

TEST_F(AotiBackendTest, APackageThatFailsToLoadOrRunSaysWhyInOneLine) {
    const std::string load = error_of("fake:load-fails");
    EXPECT_THAT(load, AllOf(HasSubstr("torch-aoti cannot load"), HasSubstr("device kernel image is invalid"),
                            HasSubstr("runs only on the kind of GPU"), Not(HasSubstr("\n"))));
    const std::string run = error_of("fake:run-fails");
    EXPECT_THAT(run, AllOf(HasSubstr("torch-aoti could not run"), HasSubstr("no kernel image is available"),
                           Not(HasSubstr("\n"))));
}

TEST_F(AotiBackendTest, AUsersPackageRunsAsItIsAndLoadsWithoutAConversionFirst) {
    // `models check` loads without convert_model: the backend asks the exporter itself.
    dir_.write("mine.pt2", "fake-pt2\ndevice cpu\nscale 3\ninput x float32 3,4\n");
    backend_->load(dir_.file("mine.pt2"), spec_);
    EXPECT_EQ(fake_aoti::calls().last_path, dir_.file("mine.pt2"));
    const auto inputs = make_random_inputs(backend_->inputs(), 2);
    backend_->prepare(inputs);
    EXPECT_FLOAT_EQ(floats(backend_->last_outputs()[0])[0], 3 * floats(inputs[0])[0]);

    dir_.write("other.pt2", "PK\x03\x04 a zip of another PyTorch");
    EXPECT_THAT(error_of(dir_.file("other.pt2")), HasSubstr("is not a .pt2 package this PyTorch can load"));
    dir_.write("batch1.pt2", "fake-pt2\ndevice cpu\nscale 1\ninput x float32 1,4\n");
    EXPECT_THAT(error_of(dir_.file("batch1.pt2")), AllOf(HasSubstr("fixed batch size of 1"), HasSubstr("batch size 3")));
}

TEST_F(AotiBackendTest, APackageWithoutInputsCannotBeFed) {
    EXPECT_THAT(error_of("fake:noinputs"), HasSubstr("named no inputs"));
}

TEST_F(AotiBackendTest, GpuOptionsAndDevicesThisLibTorchLacksAreAnsweredBeforeRunning) {
    spec_.backend_options["cuda_graph"] = "true";
    EXPECT_EQ(backend_->unsupported_reason(spec_), "cuda_graph and device_resident need a cuda device");
    spec_.device = Device{DeviceKind::cuda, 0};
    EXPECT_THAT(backend_->unsupported_reason(spec_).value_or(""),
                AllOf(HasSubstr("LibTorch 1.13.0 has no CUDA"), HasSubstr("scripts/setup.sh")));
    spec_.device = Device{};
    spec_.backend_options = {{"seq_len", "-1"}};
    EXPECT_THROW(backend_->unsupported_reason(spec_), UserError);
}

TEST(AotiModule, TheModuleAsTheCliOpensIt) {
    void* handle = dlopen(INFERBENCH_AOTI_FAKE_MODULE, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr) << dlerror();
    auto entry = reinterpret_cast<inferbench_backend_module_fn>(dlsym(handle, INFERBENCH_BACKEND_ENTRY_POINT));
    ASSERT_NE(entry, nullptr);
    const BackendModule* module = entry();
    EXPECT_EQ(module->api_version, kBackendApiVersion);
    EXPECT_STREQ(module->name, "torch-aoti");
    std::unique_ptr<Backend> backend(module->create());
    EXPECT_EQ(backend->name(), "torch-aoti");
}

}  // namespace
}  // namespace inferbench
