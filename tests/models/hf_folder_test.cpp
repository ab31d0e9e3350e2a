#include "models/hf_folder.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/temp_dir.hpp"
#include "models/decoder_models.hpp"
#include "models/decoder_weights.hpp"
#include "models/onnx_fp16.hpp"

namespace inferbench::models {
namespace {

namespace fs = std::filesystem;

const DecoderShape& tiny() { return find_decoder_model("llama-tiny")->shape; }

// A safetensors file read as the format's documentation describes it, independently of the writer.
struct Safetensors {
    nlohmann::json header;
    std::string data;  // the bytes after the header
};

Safetensors read_safetensors(const fs::path& file) {
    const std::string bytes = read_regular_file(file);
    std::uint64_t length = 0;
    for (std::size_t i = 0; i < 8; ++i) length |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
    return {nlohmann::json::parse(bytes.substr(8, length)), bytes.substr(8 + length)};
}

std::vector<float> expected_values(const std::string& name, std::uint64_t seed) {
    for (const DecoderTensor& t : decoder_tensors(tiny())) {
        if (t.name != name) continue;
        std::vector<float> values(static_cast<std::size_t>(t.element_count()));
        fill_decoder_tensor(t, seed, values);
        return values;
    }
    return {};
}

TEST(HfFolder, WritesTheConfigThatReadsBackAsTheShape) {
    const TempDir tmp("hf-folder-test");
    const fs::path dir = tmp.path() / "llama-tiny-s7-hf";
    write_llama_hf_folder(tiny(), 7, Precision::fp32, dir);
    EXPECT_EQ(read_hf_decoder_shape(dir), tiny());
    const auto config = nlohmann::json::parse(read_regular_file(dir / "config.json"));
    EXPECT_EQ(config["architectures"][0], "LlamaForCausalLM");
    EXPECT_EQ(config["torch_dtype"], "float32");
    EXPECT_TRUE(config["rope_scaling"].is_null());
    EXPECT_TRUE(config["eos_token_id"].is_null());
    EXPECT_EQ(config["tie_word_embeddings"], tiny().tied_embeddings);
    // Nothing but the folder is left beside it (the staging folder went with the rename).
    EXPECT_EQ(std::distance(fs::directory_iterator(tmp.path()), fs::directory_iterator()), 1);
}

TEST(HfFolder, SafetensorsHoldsEveryTensorContiguouslyWithTheSeededValues) {
    const TempDir tmp("hf-folder-test");
    write_llama_hf_folder(tiny(), 7, Precision::fp32, tmp.path() / "m");
    const Safetensors file = read_safetensors(tmp.path() / "m" / "model.safetensors");
    std::uint64_t end = 0;
    for (const DecoderTensor& t : decoder_tensors(tiny())) {
        const auto& entry = file.header.at(t.name);
        EXPECT_EQ(entry["dtype"], "F32");
        EXPECT_EQ(entry["shape"].get<std::vector<std::int64_t>>(), t.shape);
        EXPECT_EQ(entry["data_offsets"][0].get<std::uint64_t>(), end) << t.name;
        end = entry["data_offsets"][1].get<std::uint64_t>();
    }
    EXPECT_EQ(end, file.data.size());
    EXPECT_EQ(file.header.contains("lm_head.weight"), !tiny().tied_embeddings);
    const auto& q = file.header.at("model.layers.2.self_attn.q_proj.weight");
    const std::vector<float> expected = expected_values("model.layers.2.self_attn.q_proj.weight", 7);
    std::vector<float> stored(expected.size());
    std::memcpy(stored.data(), file.data.data() + q["data_offsets"][0].get<std::size_t>(), stored.size() * 4);
    EXPECT_EQ(stored, expected);
}

TEST(HfFolder, TiedEmbeddingsHaveNoHead) {
    const TempDir tmp("hf-folder-test");
    DecoderShape tied = tiny();
    tied.tied_embeddings = true;
    write_llama_hf_folder(tied, 7, Precision::fp32, tmp.path() / "tied");
    EXPECT_FALSE(read_safetensors(tmp.path() / "tied" / "model.safetensors").header.contains("lm_head.weight"));
    EXPECT_EQ(read_hf_decoder_shape(tmp.path() / "tied"), tied);
}

TEST(HfFolder, HalfPrecisionsStoreRoundedBits) {
    const TempDir tmp("hf-folder-test");
    write_llama_hf_folder(tiny(), 3, Precision::bf16, tmp.path() / "bf16");
    write_llama_hf_folder(tiny(), 3, Precision::fp16, tmp.path() / "fp16");
    const std::vector<float> expected = expected_values("model.norm.weight", 3);
    for (const auto& [name, dtype] : {std::pair{"bf16", "BF16"}, std::pair{"fp16", "F16"}}) {
        const Safetensors file = read_safetensors(tmp.path() / name / "model.safetensors");
        const auto& entry = file.header.at("model.norm.weight");
        EXPECT_EQ(entry["dtype"], dtype);
        const auto begin = entry["data_offsets"][0].get<std::size_t>();
        EXPECT_EQ(entry["data_offsets"][1].get<std::size_t>() - begin, expected.size() * 2);
        std::uint16_t first = 0;
        std::memcpy(&first, file.data.data() + begin, 2);
        EXPECT_EQ(first, std::string(name) == "bf16" ? to_bf16(expected[0]) : onnx::to_fp16_clamped(expected[0]));
    }
    EXPECT_EQ(nlohmann::json::parse(read_regular_file(tmp.path() / "bf16" / "config.json"))["torch_dtype"], "bfloat16");
}

TEST(HfFolder, Bf16RoundsToNearestEven) {
    EXPECT_EQ(to_bf16(1.0F), 0x3F80);
    EXPECT_EQ(to_bf16(std::bit_cast<float>(0x3F808000U)), 0x3F80);  // a tie, to the even 0x3F80
    EXPECT_EQ(to_bf16(std::bit_cast<float>(0x3F818000U)), 0x3F82);  // a tie, to the even 0x3F82
    EXPECT_EQ(to_bf16(std::bit_cast<float>(0x3F808001U)), 0x3F81);
    EXPECT_EQ(to_bf16(-2.0F), 0xC000);
}

TEST(HfFolder, RefusesAnExistingFolderAndOtherPrecisions) {
    const TempDir tmp("hf-folder-test");
    fs::create_directory(tmp.path() / "taken");
    EXPECT_THROW(write_llama_hf_folder(tiny(), 1, Precision::fp32, tmp.path() / "taken"), EnvironmentError);
    EXPECT_THROW(write_llama_hf_folder(tiny(), 1, Precision::int8, tmp.path() / "q"), UserError);
    EXPECT_FALSE(fs::exists(tmp.path() / "q"));
}

std::string error_of(std::string_view json) {
    try {
        parse_llama_hf_config(json, "/m/config.json");
    } catch (const UserError& e) {
        return e.what();
    }
    return "";
}

TEST(HfFolder, ConfigErrorsNameTheFileAndTheKey) {
    EXPECT_EQ(error_of(R"({"model_type": "bert"})"),
              "/m/config.json: key \"model_type\" is \"bert\", not \"llama\": only Llama-style decoders "
              "(LlamaForCausalLM) are supported");
    EXPECT_EQ(error_of(R"({"model_type": "llama", "num_hidden_layers": 2})"),
              "/m/config.json: key \"hidden_size\" is missing; a Llama-style decoder's config.json names it");
    EXPECT_EQ(error_of(R"({"model_type": "llama", "num_hidden_layers": "two"})"),
              "/m/config.json: key \"num_hidden_layers\" is \"two\", not a whole number");
    EXPECT_EQ(error_of("[1"), "/m/config.json: not a JSON object; a Hugging Face model folder's config.json is one");
    EXPECT_EQ(error_of(R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
                          "num_key_value_heads": 3, "intermediate_size": 8, "vocab_size": 10,
                          "max_position_embeddings": 16})"),
              "/m/config.json: describes a decoder with query heads that are not a multiple of the key/value heads");
}

TEST(HfFolder, ConfigDefaultsFollowTransformers) {
    const DecoderShape s = parse_llama_hf_config(
        R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
            "intermediate_size": 128, "vocab_size": 100, "max_position_embeddings": 256,
            "rope_scaling": {"rope_type": "llama3", "factor": 8.0}})",
        "config.json");
    EXPECT_EQ(s.kv_heads, 4);
    EXPECT_EQ(s.head_dim, 16);
    EXPECT_FALSE(s.tied_embeddings);
    EXPECT_DOUBLE_EQ(s.rope_theta, 10000.0);
    EXPECT_DOUBLE_EQ(s.rms_eps, 1e-6);
}

}  // namespace
}  // namespace inferbench::models
