// The zoo's exports on LibTorch: they load, run at batch 2 and, where ONNX Runtime is built, agree
// with it on the same file and inputs to fp32 rounding. Batch 2 keeps this quick on 2 cores.
#include <gtest/gtest.h>

#include <torch/types.h>

#include <fstream>
#include <iostream>
#include <memory>

#include "backends/torch/onnx_interpreter/onnx_program.hpp"
#include "common/scratch_dir.hpp"
#include "models/zoo.hpp"
#include "models/zoo_builders.hpp"

#ifdef INFERBENCH_HAVE_ONNXRUNTIME
#include "backends/torch/onnxruntime_reference.hpp"
#endif

namespace inferbench::torch_onnx {
namespace {

namespace onnx = models::onnx;
constexpr std::int64_t kBatch = 2;

// Exports each zoo model once for the whole suite.
class ZooOnTorch : public ::testing::TestWithParam<std::string> {
protected:
    static void SetUpTestSuite() { dir_ = std::make_unique<inferbench::testing::ScratchDir>(); }
    static void TearDownTestSuite() { dir_.reset(); }

    static std::filesystem::path model_path(const std::string& name) {
        return models::export_onnx(name, dir_->path(), 42);
    }
    static torch::Tensor input() {
        torch::manual_seed(7);
        return torch::randn({kBatch, 3, 224, 224});
    }

    static std::unique_ptr<inferbench::testing::ScratchDir> dir_;
};
std::unique_ptr<inferbench::testing::ScratchDir> ZooOnTorch::dir_;

TEST_P(ZooOnTorch, RunsAtBatchTwoWithFiniteOutputs) {
    const OnnxProgram program = OnnxProgram::load(model_path(GetParam()));
    ASSERT_EQ(program.inputs().size(), 1U);
    EXPECT_EQ(program.inputs()[0].dims, (std::vector<onnx::OnnxDimension>{std::string("batch"), std::int64_t{3},
                                                                          std::int64_t{224}, std::int64_t{224}}));
    const std::vector<torch::Tensor> outputs = program.run({input()});
    ASSERT_EQ(outputs.size(), 1U);
    EXPECT_EQ(outputs[0].sizes(), (std::vector<std::int64_t>{kBatch, 1000}));
    EXPECT_TRUE(torch::isfinite(outputs[0]).all().item<bool>());
    EXPECT_GT(outputs[0].abs().max().item<float>(), 0.0F);
}

TEST_P(ZooOnTorch, ChannelsLastGivesTheSameResult) {
    OnnxProgram program = OnnxProgram::load(model_path(GetParam()));
    const torch::Tensor x = input().slice(0, 0, 1);  // batch 1: NHWC is slow on LibTorch 1.13's CPU kernels
    const torch::Tensor reference = program.run({x}).at(0);
    program.to(torch::kCPU, torch::kFloat, true);
    const torch::Tensor nhwc = program.run({x}).at(0);
    const double error = (nhwc - reference).abs().max().item<double>() / reference.abs().max().item<double>();
    EXPECT_LT(error, 1e-4);
}

#ifdef INFERBENCH_HAVE_ONNXRUNTIME
using ort_reference::run_onnxruntime;

// max |ours - theirs| / max |theirs|, printed for the record.
double relative_difference(const std::string& what, const torch::Tensor& ours, const torch::Tensor& theirs) {
    EXPECT_EQ(ours.sizes(), theirs.sizes()) << what;
    const ort_reference::Agreement a = ort_reference::agreement(ours, theirs);
    std::cout << what << ": max |torch - onnxruntime| = " << a.max_difference << ", max |onnxruntime| = "
              << a.max_reference << ", ratio " << a.max_difference / a.max_reference << "\n";
    return a.max_difference / a.max_reference;
}

// The same file and inputs through the ONNX Runtime backend: max |torch - ort| / max |ort| < 1e-4.
TEST_P(ZooOnTorch, AgreesWithOnnxRuntime) {
    const std::filesystem::path path = model_path(GetParam());
    const torch::Tensor x = input();
    const torch::Tensor ours = OnnxProgram::load(path).run({x}).at(0);
    const std::vector<torch::Tensor> theirs = run_onnxruntime(path, {x});
    ASSERT_EQ(theirs.size(), 1U);
    EXPECT_LT(relative_difference(GetParam(), ours, theirs[0]), 1e-4);
}

// The zoo's BERT at a size a test can afford: every transformer operator (Gather embeddings,
// LayerNormalization, Erf GELU, attention with the padding mask, Split/Squeeze head) against ONNX Runtime.
TEST(ZooOnTorchBert, SmallBertAgreesWithOnnxRuntime) {
    const inferbench::testing::ScratchDir dir;
    const models::BertConfig config{.layers = 2,
                                    .hidden = 64,
                                    .heads = 4,
                                    .intermediate = 128,
                                    .vocab = 500,
                                    .max_positions = 64,
                                    .sequence_length = 16};
    const std::filesystem::path path = dir.path() / "bert-small.onnx";
    std::ofstream(path, std::ios::binary) << models::build_bert(config, 3).serialize();

    torch::manual_seed(11);
    const torch::Tensor ids = torch::randint(0, config.vocab, {kBatch, config.sequence_length}, torch::kLong);
    torch::Tensor mask = torch::ones({kBatch, config.sequence_length}, torch::kLong);
    mask.slice(1, 12).fill_(0);  // padding at the end of each sequence
    const torch::Tensor types =
        (torch::arange(config.sequence_length, torch::kLong) >= 8).to(torch::kLong).expand_as(ids);
    const std::vector<torch::Tensor> inputs{ids, mask, types.contiguous()};

    const std::vector<torch::Tensor> ours = OnnxProgram::load(path).run(inputs);
    const std::vector<torch::Tensor> theirs = run_onnxruntime(path, inputs);
    ASSERT_EQ(ours.size(), 2U);
    ASSERT_EQ(theirs.size(), 2U);
    EXPECT_LT(relative_difference("bert-small start_logits", ours[0], theirs[0]), 1e-4);
    EXPECT_LT(relative_difference("bert-small end_logits", ours[1], theirs[1]), 1e-4);
}
#endif

INSTANTIATE_TEST_SUITE_P(Zoo, ZooOnTorch, ::testing::Values("resnet50", "mobilenet"),
                         [](const auto& test_info) { return test_info.param; });

}  // namespace
}  // namespace inferbench::torch_onnx
