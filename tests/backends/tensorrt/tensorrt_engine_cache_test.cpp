// The engine cache: the key, the file names, hashing, and reuse only when the key matches exactly.
#include "backends/tensorrt/tensorrt_engine_cache.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "common/scratch_dir.hpp"
#include "core/file_hash.hpp"

namespace inferbench {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

EngineKey sample_key() {
    EngineKey key;
    key.model_hash = "0123456789abcdef";
    key.model_size_bytes = 1234;
    key.precision = Precision::fp16;
    key.batch_size = 8;
    key.gpu_name = "NVIDIA H200";
    key.compute_capability = {9, 0};
    key.tensorrt_version = "10.3.0";
    key.build_settings = build_settings_text(TensorRtOptions{}, BuildFlags{BuildFlag::fp16}, "");
    return key;
}

std::span<const char> bytes_of(const std::string& text) { return {text.data(), text.size()}; }

TEST(TensorRtEngineCache, KeyTextNamesEveryField) {
    const std::string text = to_text(sample_key());
    for (const char* part : {"model_hash=0123456789abcdef", "model_size_bytes=1234", "precision=fp16", "batch_size=8",
                             "gpu=NVIDIA H200", "compute_capability=9.0", "tensorrt_version=10.3.0",
                             "flags=fp16 workspace_mb=0 builder_optimization_level=3"}) {
        EXPECT_THAT(text, HasSubstr(part));
    }
}

TEST(TensorRtEngineCache, EveryFieldChangesTheKeyAndTheFileName) {
    const std::vector<std::function<void(EngineKey&)>> changes = {
        [](EngineKey& k) { k.model_hash = "fedcba9876543210"; },
        [](EngineKey& k) { k.model_size_bytes = 1235; },
        [](EngineKey& k) { k.precision = Precision::int8; },
        [](EngineKey& k) { k.batch_size = 16; },
        [](EngineKey& k) { k.gpu_name = "NVIDIA H100 80GB HBM3"; },
        [](EngineKey& k) {
            k.compute_capability = {8, 9};
        },
        [](EngineKey& k) { k.tensorrt_version = "10.3.1"; },
        [](EngineKey& k) {
            TensorRtOptions options;
            options.builder_optimization_level = 5;
            k.build_settings = build_settings_text(options, BuildFlags{BuildFlag::fp16}, "");
        },
    };
    std::set<std::string> texts{to_text(sample_key())};
    std::set<std::string> names{engine_cache_paths("/c", "m.onnx", sample_key()).engine.string()};
    for (const auto& change : changes) {
        EngineKey key = sample_key();
        change(key);
        texts.insert(to_text(key));
        names.insert(engine_cache_paths("/c", "m.onnx", key).engine.string());
    }
    EXPECT_EQ(texts.size(), changes.size() + 1);
    EXPECT_EQ(names.size(), changes.size() + 1);
}

TEST(TensorRtEngineCache, BuildSettingsNameWorkspaceLevelAndCalibration) {
    TensorRtOptions options;
    options.workspace_mb = 2048;
    options.builder_optimization_level = 1;
    EXPECT_EQ(build_settings_text(options, BuildFlags{BuildFlag::int8}, "random seed=7 batches=4"),
              "flags=int8 workspace_mb=2048 builder_optimization_level=1 calibration=[random seed=7 batches=4]");
}

TEST(TensorRtEngineCache, FileNamesAreReadableAndCarryADigest) {
    const EngineCachePaths paths = engine_cache_paths("/cache", "/models/ResNet 50.onnx", sample_key());
    EXPECT_EQ(paths.engine.parent_path(), "/cache");
    EXPECT_THAT(paths.engine.filename().string(),
                MatchesRegex("resnet-50\\.fp16\\.b8\\.nvidia-h200\\.sm90\\.trt10-3-0\\.[0-9a-f]{16}\\.engine"));
    EXPECT_EQ(paths.key.stem(), paths.engine.stem());
    EXPECT_EQ(paths.key.extension(), ".key");
    EXPECT_EQ(timing_cache_path("/cache", "NVIDIA H200", {9, 0}, "10.3.0"),
              "/cache/timing.nvidia-h200.sm90.trt10-3-0.cache");
}

// trtexec asks no CUDA API: its engines are keyed without a compute capability, and named without one.
TEST(TensorRtEngineCache, AnUnknownComputeCapabilityIsSaidAndLeftOutOfTheNames) {
    EngineKey key = sample_key();
    key.compute_capability = {};
    EXPECT_THAT(to_text(key), HasSubstr("compute_capability=unknown\n"));
    EXPECT_THAT(engine_cache_paths("/c", "m.onnx", key).engine.filename().string(),
                MatchesRegex("m\\.fp16\\.b8\\.nvidia-h200\\.trt10-3-0\\.[0-9a-f]{16}\\.engine"));
    EXPECT_EQ(timing_cache_path("/c", "NVIDIA H200", {}, "10.3.0"), "/c/timing.nvidia-h200.trt10-3-0.cache");
}

TEST(TensorRtEngineCache, CacheDirFallsBackToTheModelCache) {
    EXPECT_EQ(resolve_cache_dir("/mine", "/models"), "/mine");
    EXPECT_EQ(resolve_cache_dir("", "/home/u/.cache/inferbench/models"), "/home/u/.cache/inferbench/models/tensorrt");
    EXPECT_EQ(resolve_cache_dir("", "").filename(), "inferbench-tensorrt");
}

TEST(TensorRtEngineCache, SlugsAndHashes) {
    EXPECT_EQ(slug("NVIDIA H100 80GB HBM3"), "nvidia-h100-80gb-hbm3");
    EXPECT_EQ(slug("  Tesla T4 (PCIe)  "), "tesla-t4-pcie");
    EXPECT_EQ(slug("***"), "unnamed");
    EXPECT_EQ(hex64(0xcbf29ce484222325ULL), "cbf29ce484222325");
    EXPECT_EQ(hex64(42), "000000000000002a");
}

TEST(TensorRtEngineCache, HashFileHashesTheContentsAcrossChunks) {
    const testing::ScratchDir dir;
    std::string big(3 * (1 << 20) + 17, 'x');
    big[12345] = 'y';
    dir.write("model.onnx", big);
    EXPECT_EQ(hash_file(dir.file("model.onnx")), hex64(hash_bytes(std::as_bytes(std::span(big)))));
    EXPECT_THROW(hash_file(dir.file("absent.onnx")), std::runtime_error);
}

TEST(TensorRtEngineCache, EngineIsReusedOnlyForTheSameKey) {
    const testing::ScratchDir dir;
    const EngineCachePaths paths = engine_cache_paths(dir.path() / "engines", "m.onnx", sample_key());
    EXPECT_FALSE(read_cached_engine(paths, sample_key()));
    const std::string engine = std::string("engine\0bytes", 12);
    write_cached_engine(paths, sample_key(), bytes_of(engine));
    const auto cached = read_cached_engine(paths, sample_key());
    ASSERT_TRUE(cached);
    EXPECT_EQ(std::string(cached->data(), cached->size()), engine);

    EngineKey other = sample_key();
    other.tensorrt_version = "10.4.0";
    EXPECT_FALSE(read_cached_engine(paths, other)) << "a key that differs in any field is a miss";
    remove_cached_engine(paths);
    EXPECT_FALSE(std::filesystem::exists(paths.engine));
    EXPECT_FALSE(read_cached_engine(paths, sample_key()));
}

TEST(TensorRtEngineCache, AnEngineWithoutItsKeyIsNotUsed) {
    const testing::ScratchDir dir;
    const EngineCachePaths paths = engine_cache_paths(dir.path(), "m.onnx", sample_key());
    write_file_atomically(paths.engine, bytes_of("half-written"));
    EXPECT_FALSE(read_cached_engine(paths, sample_key()));
    write_file_atomically(paths.key, bytes_of(to_text(sample_key()) + "tampered"));
    EXPECT_FALSE(read_cached_engine(paths, sample_key()));
    // An engine another program wrote, with its key written after it: now a hit.
    write_engine_key(paths, sample_key());
    EXPECT_TRUE(cached_engine_matches(paths, sample_key()));
    write_file_atomically(paths.engine, bytes_of(""));
    EXPECT_FALSE(cached_engine_matches(paths, sample_key())) << "an empty engine is no engine";
}

TEST(TensorRtEngineCache, AtomicWritesLeaveNoTemporaryFiles) {
    const testing::ScratchDir dir;
    write_file_atomically(dir.path() / "sub" / "file.bin", bytes_of("one"));
    write_file_atomically(dir.path() / "sub" / "file.bin", bytes_of("two"));
    const auto read = read_file(dir.path() / "sub" / "file.bin");
    ASSERT_TRUE(read);
    EXPECT_EQ(std::string(read->data(), read->size()), "two");
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path() / "sub"), {}), 1);
    EXPECT_FALSE(read_file(dir.path() / "absent"));
    EXPECT_THROW(write_file_atomically("/proc/inferbench-cannot-write-here/file", bytes_of("x")), std::runtime_error);
}

}  // namespace
}  // namespace inferbench
