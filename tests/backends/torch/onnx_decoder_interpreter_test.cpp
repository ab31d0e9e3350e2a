// The ONNX decoder models/onnx_decoder writes, on the LibTorch interpreter: the prefill from an empty cache, then
// decode steps feeding present.* back as past_key_values.*, with the greedy tokens of the double-precision
// reference: the file ONNX Runtime runs is one the torch backend can run too.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "backends/torch/onnx_interpreter/onnx_program.hpp"
#include "common/llama_reference.hpp"
#include "common/scratch_dir.hpp"
#include "models/decoder_models.hpp"
#include "models/onnx_decoder.hpp"

namespace inferbench {
namespace {

TEST(OnnxDecoderOnInterpreter, GreedyTokensAreTheReferences) {
    const DecoderShape& s = models::find_decoder_model("llama-tiny")->shape;
    const testing::ScratchDir dir;
    const auto path = dir.path() / "llama-tiny.onnx";
    models::write_llama_onnx(s, 42, Precision::fp32, path);
    auto program = torch_onnx::OnnxProgram::load(path);
    program.to(torch::kCPU, torch::kFloat, false);

    constexpr std::int64_t kInput = 10, kOutput = 5;
    const std::vector<std::int32_t> prompt = generation_prompts(1, kInput, s.vocab, 42);
    std::vector<torch::Tensor> in{
        torch::tensor(std::vector<std::int64_t>(prompt.begin(), prompt.end())).view({1, kInput}),
        torch::ones({1, kInput}, torch::kLong), torch::arange(kInput, torch::kLong).view({1, kInput})};
    for (std::int64_t i = 0; i < 2 * s.layers; ++i) in.push_back(torch::zeros({1, s.kv_heads, 0, s.head_dim}));
    std::vector<std::int32_t> tokens;
    for (std::int64_t step = 0; step < kOutput; ++step) {
        const std::vector<torch::Tensor> out = program.run(in);
        const std::int64_t token = out[0].select(1, out[0].size(1) - 1).argmax(-1).item<std::int64_t>();
        tokens.push_back(static_cast<std::int32_t>(token));
        const std::int64_t total = in[1].size(1);
        in[0] = torch::full({1, 1}, token, torch::kLong);
        in[1] = torch::ones({1, total + 1}, torch::kLong);
        in[2] = torch::full({1, 1}, total, torch::kLong);
        for (std::size_t i = 0; i < static_cast<std::size_t>(2 * s.layers); ++i) in[3 + i] = out[1 + i];
    }
    EXPECT_EQ(tokens, testing::LlamaReference(s, 42).greedy(prompt, kOutput).tokens);
}

}  // namespace
}  // namespace inferbench
