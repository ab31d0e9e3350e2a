#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "models/weight_generator.hpp"
#include "models/zoo.hpp"
#include "models/zoo_builders.hpp"

namespace inferbench::models {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Compares without gtest's diff, which is quadratic in memory on multi-megabyte strings.
::testing::AssertionResult same_bytes(const std::string& actual, const std::string& expected) {
    if (actual == expected) return ::testing::AssertionSuccess();
    const auto mismatch = std::ranges::mismatch(actual, expected);
    return ::testing::AssertionFailure() << "sizes " << actual.size() << " and " << expected.size()
                                         << ", first difference at byte " << (mismatch.in1 - actual.begin());
}

std::vector<std::string> directory_listing(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

class ZooExport : public ::testing::Test {
protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        dir_ = fs::temp_directory_path() /
               ("inferbench_models_" + std::to_string(::getpid()) + "_" + info->name());
        fs::remove_all(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }

    fs::path dir_;
};

TEST(Zoo, ListsTheModels) {
    EXPECT_EQ(zoo_names(),
              (std::vector<std::string>{"resnet50", "mobilenet", "mobilenet-v2", "ssd-mobilenet", "ssd-resnet34",
                                        "3d-unet", "bert", "bert-base", "yolov3", "yolov3-608", "yolov5s",
                                        "yolov5m", "yolov5l", "yolov5x", "swin-t", "swin-s", "swin-b", "swin-l",
                                        "null"}));
    ASSERT_NE(find_zoo_model("resnet50"), nullptr);
    EXPECT_EQ(find_zoo_model("resnet50")->name, "resnet50");
    EXPECT_FALSE(find_zoo_model("mobilenet")->source.empty());
    EXPECT_EQ(find_zoo_model("null")->parameters, 0);
    EXPECT_EQ(find_zoo_model("resnet"), nullptr);
    EXPECT_EQ(find_zoo_model(""), nullptr);
}

// Convention: trainable parameters (weights, biases, BN gamma/beta), not BN running statistics;
// torchvision's resnet50 has 25,557,032 and TF-slim's MobileNet v1 1.0 has 4,231,976.
TEST(Zoo, ParameterCountsMatchTheReferences) {
    const GraphBuilder resnet = build_resnet50(0);
    EXPECT_EQ(resnet.parameter_count(), 25'557'032);
    EXPECT_EQ(find_zoo_model("resnet50")->parameters, resnet.parameter_count());

    const GraphBuilder mobilenet = build_mobilenet(0);
    EXPECT_EQ(mobilenet.parameter_count(), 4'231'976);
    EXPECT_EQ(find_zoo_model("mobilenet")->parameters, mobilenet.parameter_count());
}

TEST(Zoo, RunningStatisticsAreTheOnlyOtherInitializers) {
    const auto non_parameters = [](const GraphBuilder& g) {
        std::int64_t total = 0;
        for (const auto& init : g.initializers()) total += static_cast<std::int64_t>(init.data.size());
        return total - g.parameter_count();
    };
    EXPECT_EQ(non_parameters(build_resnet50(0)), 2 * 26'560);       // mean + var of 26,560 BN channels
    EXPECT_EQ(non_parameters(build_mobilenet(0)), 2 * 10'944 + 2);  // + Clip's two bounds
}

// Pins the exact bytes: if this fails, the generator's output changed, so bump
// kGeneratorVersion in zoo.cpp (old caches would otherwise be reused) and update the hash.
TEST(Zoo, OutputBytesArePinned) {
    EXPECT_EQ(fnv1a64(build_zoo_model("mobilenet", 0).serialize()), 0xD595633B7F862CA4ULL);
}

TEST_F(ZooExport, WritesTheModelWithNameVersionAndSeedInTheFileName) {
    const fs::path path = export_onnx("mobilenet", dir_, 42);
    EXPECT_EQ(path.parent_path(), dir_);
    EXPECT_EQ(path.filename(), "mobilenet-g1-s42.onnx");
    ASSERT_TRUE(fs::is_regular_file(path));
    EXPECT_GT(fs::file_size(path), 4'231'976U * 4U);
    EXPECT_TRUE(same_bytes(read_file(path), build_zoo_model("mobilenet", 42).serialize()));
}

TEST_F(ZooExport, SecondExportReusesTheCachedFile) {
    const fs::path path = export_onnx("mobilenet", dir_ / "nested" / "cache", 1);
    struct stat before {};
    ASSERT_EQ(::stat(path.c_str(), &before), 0);
    const auto old_time = fs::file_time_type::clock::now() - std::chrono::hours(24);
    fs::last_write_time(path, old_time);

    EXPECT_EQ(export_onnx("mobilenet", dir_ / "nested" / "cache", 1), path);
    struct stat after {};
    ASSERT_EQ(::stat(path.c_str(), &after), 0);
    EXPECT_EQ(after.st_ino, before.st_ino);
    EXPECT_EQ(fs::last_write_time(path), old_time);
}

TEST_F(ZooExport, SameSeedSameBytesOtherSeedOtherBytes) {
    const std::string a = read_file(export_onnx("mobilenet", dir_ / "a", 7));
    const std::string b = read_file(export_onnx("mobilenet", dir_ / "b", 7));
    const std::string c = read_file(export_onnx("mobilenet", dir_ / "a", 8));
    EXPECT_TRUE(same_bytes(a, b));
    EXPECT_EQ(a.size(), c.size());  // same structure, different weights
    EXPECT_FALSE(a == c);
}

TEST_F(ZooExport, ExportsResNet50) {
    const fs::path path = export_onnx("resnet50", dir_, 0);
    EXPECT_EQ(path.filename(), "resnet50-g1-s0.onnx");
    EXPECT_EQ(fs::file_size(path), build_zoo_model("resnet50", 0).serialize().size());
    EXPECT_EQ(directory_listing(dir_), std::vector<std::string>{"resnet50-g1-s0.onnx"});
}

TEST_F(ZooExport, LeavesNoTempFilesAndCleansUpOldOnes) {
    fs::create_directories(dir_);
    // What exports killed mid-write leave behind: partial hidden temp files, never the name. An
    // hour-old one is stale; a recent one may belong to an export still running elsewhere.
    std::ofstream(dir_ / ".mobilenet-g1-s3.onnx.tmp-1-0") << "partial";
    std::ofstream(dir_ / ".mobilenet-g1-s3.onnx.tmp-2-0") << "partial";
    fs::last_write_time(dir_ / ".mobilenet-g1-s3.onnx.tmp-2-0",
                        fs::file_time_type::clock::now() - std::chrono::hours(2));
    const fs::path path = export_onnx("mobilenet", dir_, 3);
    EXPECT_TRUE(same_bytes(read_file(path), build_zoo_model("mobilenet", 3).serialize()));
    EXPECT_EQ(directory_listing(dir_),
              (std::vector<std::string>{".mobilenet-g1-s3.onnx.tmp-1-0", "mobilenet-g1-s3.onnx"}));
}

TEST_F(ZooExport, ConcurrentExportsAgreeAndLeaveOneFile) {
    std::vector<fs::path> paths(4);
    std::vector<std::thread> threads;
    for (auto& p : paths) {
        threads.emplace_back([&p, this] { p = export_onnx("mobilenet", dir_, 5); });
    }
    for (auto& t : threads) t.join();
    for (const auto& p : paths) EXPECT_EQ(p, paths.front());
    EXPECT_TRUE(same_bytes(read_file(paths.front()), build_zoo_model("mobilenet", 5).serialize()));
    EXPECT_EQ(directory_listing(dir_), std::vector<std::string>{"mobilenet-g1-s5.onnx"});
}

TEST_F(ZooExport, UnknownNameIsAUserErrorListingTheValidNames) {
    try {
        export_onnx("resnet51", dir_, 0);
        FAIL() << "expected UserError";
    } catch (const UserError& e) {
        EXPECT_THAT(e.what(), HasSubstr("resnet51"));
        EXPECT_THAT(e.what(),
                    HasSubstr("resnet50, mobilenet, mobilenet-v2, ssd-mobilenet, ssd-resnet34, 3d-unet, bert, "
                              "bert-base, yolov3, yolov3-608, yolov5s, yolov5m, yolov5l, yolov5x, swin-t, swin-s, "
                              "swin-b, swin-l, null"));
    }
    EXPECT_FALSE(fs::exists(dir_));
}

TEST_F(ZooExport, NullHasNoFile) { EXPECT_THROW(export_onnx("null", dir_, 0), UserError); }

TEST_F(ZooExport, UnusableCacheDirectoryIsAnEnvironmentError) {
    fs::create_directories(dir_);
    std::ofstream(dir_ / "a_file") << "x";
    EXPECT_THROW(export_onnx("mobilenet", dir_ / "a_file" / "cache", 0), EnvironmentError);
}

}  // namespace
}  // namespace inferbench::models
