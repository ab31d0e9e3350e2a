// Generation with the ONNX Runtime backend on the CPU: llama-tiny written by models/onnx_decoder, its greedy
// tokens against the double-precision reference, the KV cache carried between steps, seeded sampling, and the
// cells and files it refuses.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "backends/onnxruntime/onnxruntime_backend.hpp"
#include "backends/onnxruntime/ort_generation.hpp"
#include "common/llama_reference.hpp"
#include "common/scratch_dir.hpp"
#include "core/error.hpp"
#include "models/decoder_models.hpp"
#include "models/onnx_decoder.hpp"
#include "models/zoo.hpp"

namespace inferbench {
namespace {

using ::testing::HasSubstr;

constexpr std::uint64_t kSeed = 42;

const DecoderShape& tiny() { return models::find_decoder_model("llama-tiny")->shape; }

class Recorder : public TokenSink {
public:
    void step(std::span<const std::int32_t> tokens) override { steps.emplace_back(tokens.begin(), tokens.end()); }
    void step_ended_at(std::int64_t /*end_ns*/, std::span<const std::int32_t> tokens) override { step(tokens); }
    bool stop_requested() const override { return false; }

    // Sequence b's tokens, in order.
    std::vector<std::int32_t> sequence(std::size_t b) const {
        std::vector<std::int32_t> out;
        for (const auto& s : steps) out.push_back(s.at(b));
        return out;
    }
    std::vector<std::vector<std::int32_t>> steps;
};

class OrtGenerationTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = new testing::ScratchDir();
        models::write_llama_onnx(tiny(), kSeed, Precision::fp32, model());
    }
    static void TearDownTestSuite() { delete dir_; }
    static std::filesystem::path model() { return dir_->path() / "llama-tiny.onnx"; }

    BenchmarkSpec spec(std::int64_t batch, std::int64_t input, std::int64_t output) const {
        BenchmarkSpec s;
        s.model = model().string();
        s.batch_size = batch;
        s.precision = Precision::fp32;
        s.generation = GenerationSettings{input, output, Sampling::greedy};
        s.backend_options = {{"intra_op_threads", "1"}, {"inter_op_threads", "1"}};
        return s;
    }

    // The tokens of one generation of `prompts` (batch x input).
    Recorder generate(OnnxRuntimeBackend& backend, std::vector<std::int32_t> prompts, std::int64_t batch,
                      std::int64_t output, Sampling sampling = Sampling::greedy) {
        const auto input = static_cast<std::int64_t>(prompts.size()) / batch;
        BenchmarkSpec s = spec(batch, input, output);
        s.generation.sampling = sampling;
        backend.load(model().string(), s);
        backend.prepare_generation({batch, input, output, std::move(prompts), sampling, 7});
        Recorder recorder;
        backend.generate(recorder);
        return recorder;
    }

    static testing::ScratchDir* dir_;
};

testing::ScratchDir* OrtGenerationTest::dir_ = nullptr;

TEST_F(OrtGenerationTest, GreedyTokensAreTheReferences) {
    OnnxRuntimeBackend backend;
    const std::int64_t batch = 2, input = 12, output = 8;
    const std::vector<std::int32_t> prompts = generation_prompts(batch, input, tiny().vocab, kSeed);
    const Recorder got = generate(backend, prompts, batch, output);
    ASSERT_EQ(got.steps.size(), static_cast<std::size_t>(output));
    const testing::LlamaReference reference(tiny(), kSeed);
    for (std::size_t b = 0; b < 2; ++b) {
        const auto prompt = std::span(prompts).subspan(b * input, input);
        const testing::ReferenceGeneration expected = reference.greedy(prompt, output);
        EXPECT_GT(expected.smallest_margin, 1e-3);  // agreement is not luck of float32 rounding
        EXPECT_EQ(got.sequence(b), expected.tokens) << "sequence " << b;
    }
    const DecoderInfo info = backend.decoder_info();
    EXPECT_EQ(info.shape, tiny());
    EXPECT_EQ(info.kv_dtype, DType::f32);
    EXPECT_EQ(info.weight_bytes, parameter_count(tiny()) * 4);
}

TEST_F(OrtGenerationTest, Fp16DecoderIsAValidGraphWithTheReferencesTokens) {
    // The fp16 file the GPU cells run, loaded directly (the harness refuses fp16 cells on the CPU): ONNX Runtime's
    // type checks pass, and its CPU provider, computing the float16 ops in float32 between Casts, gives the
    // reference's tokens from the weights rounded to float16 (the same bytes on every machine).
    const auto half = dir_->path() / "llama-tiny-fp16.onnx";
    models::write_llama_onnx(tiny(), kSeed, Precision::fp16, half);
    const std::int64_t input = 12, output = 8;
    const std::vector<std::int32_t> prompts = generation_prompts(1, input, tiny().vocab, kSeed);
    BenchmarkSpec s = spec(1, input, output);
    s.precision = Precision::fp16;
    OnnxRuntimeBackend backend;
    backend.load(half.string(), s);
    EXPECT_EQ(backend.decoder_info().kv_dtype, DType::f16);
    EXPECT_EQ(backend.decoder_info().weight_bytes, parameter_count(tiny()) * 2);
    backend.prepare_generation({1, input, output, prompts, Sampling::greedy, 0});
    Recorder got;
    backend.generate(got);
    EXPECT_EQ(got.sequence(0), testing::LlamaReference(tiny(), kSeed).greedy(prompts, output).tokens);
}

TEST_F(OrtGenerationTest, DecodeStepsMatchOnePrefillOfTheLongerPrompt) {
    // The cache carried through decode steps gives what a prefill of the whole text computes.
    OnnxRuntimeBackend backend;
    std::vector<std::int32_t> prompt = generation_prompts(1, 6, tiny().vocab, 3);
    const std::vector<std::int32_t> generated = generate(backend, prompt, 1, 5).sequence(0);
    prompt.insert(prompt.end(), generated.begin(), generated.end() - 1);
    const std::vector<std::int32_t> once = generate(backend, prompt, 1, 1).sequence(0);
    EXPECT_EQ(once.front(), generated.back());
}

TEST_F(OrtGenerationTest, WeightsInAnExternalDataFileGiveTheSameTokens) {
    // The form of models over 2 GB (llama-3.2-1b at fp32 and up), on the tiny model.
    const auto external = dir_->path() / "external" / "llama-tiny.onnx";
    std::filesystem::create_directories(external.parent_path());
    models::write_llama_onnx(tiny(), kSeed, Precision::fp32, external, /*inline_limit=*/0);
    ASSERT_TRUE(std::filesystem::exists(external.parent_path() / models::onnx_decoder_data_name(external)));
    ASSERT_LT(std::filesystem::file_size(external), 1U << 20U);
    const std::vector<std::int32_t> prompt = generation_prompts(1, 7, tiny().vocab, 5);
    OnnxRuntimeBackend inline_backend, external_backend;
    const Recorder expected = generate(inline_backend, prompt, 1, 4);
    BenchmarkSpec s = spec(1, 7, 4);
    s.model = external.string();
    external_backend.load(external.string(), s);
    external_backend.prepare_generation({1, 7, 4, prompt, Sampling::greedy, 0});
    Recorder got;
    external_backend.generate(got);
    EXPECT_EQ(got.steps, expected.steps);
}

TEST_F(OrtGenerationTest, IdenticalPromptsGiveIdenticalTokensAndGenerationsRepeat) {
    OnnxRuntimeBackend backend;
    std::vector<std::int32_t> prompts = generation_prompts(1, 5, tiny().vocab, 9);
    prompts.insert(prompts.end(), prompts.begin(), prompts.end());
    const Recorder first = generate(backend, prompts, 2, 6, Sampling::seeded);
    EXPECT_EQ(first.sequence(0).size(), 6U);
    Recorder second;
    backend.generate(second);  // from an empty cache again, the same seed
    EXPECT_EQ(second.steps, first.steps);
    const Recorder greedy = generate(backend, prompts, 2, 6);
    EXPECT_EQ(greedy.sequence(0), greedy.sequence(1));
}

TEST(OrtOutOfMemory, AllocationFailuresAreOutOfMemory) {
    EXPECT_TRUE(
        is_out_of_memory("BFCArena::AllocateRawInternal(...) Failed to allocate memory for requested buffer "
                         "of size 8589934592"));
    EXPECT_TRUE(is_out_of_memory("CUDA failure 2: out of memory ; GPU=0 ; hostname=h ; expr=cudaMalloc(&p, size);"));
    EXPECT_TRUE(is_out_of_memory("std::bad_alloc"));
    EXPECT_FALSE(is_out_of_memory("Non-zero status code returned while running Gemm node. Name:'lm_head'"));
}

TEST_F(OrtGenerationTest, RefusesWhatItCannotRun) {
    OnnxRuntimeBackend backend;
    BenchmarkSpec s = spec(1, 8, 8);
    s.precision = Precision::fp16;
    EXPECT_THAT(backend.unsupported_reason(s).value_or(""), HasSubstr("fp16 on the CPU"));
    s.precision = Precision::int8;
    EXPECT_THAT(backend.unsupported_reason(s).value_or(""), HasSubstr("fp32 or fp16"));
    EXPECT_FALSE(backend.unsupported_reason(spec(1, 8, 8)).has_value());
    EXPECT_TRUE(backend.capabilities().generates);

    backend.load(model().string(), spec(1, 4000, 200));
    try {
        backend.prepare_generation({1, 4000, 200, std::vector<std::int32_t>(4000, 20), Sampling::greedy, 0});
        ADD_FAILURE() << "a context beyond the model's was accepted";
    } catch (const UserError& e) {
        EXPECT_THAT(e.what(), HasSubstr("exceed the model's context of 4096 tokens"));
    }
}

TEST_F(OrtGenerationTest, ForeignModelIsOneClearError) {
    const auto foreign = dir_->path() / "mobilenet.onnx";
    std::ofstream(foreign, std::ios::binary) << models::zoo_model_bytes("mobilenet", 1);
    OnnxRuntimeBackend backend;
    try {
        backend.load(foreign.string(), spec(1, 4, 4));
        ADD_FAILURE() << "a model without a KV cache loaded as a decoder";
    } catch (const UserError& e) {
        EXPECT_THAT(e.what(), HasSubstr("mobilenet.onnx: not an ONNX decoder with a KV cache"));
    }
}

TEST_F(OrtGenerationTest, TruncatedDecoderIsOneClearError) {
    std::string bytes;
    {
        std::ifstream in(model(), std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    const auto cut = dir_->path() / "cut.onnx";
    std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 3);
    OnnxRuntimeBackend backend;
    try {
        backend.load(cut.string(), spec(1, 4, 4));
        ADD_FAILURE() << "a truncated decoder loaded";
    } catch (const std::exception& e) {
        EXPECT_THAT(e.what(), HasSubstr("cut.onnx"));
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
}

}  // namespace
}  // namespace inferbench
