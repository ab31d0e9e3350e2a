// `inferbench models list|export|inspect` through the real CLI.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

#include "e2e/cli_harness.hpp"
#include "models/onnx_builder.hpp"
#include "store/results_store.hpp"

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
    EXPECT_EQ(doc.at("schema_version"), 2);
    // One parameter count everywhere, the trainable one: `list models` says the same.
    EXPECT_EQ(doc.at("totals").at("parameters"), 4'231'976);
    EXPECT_EQ(doc.at("totals").at("batch_norm_statistics"), 21'888);
    EXPECT_NE(dir.run("list models --format csv").out.find("mobilenet,4231976,"), std::string::npos);
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

// A node the cost model cannot cost makes the totals a partial sum: exit 0, said on the first line.
TEST(ModelsCli, InspectSaysOnItsFirstLineThatTotalsAreALowerBound) {
    ScratchDir dir;
    models::GraphBuilder g("partial", 1);
    g.add_input("x", models::OnnxElemType::float32, {models::OnnxDim::fixed(2), models::OnnxDim::fixed(8)});
    g.add_node({"MysteryOp", "mystery", {"x"}, {"y"}, {}});
    g.add_node({"Relu", "after", {"y"}, {"z"}, {}});
    g.add_node({"Relu", "known", {"x"}, {"w"}, {}});
    g.add_output("z", models::OnnxElemType::float32, {models::OnnxDim::fixed(2), models::OnnxDim::fixed(8)});
    g.add_output("w", models::OnnxElemType::float32, {models::OnnxDim::fixed(2), models::OnnxDim::fixed(8)});
    dir.write("partial.onnx", g.serialize());
    const auto text = dir.run("models inspect partial.onnx");
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_EQ(text.out.substr(0, text.out.find('\n')),
              "inferbench: model cost not a total: 2 nodes not costed (FLOPs and bytes are lower bounds); 3 nodes in "
              "all");
    const auto json = dir.run("models inspect partial.onnx --json");
    ASSERT_EQ(json.exit_code, 0) << json.err;
    const auto doc = nlohmann::json::parse(json.out);
    EXPECT_EQ(doc.at("cost_bound"), "lower");
    EXPECT_EQ(doc.at("totals").at("unknown_nodes"), 2);
    EXPECT_EQ(doc.at("totals").at("flops"), 16);  // the one Relu costed
    const auto csv = dir.run("models inspect partial.onnx --csv");
    EXPECT_EQ(csv.out.substr(0, 8), "name,op,");  // the CSV stays one table; the line goes to stderr
    EXPECT_EQ(csv.err.rfind("inferbench: model cost not a total", 0), 0u) << csv.err;
    const auto complete = dir.run("models inspect resnet50");
    EXPECT_EQ(complete.out.find("not a total"), std::string::npos);
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

// --batch N: the file has N on every input and output, so the inspector needs no --batch (no
// warning) and ONNX Runtime runs it at that batch, and only at that batch.
TEST(ModelsCli, ExportsAFixedBatch) {
    ScratchDir dir;
    const auto exported = dir.run("models export mobilenet --batch 3 --out m3.onnx");
    ASSERT_EQ(exported.exit_code, 0) << exported.err;
    EXPECT_EQ(exported.out, "m3.onnx\n");
    EXPECT_TRUE(exported.err.empty()) << exported.err;
    const auto r = dir.run("models inspect m3.onnx --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto doc = nlohmann::json::parse(r.out);
    EXPECT_TRUE(doc.at("warnings").empty()) << doc.at("warnings");
    EXPECT_EQ(doc.at("nodes").at(0).at("output_shapes").at(0), nlohmann::json({3, 32, 112, 112}));
    EXPECT_EQ(doc.at("totals").at("unknown_nodes"), 0);
    EXPECT_LT(std::abs(doc.at("totals").at("macs").get<double>() / 3 - 569e6) / 569e6, 0.02);

    const auto bad = dir.run("models export mobilenet --batch 0 --out m0.onnx");
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find("--batch 0: expected 'dynamic' or a whole number >= 1"), std::string::npos) << bad.err;
#if INFERBENCH_HAVE_ONNXRUNTIME
    const std::string run =
        "run --model m3.onnx --backend onnxruntime --duration 100ms --warmup 0s "
        "--min-iterations 2 --db r.db --batch ";
    const auto at3 = dir.run(run + "3");
    EXPECT_EQ(at3.exit_code, 0) << at3.err;
    const auto at2 = dir.run(run + "2");
    EXPECT_EQ(at2.exit_code, 1) << at2.err;
    const auto benchmarks = store::ResultsStore::open(dir.file("r.db")).benchmarks();
    ASSERT_EQ(benchmarks.size(), 2U);
    EXPECT_EQ(benchmarks[0].status, BenchmarkStatus::ok) << benchmarks[0].reason;
    EXPECT_EQ(benchmarks[0].batch_size, 3);
    EXPECT_NE(benchmarks[1].reason.find("fixed batch size of 3"), std::string::npos) << benchmarks[1].reason;
#endif
}

#if INFERBENCH_HAVE_ONNXRUNTIME
// `models check` needs the torch module beside ONNX Runtime's; a build without LibTorch has none.
bool torch_usable(const ScratchDir& dir) {
    const auto list = nlohmann::json::parse(dir.run("list backends --json").out);
    return std::ranges::any_of(list.at("rows"), [](const auto& row) {
        return row.at("name") == "torch" && row.at("usable").template get<bool>();
    });
}

// The torch backend's outputs against ONNX Runtime's on the same seeded inputs: a zoo model at fp32
// and bf16, and a real PyTorch 2.11 dynamo export (weights in an external data file).
TEST(ModelsCli, ChecksOneBackendsOutputsAgainstAnother) {
    ScratchDir dir;
    if (!torch_usable(dir)) GTEST_SKIP() << "no usable torch backend in this build";
    const auto fp32 = dir.run("models check mobilenet");
    ASSERT_EQ(fp32.exit_code, 0) << fp32.err << fp32.out;
    EXPECT_NE(fp32.out.find("against onnxruntime"), std::string::npos) << fp32.out;
    EXPECT_NE(fp32.out.find("outputs agree"), std::string::npos) << fp32.out;
    EXPECT_EQ(fp32.out.find("says little"), std::string::npos) << fp32.out;  // softmax outputs: up to 1

    const auto bf16 = dir.run("models check mobilenet --precision bf16 --json");
    ASSERT_EQ(bf16.exit_code, 0) << bf16.err;
    const auto doc = nlohmann::json::parse(bf16.out);
    EXPECT_TRUE(doc.at("agree").get<bool>());
    const auto& row = doc.at("rows").at(0);
    EXPECT_EQ(row.at("dtype"), "bfloat16");
    EXPECT_EQ(row.at("shape"), "[1,1000]");
    // bf16 keeps 8 bits of mantissa: visibly off, within its tolerance.
    EXPECT_GT(row.at("relative_error").get<double>(), 1e-5);
    EXPECT_LT(row.at("relative_error").get<double>(), row.at("tolerance").get<double>());

    const auto strict = dir.run("models check mobilenet --precision bf16 --tolerance 1e-9");
    EXPECT_EQ(strict.exit_code, 1) << strict.err;
    EXPECT_NE(strict.out.find("outputs DIFFER"), std::string::npos) << strict.out;

    const std::string bert = std::string(INFERBENCH_SOURCE_DIR) + "/tests/data/exports/hf_bert_base.dynamo.onnx";
    const auto real = dir.run("models check " + bert + " --batch 2 --json");
    ASSERT_EQ(real.exit_code, 0) << real.err << real.out;
    const auto real_doc = nlohmann::json::parse(real.out);
    EXPECT_TRUE(real_doc.at("agree").get<bool>()) << real.out;
    EXPECT_EQ(real_doc.at("rows").at(0).at("shape").get<std::string>().substr(0, 3), "[2,");
    EXPECT_GT(real_doc.at("rows").at(0).at("reference_max").get<double>(), 1e-3);
    EXPECT_TRUE(real_doc.at("nearly_zero_outputs").empty());
}

// Outputs that are all nearly zero agree within any tolerance: the check says so instead of
// letting "agree" stand alone.
TEST(ModelsCli, CheckSaysWhenTheReferenceOutputsAreNearlyZero) {
    ScratchDir dir;
    if (!torch_usable(dir)) GTEST_SKIP() << "no usable torch backend in this build";
    models::GraphBuilder g("tiny", 1);
    g.add_input("x", models::OnnxElemType::float32, {models::OnnxDim::fixed(2), models::OnnxDim::fixed(8)});
    g.add_initializer({"scale", {}, {1e-6F}, false});
    g.add_node({"Mul", "shrink", {"x", "scale"}, {"y"}, {}});
    g.add_output("y", models::OnnxElemType::float32, {models::OnnxDim::fixed(2), models::OnnxDim::fixed(8)});
    dir.write("tiny.onnx", g.serialize());
    const auto text = dir.run("models check tiny.onnx --batch 2");
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("note: every reference value of y is below 0.001 in magnitude"), std::string::npos)
        << text.out;
    const auto json = nlohmann::json::parse(dir.run("models check tiny.onnx --batch 2 --json").out);
    EXPECT_EQ(json.at("nearly_zero_outputs"), nlohmann::json({"y"}));
    EXPECT_LE(json.at("rows").at(0).at("reference_max").get<double>(), 1e-6);
}

TEST(ModelsCli, CheckRejectsBadInputWithOneLine) {
    ScratchDir dir;
    const auto device = dir.run("models check mobilenet --device tpu");
    EXPECT_EQ(device.exit_code, 2);
    EXPECT_EQ(device.err, "inferbench: error: --device tpu: expected cpu or cuda:N\n");
    const auto option = dir.run("models check mobilenet --option threads");
    EXPECT_EQ(option.exit_code, 2);
    EXPECT_NE(option.err.find("--option threads: expected KEY=VALUE"), std::string::npos) << option.err;
    const auto unknown = dir.run("models check mobilenet --reference nosuch");
    EXPECT_EQ(unknown.exit_code, 2) << unknown.err;
    EXPECT_NE(unknown.err.find("reference side"), std::string::npos) << unknown.err;
}
#endif

// Every zoo model through the inspector, by name (built in memory as `models export` would write
// it: no file): parameters, MACs, FLOPs, bytes and intensity, every node's shapes known.
TEST(ModelsCli, InspectsEveryZooModelByName) {
    ScratchDir dir;
    const auto list = nlohmann::json::parse(dir.run("models list --json").out);
    int inspected = 0;
    for (const auto& row : list.at("rows")) {
        const std::string name = row.at("name");
        if (name == "null") continue;
        const auto r = dir.run("models inspect " + name + " --batch 1 --json");
        ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
        const auto doc = nlohmann::json::parse(r.out);
        const auto& t = doc.at("totals");
        EXPECT_TRUE(doc.at("warnings").empty()) << name << ": " << doc.at("warnings");
        EXPECT_EQ(t.at("unknown_nodes"), 0) << name;
        // Every initializer element: the trainable parameters plus BN running statistics and constants.
        const double parameters = t.at("parameters").get<double>();
        const double published = row.at("parameters").get<double>();
        EXPECT_GE(parameters, published) << name;
        EXPECT_LT(parameters, 1.05 * published) << name;
        const double macs = t.at("macs").get<double>();
        EXPECT_GT(macs, 1e8) << name;
        EXPECT_GT(t.at("flops").get<double>(), 2 * macs) << name;
        EXPECT_GT(t.at("bytes_read").get<double>(), 4 * published) << name;  // every weight read once at least
        EXPECT_GT(t.at("bytes_written").get<double>(), 0) << name;
        EXPECT_GT(t.at("intensity_flops_per_byte").get<double>(), 0) << name;
        EXPECT_GT(doc.at("file_bytes").get<double>(), 4 * published) << name;
        ++inspected;
    }
    EXPECT_EQ(inspected, 18);

    const auto text = dir.run("models inspect yolov5s");
    ASSERT_EQ(text.exit_code, 0) << text.err;
    for (const char* line : {"parameters", "GMACs", "GFLOPs", "bytes read", "bytes written", "intensity FLOP/B"}) {
        EXPECT_NE(text.out.find(line), std::string::npos) << line;
    }
    const auto null = dir.run("models inspect null");
    EXPECT_EQ(null.exit_code, 2);
    EXPECT_NE(null.err.find("null backend's empty workload"), std::string::npos) << null.err;
}

}  // namespace
}  // namespace inferbench
