// The converted-model cache: keys that change with the source's bytes (its external data too) and the
// settings, entries used only when their key matches.
#include "models/converted_model_cache.hpp"

#include <filesystem>
#include <fstream>
#include <random>

#include <gtest/gtest.h>

namespace inferbench::models {
namespace {

namespace fs = std::filesystem;

class ConvertedModelCacheTest : public ::testing::Test {
protected:
    ConvertedModelCacheTest()
        : dir_(fs::temp_directory_path() / ("inferbench-converted-" + std::to_string(std::random_device{}()))) {
        fs::create_directories(dir_);
    }
    ~ConvertedModelCacheTest() override {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    void write(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }
    fs::path dir_;
};

TEST_F(ConvertedModelCacheTest, TheSourceHashFollowsTheModelAndItsExternalData) {
    write(dir_ / "m.onnx", "graph");
    const std::string alone = source_model_hash(dir_ / "m.onnx");
    write(dir_ / "m.onnx.data", "weights 1");
    const std::string with_data = source_model_hash(dir_ / "m.onnx");
    EXPECT_NE(alone, with_data);
    write(dir_ / "m.onnx.data", "weights 2");
    EXPECT_NE(source_model_hash(dir_ / "m.onnx"), with_data);
    write(dir_ / "other.onnx.data", "not this model's");
    EXPECT_EQ(source_model_hash(dir_ / "m.onnx").size(), 16U);
}

TEST_F(ConvertedModelCacheTest, AnEntryIsUsedOnlyWhenItsKeyMatches) {
    const ConvertedModelKey key{"0123456789abcdef", 42, "int8", "method=minmax"};
    const auto paths = converted_model_paths(dir_ / "cache", dir_ / "resnet50.onnx", key);
    EXPECT_EQ(paths.model.filename().string().rfind("resnet50.int8.", 0), 0U);
    EXPECT_FALSE(cached_model_figures(paths, key));
    write_cached_model(paths, key, "model bytes", "int8_output_cosine 0.99 ratio\n");
    EXPECT_EQ(cached_model_figures(paths, key).value_or(""), "int8_output_cosine 0.99 ratio\n");

    ConvertedModelKey other = key;
    other.settings = "method=entropy";
    EXPECT_NE(converted_model_paths(dir_ / "cache", dir_ / "resnet50.onnx", other).model, paths.model);
    write(paths.key, to_text(other));  // a key that no longer matches: the entry is stale
    EXPECT_FALSE(cached_model_figures(paths, key));
}

TEST_F(ConvertedModelCacheTest, LivesUnderTheModelCache) {
    EXPECT_EQ(converted_model_dir("/cache/models"), fs::path("/cache/models/converted"));
    EXPECT_FALSE(converted_model_dir("").empty());
}

}  // namespace
}  // namespace inferbench::models
