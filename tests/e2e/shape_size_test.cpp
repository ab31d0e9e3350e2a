// Models whose input shapes make sizes beyond 64 bits, through the real CLI: `models inspect` and `run` say so in
// one line naming the input; no worker crashes, and the plan goes on.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "e2e/cli_harness.hpp"
#include "models/onnx_builder.hpp"
#include "store/results_store.hpp"

namespace inferbench {
namespace {

using ScratchDir = testing::CliScratch;

constexpr std::int64_t k2to62 = std::int64_t{1} << 62;
constexpr std::int64_t k2to31 = std::int64_t{1} << 31;

// Relu over input x of [N, dims...], as the zoo writes models.
std::string relu_model(const std::vector<std::int64_t>& dims) {
    models::GraphBuilder g("sizes", 1);
    std::vector<models::OnnxDim> shape = {models::OnnxDim::symbolic("N")};
    for (const auto d : dims) shape.push_back(models::OnnxDim::fixed(d));
    g.add_input("x", models::OnnxElemType::float32, shape);
    g.add_node({"Relu", "relu", {"x"}, {"y"}, {}});
    g.add_output("y", models::OnnxElemType::float32, shape);
    return g.serialize();
}

TEST(ShapeSizesCli, InspectSaysTheInputIsOutOfRange) {
    ScratchDir dir;
    dir.write("wraps.onnx", relu_model({k2to62 + 16}));
    dir.write("zero.onnx", relu_model({k2to31, k2to31}));
    const auto wraps = dir.run("models inspect wraps.onnx");
    EXPECT_EQ(wraps.exit_code, 2) << wraps.err;
    EXPECT_EQ(wraps.err,
              "inferbench: error: input 'x' has shape [1, 4611686018427387920]: 4611686018427387920 elements of 4 bytes "
              "are more than 274877906944 bytes; the shape in the file is out of range (inferbench feeds at most 256 GiB "
              "per tensor and per cell)\n");
    EXPECT_TRUE(wraps.out.empty()) << wraps.out;
    const auto zero = dir.run("models inspect zero.onnx --batch 4 --json");
    EXPECT_EQ(zero.exit_code, 2) << zero.err;
    EXPECT_EQ(zero.err.rfind("inferbench: error: input 'x' has shape [4, 2147483648, 2147483648]: its element count "
                             "overflows a 64-bit integer",
                             0),
              0u)
        << zero.err;
    EXPECT_EQ(std::count(zero.err.begin(), zero.err.end(), '\n'), 1) << zero.err;
}

// Each backend that reads the file: the cell fails with the line, the next cell runs.
std::vector<std::string> file_backends(const ScratchDir& dir) {
    std::vector<std::string> names;
    const auto list = nlohmann::json::parse(dir.run("list backends --json").out);
    for (const auto& row : list.at("rows"))
        if ((row.at("name") == "onnxruntime" || row.at("name") == "torch") && row.at("usable").get<bool>())
            names.push_back(row.at("name").get<std::string>());
    return names;
}

TEST(ShapeSizesCli, RunFailsTheCellWithOneLineAndGoesOn) {
    ScratchDir dir;
    const auto backends = file_backends(dir);
    if (backends.empty()) GTEST_SKIP() << "no backend that reads ONNX files in this build";
    dir.write("wraps.onnx", relu_model({k2to62 + 16}));
    dir.write("zero.onnx", relu_model({k2to31, k2to31}));
    dir.write("small.onnx", relu_model({16}));
    for (const std::string& backend : backends) {
        SCOPED_TRACE(backend);
        const std::string db = backend + ".db";
        const auto r = dir.run("run --model wraps.onnx,zero.onnx,small.onnx --backend " + backend +
                               " --batch 1 --duration 50ms --warmup 0s --min-iterations 2 --db " + db);
        EXPECT_EQ(r.exit_code, 1) << r.err;
        const auto benchmarks = store::ResultsStore::open(dir.file(db)).benchmarks();
        ASSERT_EQ(benchmarks.size(), 3u);
        EXPECT_EQ(benchmarks[0].status, BenchmarkStatus::failed);
        EXPECT_EQ(benchmarks[1].status, BenchmarkStatus::failed);
        EXPECT_EQ(benchmarks[2].status, BenchmarkStatus::ok) << benchmarks[2].reason;
        EXPECT_NE(benchmarks[0].reason.find("has shape [1, 4611686018427387920]: 4611686018427387920 elements of 4 "
                                            "bytes are more than 274877906944 bytes"),
                  std::string::npos)
            << benchmarks[0].reason;
        EXPECT_NE(benchmarks[1].reason.find("has shape [1, 2147483648, 2147483648]: 4611686018427387904 elements of 4 "
                                            "bytes are more than 274877906944 bytes"),
                  std::string::npos)
            << benchmarks[1].reason;
        for (const auto& b : {benchmarks[0], benchmarks[1]}) {
            EXPECT_EQ(b.reason.find("signal"), std::string::npos) << b.reason;
            EXPECT_EQ(b.reason.find('\n'), std::string::npos) << b.reason;
        }
    }
}

}  // namespace
}  // namespace inferbench
