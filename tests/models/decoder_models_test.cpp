#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "common/llama_reference.hpp"
#include "common/scratch_dir.hpp"
#include "core/generation.hpp"
#include "models/decoder_models.hpp"
#include "models/decoder_weights.hpp"

namespace inferbench::models {
namespace {

const DecoderShape& shape_of(std::string_view name) {
    const DecoderModel* model = find_decoder_model(name);
    if (!model) throw std::runtime_error("no such decoder");
    return model->shape;
}

TEST(DecoderModels, ParameterCountsMatchThePublishedFigures) {
    // Llama 3.2 1B: 1.24 B (tied embeddings); Llama 3.1 8B: 8.03 B. Published to three figures.
    for (const char* name : {"llama-3.2-1b", "llama-3.1-8b"}) {
        const DecoderModel* model = find_decoder_model(name);
        ASSERT_NE(model, nullptr);
        const double count = static_cast<double>(parameter_count(model->shape));
        EXPECT_NEAR(count / 1e7, static_cast<double>(model->published_parameters) / 1e7, 0.5) << name;
    }
    EXPECT_EQ(parameter_count(shape_of("llama-3.2-1b")), 1'235'814'400);
    EXPECT_EQ(parameter_count(shape_of("llama-3.1-8b")), 8'030'261'248);
    EXPECT_EQ(parameter_count(shape_of("llama-tiny")), 5'114'112);
}

TEST(DecoderModels, TensorsCountWhatTheShapeCounts) {
    for (const DecoderModel& model : decoder_models()) {
        std::int64_t total = 0;
        for (const DecoderTensor& t : decoder_tensors(model.shape)) total += t.element_count();
        EXPECT_EQ(total, parameter_count(model.shape)) << model.name;
        EXPECT_FALSE(shape_problem(model.shape)) << model.name;
    }
}

TEST(DecoderModels, AStepReadsTheLmHeadButNotTheEmbeddingTable) {
    const DecoderShape& untied = shape_of("llama-3.1-8b");
    EXPECT_EQ(parameters_read_per_step(untied), parameter_count(untied) - untied.vocab * untied.hidden);
    const DecoderShape& tied = shape_of("llama-3.2-1b");
    EXPECT_EQ(parameters_read_per_step(tied), parameter_count(tied));
    // 8B: 2 layers of K and V per token, 8 heads of 128: 32 x 2 x 8 x 128 elements = 128 KiB at fp16.
    EXPECT_EQ(kv_elements_per_token(untied) * 2, 131072);
}

TEST(DecoderModels, ForwardFlopsAreTwicePerWeightPlusCausalAttention) {
    const DecoderShape& s = shape_of("llama-tiny");
    const double one = forward_flops(s, 1, 0);
    EXPECT_DOUBLE_EQ(one, 2.0 * static_cast<double>(parameters_read_per_step(s)) +
                              4.0 * static_cast<double>(s.layers * s.heads * s.head_dim));
    // 10 new tokens after 5: token i attends to 5 + i positions: 5 x 10 + 55.
    EXPECT_DOUBLE_EQ(forward_flops(s, 10, 5) - 10 * 2.0 * static_cast<double>(parameters_read_per_step(s)),
                     4.0 * static_cast<double>(s.layers * s.heads * s.head_dim) * 105.0);
}

TEST(DecoderModels, ShapeProblemsAreNamed) {
    DecoderShape s = shape_of("llama-tiny");
    s.kv_heads = 3;
    EXPECT_TRUE(shape_problem(s));
    s = shape_of("llama-tiny");
    s.head_dim = 31;
    EXPECT_TRUE(shape_problem(s));
    s.layers = 0;
    EXPECT_TRUE(shape_problem(s));
}

TEST(DecoderModels, WeightsDependOnSeedAndNameOnly) {
    const DecoderShape& s = shape_of("llama-tiny");
    const auto tensors = decoder_tensors(s);
    const DecoderTensor& q = tensors[2];
    ASSERT_EQ(q.name, "model.layers.0.self_attn.q_proj.weight");
    std::vector<float> a(static_cast<std::size_t>(q.element_count())), b(a.size()), c(a.size());
    fill_decoder_tensor(q, 42, a);
    fill_decoder_tensor(q, 42, b);
    fill_decoder_tensor(q, 43, c);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
    const float bound = std::sqrt(3.0F / 256.0F);
    for (const float v : a) EXPECT_LE(std::fabs(v), bound);
    std::vector<float> wrong(3);
    EXPECT_THROW(fill_decoder_tensor(q, 42, wrong), std::invalid_argument);
}

TEST(DecoderModels, PromptsAvoidControlTokensAndFollowTheSeed) {
    const auto prompts = generation_prompts(4, 32, 128256, 7);
    ASSERT_EQ(prompts.size(), 128U);
    for (const std::int32_t id : prompts) {
        EXPECT_GE(id, kFirstPromptToken);
        EXPECT_LT(id, 128256 - kReservedTopTokens);
    }
    EXPECT_EQ(prompts, generation_prompts(4, 32, 128256, 7));
    EXPECT_NE(prompts, generation_prompts(4, 32, 128256, 8));
    for (const std::int32_t id : generation_prompts(1, 64, 100, 1)) EXPECT_LT(id, 100);
}

TEST(DecoderModels, EntriesAreDecodersByNameExtensionOrFolder) {
    testing::ScratchDir dir;
    EXPECT_TRUE(is_decoder_model("llama-tiny"));
    EXPECT_FALSE(is_decoder_model("resnet50"));
    const auto gguf = dir.path() / "m.gguf";
    std::ofstream(gguf) << "GGUF";
    EXPECT_TRUE(is_decoder_model(gguf.string()));
    EXPECT_FALSE(is_decoder_model((dir.path() / "absent.gguf").string()));
    const auto folder = dir.path() / "hf";
    std::filesystem::create_directories(folder);
    EXPECT_FALSE(is_decoder_model(folder.string()));
    std::ofstream(folder / "config.json") << "{}";
    EXPECT_TRUE(is_decoder_model(folder.string()));
    const auto not_onnx = dir.path() / "x.onnx";
    std::ofstream(not_onnx) << "not a model";
    EXPECT_FALSE(is_decoder_model(not_onnx.string()));
}

// The reference the engines are held against: its greedy choices must be clear (a gap between the best two
// logits far above float32 rounding), else agreement between engines would prove nothing.
TEST(LlamaReference, GreedyTokensOfTheTinyModelHaveClearMargins) {
    const DecoderShape& s = shape_of("llama-tiny");
    const testing::LlamaReference reference(s, 42);
    const auto prompt = generation_prompts(1, 8, s.vocab, 42);
    const testing::ReferenceGeneration out = reference.greedy(prompt, 8);
    ASSERT_EQ(out.tokens.size(), 8U);
    for (const std::int32_t id : out.tokens) EXPECT_LT(id, s.vocab);
    EXPECT_GT(out.smallest_margin, 1e-3);
    // Not one token repeated throughout: the model responds to its context.
    EXPECT_NE(std::count(out.tokens.begin(), out.tokens.end(), out.tokens[0]), 8);
}

}  // namespace
}  // namespace inferbench::models
