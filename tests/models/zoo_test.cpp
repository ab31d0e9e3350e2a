#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/fnv1a.hpp"
#include "models/onnx_reader.hpp"
#include "models/shape_inference.hpp"
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

// --batch N: N replaces the symbolic batch on every input and output (the zoo writes no
// value_info), the file name says so, and shape inference needs no --batch any more.
TEST_F(ZooExport, FixedBatchIsOnEveryInputAndOutputAndShapesStillInfer) {
    const fs::path path = export_onnx("mobilenet", dir_, 42, 4);
    EXPECT_EQ(path.filename(), "mobilenet-g1-s42-b4.onnx");
    const onnx::OnnxModel model = onnx::read_onnx_file(path);
    for (const auto* infos : {&model.graph.inputs, &model.graph.outputs, &model.graph.value_info}) {
        for (const auto& info : *infos) {
            for (const auto& dim : info.dims) EXPECT_TRUE(std::holds_alternative<std::int64_t>(dim)) << info.name;
        }
    }
    ASSERT_EQ(model.graph.inputs.size(), 1U);
    EXPECT_EQ(model.graph.inputs[0].dims, (std::vector<onnx::OnnxDimension>{std::int64_t{4}, std::int64_t{3},
                                                                            std::int64_t{224}, std::int64_t{224}}));
    const ShapeInference shapes = infer_shapes(model);
    EXPECT_TRUE(shapes.warnings.empty()) << shapes.warnings.front();
    EXPECT_TRUE(std::ranges::all_of(shapes.node_inferred, [](bool inferred) { return inferred; }));
    ASSERT_NE(shapes.find("probabilities"), nullptr);
    EXPECT_EQ(shapes.find("probabilities")->dims, (std::vector<std::int64_t>{4, 1000}));
    EXPECT_THROW(export_onnx("mobilenet", dir_, 42, -1), UserError);
}

// Every input (BERT has three) and output.
TEST(ZooOptions, BatchBindsEveryInputAndOutput) {
    GraphBuilder g = build_bert({.layers = 1,
                                 .hidden = 8,
                                 .heads = 2,
                                 .intermediate = 16,
                                 .vocab = 10,
                                 .max_positions = 16,
                                 .sequence_length = 4},
                                0);
    EXPECT_EQ(g.bind_dimension(kBatchDimName, 3), 5U);
    for (const auto* infos : {&g.inputs(), &g.outputs()}) {
        for (const auto& info : *infos) {
            ASSERT_FALSE(info.dims.empty());
            EXPECT_TRUE(info.dims[0].param.empty()) << info.name;
            EXPECT_EQ(info.dims[0].value, 3) << info.name;
        }
    }
    EXPECT_EQ(g.bind_dimension(kBatchDimName, 3), 0U);  // nothing symbolic left
}

// The architecture at another input size: the same nodes and the same weights (names, shapes,
// values); only the declared input and output shapes (and shape constants) follow the size, and
// shape inference agrees with the declared outputs.
TEST(ZooOptions, ReducedSizesKeepTheArchitecture) {
    const std::vector<std::pair<std::string, ZooOptions>> cases = {{"resnet50", {.image_size = 64}},
                                                                   {"ssd-mobilenet", {.image_size = 128}},
                                                                   {"ssd-resnet34", {.image_size = 400}},
                                                                   {"3d-unet", {.image_size = 32}},
                                                                   {"yolov5s", {.image_size = 96}}};
    for (const auto& [name, options] : cases) {
        const GraphBuilder published = build_zoo_model(name, 1);
        const GraphBuilder reduced = build_zoo_model(name, 1, options);
        ASSERT_EQ(reduced.nodes().size(), published.nodes().size()) << name;
        for (std::size_t i = 0; i < reduced.nodes().size(); ++i) {
            EXPECT_EQ(reduced.nodes()[i].name, published.nodes()[i].name) << name;
            EXPECT_EQ(reduced.nodes()[i].op_type, published.nodes()[i].op_type) << name;
        }
        ASSERT_EQ(reduced.initializers().size(), published.initializers().size()) << name;
        for (std::size_t i = 0; i < reduced.initializers().size(); ++i) {
            const auto& r = reduced.initializers()[i];
            const auto& p = published.initializers()[i];
            EXPECT_EQ(r.name, p.name) << name;
            EXPECT_EQ(r.dims, p.dims) << name << " " << r.name;
            EXPECT_TRUE(r.data == p.data) << name << " " << r.name;
        }
        const std::string bytes = reduced.serialize();
        const auto model = onnx::read_onnx(std::as_bytes(std::span(bytes.data(), bytes.size())), name);
        const ShapeInference shapes = infer_shapes(model, {.batch = 2, .input_shapes = {}});
        for (const auto& output : reduced.outputs()) {
            std::vector<std::int64_t> declared{2};
            for (std::size_t d = 1; d < output.dims.size(); ++d) declared.push_back(output.dims[d].value);
            ASSERT_NE(shapes.find(output.name), nullptr) << name << " " << output.name;
            EXPECT_EQ(shapes.find(output.name)->dims, declared) << name << " " << output.name;
        }
    }
}

// Sizes an architecture cannot take, and options it has no use for, fail before any weight is made.
TEST(ZooOptions, ImpossibleSizesAreLogicErrors) {
    EXPECT_THAT([] { build_zoo_model("ssd-resnet34", 0, {.image_size = 384}); },
                ::testing::ThrowsMessage<std::logic_error>(HasSubstr("385")));
    EXPECT_THROW(build_zoo_model("3d-unet", 0, {.image_size = 48}), std::logic_error);
    EXPECT_THROW(build_zoo_model("yolov5s", 0, {.image_size = 100}), std::logic_error);
    EXPECT_THROW(build_zoo_model("swin-t", 0, {.image_size = 112}), std::logic_error);
    EXPECT_THROW(build_zoo_model("resnet50", 0, {.image_size = 16}), std::logic_error);
    EXPECT_THROW(build_zoo_model("bert", 0, {.sequence_length = 513}), std::logic_error);
    EXPECT_THAT([] { build_zoo_model("bert", 0, {.image_size = 64}); },
                ::testing::ThrowsMessage<std::logic_error>(HasSubstr("sequence length, not an image size")));
    EXPECT_THAT([] { build_zoo_model("mobilenet", 0, {.sequence_length = 8}); },
                ::testing::ThrowsMessage<std::logic_error>(HasSubstr("image size, not a sequence length")));
}

// A model built at another size says so, so nobody takes it for the published one.
TEST(ZooOptions, ReducedBuildsSayTheirSize) {
    const std::string bytes = build_zoo_model("mobilenet", 0, {.image_size = 96}).serialize();
    const auto model = onnx::read_onnx(std::as_bytes(std::span(bytes.data(), bytes.size())), "mobilenet");
    EXPECT_EQ(model.metadata.at("inferbench.image_size"), "96");
    EXPECT_THAT(model.doc_string, HasSubstr("Built at input size 96, not the published one."));
}

}  // namespace
}  // namespace inferbench::models
