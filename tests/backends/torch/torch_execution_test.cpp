// What the LibTorch backends share (torch_execution), on this machine's CPU: the capabilities, the threads
// option, the device_resident refusal and a model's run through TorchExecution.
#include "backends/torch/torch_execution.hpp"

#include <thread>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/version.h>

#include "core/error.hpp"

namespace inferbench {
namespace {

using ::testing::ElementsAre;
using ::testing::ThrowsMessage;

// Doubles its one input and counts its runs.
class Doubler final : public TorchModel {
public:
    std::vector<TensorInfo> inputs() const override { return {TensorInfo{"x", DType::f32, {2}}}; }
    std::vector<torch::Tensor> forward(const std::vector<torch::Tensor>& inputs) override {
        ++runs;
        return {inputs.at(0) * 2};
    }
    int runs = 0;
};

TEST(TorchExecution, RunsOnTheCpuOncePreparedAndKeepsTheLastOutputs) {
    Doubler model;
    TorchExecution execution;
    execution.prepare(model, {torch::tensor({1.0f, 2.0f})}, TorchRunConfig{});
    EXPECT_EQ(model.runs, 1) << "prepare() runs once";
    EXPECT_TRUE(torch::equal(execution.outputs().at(0), torch::tensor({2.0f, 4.0f})));
    DeviceTimes times;
    execution.infer(model, times);
    EXPECT_EQ(model.runs, 2);
    EXPECT_EQ(times.compute_ns, kNotMeasured) << "no device times on the CPU";
    EXPECT_EQ(times.h2d_ns, kNotMeasured);
    // A second prepare() starts afresh with its own inputs.
    execution.prepare(model, {torch::tensor({5.0f})}, TorchRunConfig{});
    execution.infer(model, times);
    EXPECT_TRUE(torch::equal(execution.outputs().at(0), torch::tensor({10.0f})));
}

TEST(TorchExecution, CapabilitiesFollowThisLibTorch) {
    const Capabilities caps = libtorch_capabilities();
    EXPECT_THAT(caps.precisions, ElementsAre(Precision::fp32, Precision::fp16, Precision::bf16));
    const bool cuda = libtorch_cuda_available();
    EXPECT_EQ(caps.devices.size(), cuda ? 2u : 1u);
    EXPECT_EQ(caps.devices.front(), DeviceKind::cpu);
    EXPECT_EQ(caps.cuda_graphs, cuda);
    EXPECT_EQ(caps.device_timing, cuda);
    EXPECT_EQ(libtorch_version(), fmt::format("{}.{}.{}", TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR, TORCH_VERSION_PATCH));
}

TEST(TorchExecution, ThreadsZeroMeansOnePerLogicalCore) {
    const int before = torch::get_num_threads();
    set_intra_op_threads(1);
    EXPECT_EQ(torch::get_num_threads(), 1);
    set_intra_op_threads(0);
    EXPECT_EQ(torch::get_num_threads(), static_cast<int>(std::thread::hardware_concurrency()));
    torch::set_num_threads(before);
}

TEST(TorchExecution, DeviceResidentOutputsAreRefusedNamingTheBackend) {
    EXPECT_THAT([] { throw_outputs_stay_on_device("torch-aoti"); },
                ThrowsMessage<UserError>("torch-aoti option device_resident=true leaves the outputs on the GPU, never "
                                         "copied back; check the outputs without it"));
}

}  // namespace
}  // namespace inferbench
