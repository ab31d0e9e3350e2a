// `inferbench models list|export|inspect` through the real CLI.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

#include "e2e/cli_harness.hpp"

namespace inferbench {
namespace {

using ScratchDir = testing::CliScratch;

TEST(ModelsCli, ListsTheZooLikeListModels) {
    ScratchDir dir;
    const auto r = dir.run("models list --format csv");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, dir.run("list models --format csv").out);
    EXPECT_NE(r.out.find("resnet50,"), std::string::npos) << r.out;
}

// MobileNet v1: Howard et al. 2017 (arXiv:1704.04861), 569 million mult-adds at 224x224.
TEST(ModelsCli, ExportsAndInspectsAZooModel) {
    ScratchDir dir;
    const auto exported = dir.run("models export mobilenet --out m.onnx");
    ASSERT_EQ(exported.exit_code, 0) << exported.err;
    EXPECT_EQ(exported.out, "m.onnx\n");
    const auto r = dir.run("models inspect m.onnx --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto doc = nlohmann::json::parse(r.out);
    EXPECT_EQ(doc.at("schema_version"), 1);
    const double macs = doc.at("totals").at("macs").get<double>();
    EXPECT_LT(std::abs(macs - 569e6) / 569e6, 0.02) << macs;
    EXPECT_EQ(doc.at("totals").at("flops").get<double>() > 2 * macs, true);
    EXPECT_GT(doc.at("file_bytes").get<std::int64_t>(), 16'000'000);
    EXPECT_EQ(doc.at("histogram").at("Conv"), 27);
    EXPECT_NE(doc.at("flags").dump().find("depthwise: 13"), std::string::npos) << doc.at("flags");
    EXPECT_NE(doc.at("warnings").dump().find("--batch"), std::string::npos);  // symbolic batch taken as 1
    EXPECT_EQ(doc.at("nodes").at(0).at("output_shapes").at(0), nlohmann::json({1, 32, 112, 112}));

    const auto batch4 = dir.run("models inspect m.onnx --batch 4 --json");
    ASSERT_EQ(batch4.exit_code, 0) << batch4.err;
    EXPECT_DOUBLE_EQ(nlohmann::json::parse(batch4.out).at("totals").at("macs").get<double>(), 4 * macs);
    const auto text = dir.run("models inspect m.onnx --batch 1");
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("conventions: 1 MAC = 2 FLOPs"), std::string::npos);
    EXPECT_NE(text.out.find("GMACs"), std::string::npos);
    EXPECT_EQ(dir.run("models inspect m.onnx --csv").out.substr(0, 24), "name,op,output_shapes,pa");
}

TEST(ModelsCli, BadFilesGiveOneClearLineAndExitCodeTwo) {
    ScratchDir dir;
    ASSERT_EQ(dir.run("models export mobilenet --out m.onnx").exit_code, 0);
    dir.write("truncated.onnx", testing::read_file(dir.file("m.onnx")).substr(0, 5000));
    dir.write("text.onnx", "this is not a model\n");
    for (const char* file : {"truncated.onnx", "text.onnx", "missing.onnx"}) {
        const auto r = dir.run(std::string("models inspect ") + file);
        EXPECT_EQ(r.exit_code, 2) << file << ": " << r.err;
        EXPECT_EQ(r.err.rfind(std::string("inferbench: error: ") + file, 0), 0u) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        EXPECT_TRUE(r.out.empty());
    }
    const auto bad_shape = dir.run("models inspect m.onnx --shape input=1,,3");
    EXPECT_EQ(bad_shape.exit_code, 2);
    EXPECT_NE(bad_shape.err.find("--shape input=1,,3"), std::string::npos) << bad_shape.err;
}

}  // namespace
}  // namespace inferbench
