// Generation on the LibTorch backend: llama-tiny written as an ONNX decoder (models/onnx_decoder), run step by step
// by the interpreter on the CPU, its greedy tokens held against the plain double-precision reference.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/torch/torch_backend.hpp"
#include "common/llama_reference.hpp"
#include "common/scratch_dir.hpp"
#include "core/error.hpp"
#include "models/decoder_models.hpp"
#include "models/onnx_decoder.hpp"

namespace inferbench {
namespace {

class RecordingSink final : public TokenSink {
public:
    explicit RecordingSink(std::size_t stop_after = 0) : stop_after_(stop_after) {}
    void step(std::span<const std::int32_t> tokens) override { steps.emplace_back(tokens.begin(), tokens.end()); }
    void step_ended_at(std::int64_t /*end_ns*/, std::span<const std::int32_t> /*tokens*/) override {
        ADD_FAILURE() << "an in-process backend's steps are timed by the harness";
    }
    bool stop_requested() const override { return stop_after_ > 0 && steps.size() >= stop_after_; }
    std::vector<std::vector<std::int32_t>> steps;

private:
    std::size_t stop_after_;
};

const DecoderShape& tiny() { return models::find_decoder_model("llama-tiny")->shape; }

BenchmarkSpec generative_spec(const std::string& model, Sampling sampling = Sampling::greedy) {
    BenchmarkSpec spec;
    spec.backend = "torch";
    spec.model = model;
    spec.batch_size = 2;
    spec.generation = {.input_tokens = 8, .output_tokens = 8, .sampling = sampling};
    return spec;
}

GenerationRequest request_of(const BenchmarkSpec& spec, std::uint64_t seed) {
    return {spec.batch_size,
            spec.generation.input_tokens,
            spec.generation.output_tokens,
            generation_prompts(spec.batch_size, spec.generation.input_tokens, tiny().vocab, seed),
            spec.generation.sampling,
            seed};
}

class TorchGeneration : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = new testing::ScratchDir();
        model_ = (dir_->path() / "llama-tiny-s42.onnx").string();
        models::write_llama_onnx(tiny(), 42, Precision::fp32, model_);
    }
    static void TearDownTestSuite() { delete dir_; }
    static testing::ScratchDir* dir_;
    static std::string model_;
};
testing::ScratchDir* TorchGeneration::dir_ = nullptr;
std::string TorchGeneration::model_;

TEST_F(TorchGeneration, GreedyTokensEqualTheReferences) {
    auto backend = make_torch_backend();
    const BenchmarkSpec spec = generative_spec(model_);
    ASSERT_TRUE(backend->capabilities().generates);
    ASSERT_EQ(backend->unsupported_reason(spec), std::nullopt);
    backend->load(model_, spec);
    EXPECT_EQ(backend->decoder_info().shape, tiny());
    EXPECT_EQ(backend->decoder_info().kv_dtype, DType::f32);
    const GenerationRequest request = request_of(spec, 42);
    backend->prepare_generation(request);
    const testing::LlamaReference reference(tiny(), 42);
    for (int generation = 0; generation < 2; ++generation) {  // the second from an empty cache again
        RecordingSink sink;
        backend->generate(sink);
        ASSERT_EQ(sink.steps.size(), 8U);
        for (std::int64_t row = 0; row < request.batch; ++row) {
            const std::span<const std::int32_t> prompt(request.prompts.data() + row * request.input_tokens,
                                                       static_cast<std::size_t>(request.input_tokens));
            const testing::ReferenceGeneration expected = reference.greedy(prompt, request.output_tokens);
            ASSERT_GT(expected.smallest_margin, 1e-3) << "a margin this small would make agreement luck";
            std::vector<std::int32_t> tokens;
            for (const auto& step : sink.steps) tokens.push_back(step[static_cast<std::size_t>(row)]);
            EXPECT_EQ(tokens, expected.tokens) << "sequence " << row << ", generation " << generation;
        }
    }
}

TEST_F(TorchGeneration, SeededSamplingRepeatsForTheSameSeedAndStopsWhenAsked) {
    auto backend = make_torch_backend();
    const BenchmarkSpec spec = generative_spec(model_, Sampling::seeded);
    backend->load(model_, spec);
    backend->prepare_generation(request_of(spec, 3));
    RecordingSink first, second, stopped(3);
    backend->generate(first);
    backend->generate(second);
    EXPECT_EQ(first.steps, second.steps);
    for (const auto& step : first.steps)
        for (const std::int32_t id : step) EXPECT_TRUE(id >= 0 && id < tiny().vocab);
    backend->generate(stopped);
    EXPECT_EQ(stopped.steps.size(), 3U);
}

// bf16 on the CPU: the cache and the weights in bf16 (the decoder's info says so), the tokens valid ids. Random
// weights' logit margins are far below bf16's rounding, so the tokens need not equal fp32's.
TEST_F(TorchGeneration, Bf16KeepsTheCacheInBf16) {
    auto backend = make_torch_backend();
    BenchmarkSpec spec = generative_spec(model_);
    spec.precision = Precision::bf16;
    ASSERT_EQ(backend->unsupported_reason(spec), std::nullopt);
    backend->load(model_, spec);
    EXPECT_EQ(backend->decoder_info().kv_dtype, DType::bf16);
    EXPECT_EQ(backend->decoder_info().weight_bytes, parameter_count(tiny()) * 2);
    backend->prepare_generation(request_of(spec, 42));
    RecordingSink sink;
    backend->generate(sink);
    ASSERT_EQ(sink.steps.size(), 8U);
    for (const auto& step : sink.steps)
        for (const std::int32_t id : step) EXPECT_TRUE(id >= 0 && id < tiny().vocab);
}

TEST_F(TorchGeneration, RefusesWhatIsNotAnOnnxDecoder) {
    auto backend = make_torch_backend();
    EXPECT_EQ(backend->unsupported_reason(generative_spec("/models/net.pt")),
              "generation on the torch backend needs an ONNX decoder with past_key_values inputs");
    BenchmarkSpec graph = generative_spec(model_);
    graph.backend_options = {{"cuda_graph", "true"}};
    EXPECT_NE(backend->unsupported_reason(graph), std::nullopt);
    BenchmarkSpec long_cell = generative_spec(model_);
    backend->load(model_, long_cell);
    GenerationRequest too_long = request_of(long_cell, 1);
    too_long.output_tokens = tiny().max_context;
    EXPECT_THROW(backend->prepare_generation(too_long), UserError);
}

}  // namespace
}  // namespace inferbench
