#include "models/gguf_writer.hpp"

#include <gtest/gtest.h>
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "common/scratch_dir.hpp"
#include "core/error.hpp"
#include "models/decoder_models.hpp"
#include "models/weight_generator.hpp"

namespace inferbench::models {
namespace {

std::vector<float> seeded_values(std::size_t n, float scale) {
    std::vector<float> v(n);
    WeightGenerator(7).fill_symmetric(v, scale);
    return v;
}

// The largest |x| of each 32-value block.
std::vector<float> block_maxima(const std::vector<float>& x) {
    std::vector<float> m(x.size() / kGgufQuantBlock, 0.0F);
    for (std::size_t i = 0; i < x.size(); ++i) m[i / kGgufQuantBlock] = std::max(m[i / kGgufQuantBlock], std::fabs(x[i]));
    return m;
}

TEST(GgufEncoding, Q8_0RoundsEachValueToItsBlocksStep) {
    const std::vector<float> x = seeded_values(256, 3.0F);
    const auto bytes = gguf_encode(x, GgufType::q8_0);
    EXPECT_EQ(bytes.size(), 8U * 34U);
    const std::vector<float> y = gguf_decode(bytes, GgufType::q8_0, 256);
    const std::vector<float> m = block_maxima(x);
    for (std::size_t i = 0; i < x.size(); ++i) {
        const float step = m[i / kGgufQuantBlock] / 127.0F;
        // Half a step, plus the float16 rounding of the block's scale (relative 2^-11, x |q| <= 127).
        EXPECT_LE(std::fabs(y[i] - x[i]), 0.5F * step + std::fabs(x[i]) * 0x1p-10F) << i;
    }
}

TEST(GgufEncoding, Q4_0KeepsEachBlocksExtremeAndRoundsTheRest) {
    std::vector<float> x = seeded_values(128, 1.0F);
    x[5] = -2.0F;  // block 0's extreme, negative
    x[40] = 2.5F;  // block 1's extreme, positive
    const auto bytes = gguf_encode(x, GgufType::q4_0);
    EXPECT_EQ(bytes.size(), 4U * 18U);
    const std::vector<float> y = gguf_decode(bytes, GgufType::q4_0, 128);
    EXPECT_FLOAT_EQ(y[5], -2.0F);
    EXPECT_FLOAT_EQ(y[40], 2.5F);
    const std::vector<float> m = block_maxima(x);
    for (std::size_t i = 0; i < x.size(); ++i) {
        const float step = m[i / kGgufQuantBlock] / 8.0F;  // the value opposite the extreme may clamp: one step
        EXPECT_LE(std::fabs(y[i] - x[i]), step * 1.01F) << i;
    }
}

TEST(GgufEncoding, HalfTypesRoundToNearest) {
    const std::vector<float> x = {1.0F, -2.5F, 0.1F, 65504.0F, 1e-3F};
    const std::vector<float> h = gguf_decode(gguf_encode(x, GgufType::f16), GgufType::f16, 5);
    const std::vector<float> b = gguf_decode(gguf_encode(x, GgufType::bf16), GgufType::bf16, 5);
    for (std::size_t i = 0; i < x.size(); ++i) {
        EXPECT_NEAR(h[i], x[i], std::fabs(x[i]) * 0x1p-11F) << i;
        EXPECT_NEAR(b[i], x[i], std::fabs(x[i]) * 0x1p-8F) << i;
    }
    EXPECT_EQ(gguf_encode(x, GgufType::f32).size(), 20U);
    EXPECT_THROW(gguf_encode(x, GgufType::q8_0), std::invalid_argument);  // 5 values are no whole block
}

TEST(GgufEncoding, RotaryRowsPairAdjacentlyWithinEachHead) {
    // 2 heads of head_dim 4, 2 columns: row r holds {10r, 10r + 1}.
    std::vector<float> w(16);
    for (std::size_t r = 0; r < 8; ++r) w[2 * r] = 10.0F * static_cast<float>(r), w[2 * r + 1] = w[2 * r] + 1;
    const std::vector<float> p = interleave_rotary_rows(w, 2, 4);
    const std::vector<float> rows = {0, 20, 10, 30, 40, 60, 50, 70};  // per head: rows 0, 2, 1, 3
    for (std::size_t r = 0; r < 8; ++r) {
        EXPECT_EQ(p[2 * r], rows[r]) << r;
        EXPECT_EQ(p[2 * r + 1], rows[r] + 1) << r;
    }
}

TEST(GgufNames, HuggingFaceNamesMapToLlamaCpps) {
    const DecoderShape& shape = find_decoder_model("llama-tiny")->shape;
    std::vector<std::string> names;
    for (const DecoderTensor& t : decoder_tensors(shape)) names.push_back(gguf_tensor_name(t));
    EXPECT_EQ(names.front(), "token_embd.weight");
    EXPECT_EQ(names[1], "blk.0.attn_norm.weight");
    EXPECT_EQ(names[2], "blk.0.attn_q.weight");
    EXPECT_EQ(names[5], "blk.0.attn_output.weight");
    EXPECT_EQ(names[6], "blk.0.ffn_norm.weight");
    EXPECT_EQ(names[9], "blk.0.ffn_down.weight");
    EXPECT_EQ(names[names.size() - 2], "output_norm.weight");
    EXPECT_EQ(names.back(), "output.weight");
}

TEST(GgufNames, NormsStayF32AndPartialBlocksFallBackToF16) {
    const DecoderTensor norm{"model.norm.weight", {256}, DecoderTensor::Kind::norm, -1};
    const DecoderTensor q{"model.layers.0.self_attn.q_proj.weight", {256, 256}, DecoderTensor::Kind::linear, 0};
    const DecoderTensor odd{"model.layers.0.self_attn.q_proj.weight", {48, 48}, DecoderTensor::Kind::linear, 0};
    EXPECT_EQ(gguf_tensor_type(norm, Precision::int4), GgufType::f32);
    EXPECT_EQ(gguf_tensor_type(q, Precision::int8), GgufType::q8_0);
    EXPECT_EQ(gguf_tensor_type(q, Precision::int4), GgufType::q4_0);
    EXPECT_EQ(gguf_tensor_type(q, Precision::bf16), GgufType::bf16);
    EXPECT_EQ(gguf_tensor_type(odd, Precision::int8), GgufType::f16);
    EXPECT_THROW(gguf_tensor_type(q, Precision::fp8), UserError);
}

TEST(GgufNames, CacheFormsNameTheFileTypes) {
    EXPECT_EQ(gguf_file_form(Precision::fp32), "f32.v2.gguf");
    EXPECT_EQ(gguf_file_form(Precision::int8), "q8_0.v2.gguf");
    EXPECT_EQ(gguf_file_form(Precision::int4), "q4_0.v2.gguf");
    EXPECT_EQ(decoder_cache_path("/cache", "llama-tiny", 42, gguf_file_form(Precision::bf16)).filename(),
              "llama-tiny-s42-bf16.v2.gguf");
    EXPECT_THROW(gguf_file_form(Precision::fp8), UserError);
}

// The file's size: the header, then every tensor at its 32-byte aligned offset.
std::int64_t data_bytes(const DecoderShape& shape, Precision precision) {
    std::int64_t bytes = 0;
    for (const DecoderTensor& t : decoder_tensors(shape))
        bytes = (bytes + 31) / 32 * 32 + gguf_type_bytes(gguf_tensor_type(t, precision), t.element_count());
    return bytes;
}

TEST(GgufWriter, WritesEveryPrecisionAndReadsTheShapeBack) {
    testing::ScratchDir dir;
    const DecoderShape& shape = find_decoder_model("llama-tiny")->shape;
    for (const Precision p : {Precision::fp32, Precision::fp16, Precision::bf16, Precision::int8, Precision::int4}) {
        const auto file = dir.path() / fmt::format("tiny-{}.gguf", to_string(p));
        write_llama_gguf(shape, 42, p, file);
        EXPECT_EQ(read_gguf_decoder_shape(file), shape) << to_string(p);
        const auto size = static_cast<std::int64_t>(std::filesystem::file_size(file));
        EXPECT_GT(size, data_bytes(shape, p)) << to_string(p);
        EXPECT_LT(size, data_bytes(shape, p) + 200'000) << to_string(p);  // the header: metadata and 4096 pieces
    }
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 5);  // no staging left behind
}

TEST(GgufWriter, TiedEmbeddingsHaveNoOutputTensor) {
    testing::ScratchDir dir;
    DecoderShape shape = find_decoder_model("llama-tiny")->shape;
    shape.tied_embeddings = true;
    write_llama_gguf(shape, 1, Precision::fp16, dir.path() / "tied.gguf");
    EXPECT_TRUE(read_gguf_decoder_shape(dir.path() / "tied.gguf").tied_embeddings);
}

TEST(GgufWriter, RefusesFp8AndLeavesNoFile) {
    testing::ScratchDir dir;
    const DecoderShape& shape = find_decoder_model("llama-tiny")->shape;
    EXPECT_THROW(write_llama_gguf(shape, 1, Precision::fp8, dir.path() / "x.gguf"), UserError);
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "x.gguf"));
}

TEST(GgufReader, ATruncatedFileIsOneErrorNamingIt) {
    testing::ScratchDir dir;
    const auto file = dir.path() / "cut.gguf";
    write_llama_gguf(find_decoder_model("llama-tiny")->shape, 3, Precision::int8, file);
    std::filesystem::resize_file(file, 20'000);  // inside the vocabulary
    try {
        read_gguf_decoder_shape(file);
        FAIL() << "a truncated file was read";
    } catch (const UserError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find(file.string()), std::string::npos) << what;
        EXPECT_NE(what.find("truncated"), std::string::npos) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
    dir.write("text.gguf", "not a model at all");
    EXPECT_THROW(read_gguf_decoder_shape(dir.path() / "text.gguf"), UserError);
}

}  // namespace
}  // namespace inferbench::models
