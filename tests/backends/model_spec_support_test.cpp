// Which backends run a PyTorch model spec, and how: the rule cell_problem() answers for every backend.
#include <gtest/gtest.h>

#include "backends/model_spec_support.hpp"
#include "backends/registry.hpp"

namespace inferbench {
namespace {

Capabilities reading(std::vector<std::string> formats) {
    Capabilities caps;
    caps.model_formats = std::move(formats);
    return caps;
}

BenchmarkSpec cell(std::string model) {
    BenchmarkSpec spec;
    spec.model = std::move(model);
    return spec;
}

TEST(ModelSpecSupport, FilesForBackendsThatReadThemTheSpecForThoseThatBuildModels) {
    EXPECT_EQ(spec_export_format(reading({"onnx", "ort"})), "onnx");
    EXPECT_EQ(spec_export_format(reading({"pt", "onnx"})), "onnx") << "ONNX first: both ONNX backends take it";
    EXPECT_EQ(spec_export_format(reading({"pt", "pth"})), "torchscript");
    EXPECT_EQ(spec_export_format(reading({"pb", "savedmodel"})), "");

    EXPECT_EQ(model_spec_refusal("onnxruntime", reading({"onnx"}), cell("hf:bert-base-uncased")), std::nullopt);
    Capabilities builds = reading({"pt"});
    builds.builds_zoo_models = true;
    EXPECT_EQ(model_spec_refusal("torch-eager", builds, cell("timm:convnext_tiny")), std::nullopt);
    EXPECT_EQ(model_spec_refusal("tensorflow", reading({"pb", "savedmodel"}), cell("torchvision:resnet50")),
              "backend tensorflow runs pb, savedmodel files; a PyTorch model spec runs on torch-eager, "
              "torch-compile, torch-aoti and on backends that read ONNX or TorchScript files");
    EXPECT_EQ(model_spec_refusal("tensorflow", reading({"pb"}), cell("resnet50")), std::nullopt) << "not a spec";
}

// A backend reading frozen graphs only, judged by the default unsupported_reason().
class GraphOnlyBackend final : public Backend {
public:
    std::string name() const override { return "graphs"; }
    std::string version() const override { return "1"; }
    Capabilities capabilities() const override {
        Capabilities caps = reading({"pb"});
        caps.devices = {DeviceKind::cpu};
        caps.precisions = {Precision::fp32};
        return caps;
    }
    void load(const std::string& /*model_path*/, const BenchmarkSpec& /*spec*/) override {}
    std::vector<TensorInfo> inputs() const override { return {}; }
    void prepare(std::span<const HostTensor> /*inputs*/) override {}
    void infer(DeviceTimes& /*times*/) override {}
};

TEST(ModelSpecSupport, CellProblemAnswersIt) {
    const GraphOnlyBackend backend;
    const auto problem = cell_problem(&backend, "", cell("python:my.py:make"));
    ASSERT_TRUE(problem.has_value());
    EXPECT_NE(problem->find("backend graphs runs pb files; a PyTorch model spec runs on"), std::string::npos)
        << *problem;
    EXPECT_EQ(cell_problem(&backend, "", cell("model.pb")), std::nullopt);
}

}  // namespace
}  // namespace inferbench
