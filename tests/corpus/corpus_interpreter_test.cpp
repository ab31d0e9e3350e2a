// Every model of the exported corpus (scripts/corpus/export_corpus.py; INFERBENCH_CORPUS_DIR holds
// its manifest.json; tests/data/exports is one too) through the LibTorch ONNX interpreter and through ONNX Runtime, on the same
// file and the same random inputs at batch 1: the interpreter loads it, specializes for the input
// shapes like the torch backend's prepare does, and its outputs agree with ONNX Runtime's.
//
// Agreement, per output: max |torch - onnxruntime| <= kTolerance * max(1, max |onnxruntime|), fp32.
// Models of many layers with random weights: both runtimes pick their own convolution and matrix
// kernels, whose fp32 rounding differs by ~1e-6 per layer.
// The detection models' outputs (boxes, scores, labels) are compared like the others, in order:
// with random weights their scores tie by the thousand, and both runtimes rank ties by the lower
// index as ONNX's TopK and NonMaxSuppression specify, so the same boxes come in the same order.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <torch/types.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backends/torch/onnx_interpreter/onnx_program.hpp"
#include "backends/torch/onnxruntime_reference.hpp"
#include "core/error.hpp"

namespace inferbench::torch_onnx {
namespace {

constexpr double kTolerance = 1e-3;

struct CorpusModel {
    std::string name;
    std::filesystem::path file;
    std::vector<std::tuple<std::string, std::vector<std::int64_t>, std::string>> inputs;  // name, shape, dtype
};

std::filesystem::path corpus_dir() {
    const char* dir = std::getenv("INFERBENCH_CORPUS_DIR");
    return dir == nullptr ? std::filesystem::path() : std::filesystem::path(dir);
}

// The exported models; those the export skipped or failed are the export's report, not this test's.
std::vector<CorpusModel> corpus_models() {
    std::ifstream manifest(corpus_dir() / "manifest.json");
    if (!manifest) return {};
    const nlohmann::json json = nlohmann::json::parse(manifest);
    std::vector<CorpusModel> models;
    for (const auto& entry : json.at("models")) {
        if (entry.value("status", "") != "ok") continue;
        CorpusModel m{entry.at("name"), corpus_dir() / entry.at("file").get<std::string>(), {}};
        for (const auto& input : entry.at("inputs")) {
            m.inputs.emplace_back(input.at("name"), input.at("shape").get<std::vector<std::int64_t>>(),
                                  input.at("dtype"));
        }
        models.push_back(std::move(m));
    }
    return models;
}

// Images in [-2, 2] (normalized pixels); token ids from a small range every vocabulary has; masks
// and token types 0 or 1 (BERT has two token types).
torch::Tensor random_input(const std::string& name, const std::vector<std::int64_t>& shape, const std::string& dtype) {
    const bool binary = name.find("mask") != std::string::npos || name.find("token_type") != std::string::npos;
    const std::int64_t high = binary ? 2 : 100;
    if (dtype == "int64") return torch::randint(0, high, shape, torch::kLong);
    if (dtype == "int32") return torch::randint(0, high, shape, torch::kInt);
    return torch::rand(shape) * 4 - 2;
}

class CorpusVsOnnxRuntime : public ::testing::TestWithParam<CorpusModel> {};

TEST_P(CorpusVsOnnxRuntime, InterpreterAgreesAfterSpecialization) {
    const CorpusModel& m = GetParam();
    torch::manual_seed(31);
    std::vector<torch::Tensor> inputs;
    for (const auto& [name, shape, dtype] : m.inputs) inputs.push_back(random_input(name, shape, dtype));
    OnnxProgram program = OnnxProgram::load(m.file);
    const std::size_t general_nodes = program.nodes().size();
    program.specialize(inputs);
    const std::vector<torch::Tensor> ours = program.run(inputs);
    const std::vector<torch::Tensor> theirs = ort_reference::run_onnxruntime(m.file, inputs);
    ASSERT_EQ(ours.size(), theirs.size());
    double worst = 0;
    double largest = 0;  // max |onnxruntime|: where below 1, the error is absolute
    for (std::size_t k = 0; k < ours.size(); ++k) {
        ASSERT_EQ(ours[k].sizes(), theirs[k].sizes()) << m.name << " output " << k;
        if (ours[k].numel() == 0) continue;
        const auto a = ort_reference::agreement(ours[k].to(theirs[k].scalar_type()), theirs[k]);
        EXPECT_LE(a.error(), kTolerance) << m.name << " output " << k;
        worst = std::max(worst, a.error());
        largest = std::max(largest, a.max_reference);
    }
    std::cout << fmt::format("{}: {} nodes, {} after specialization, error {:.3g}, max |onnxruntime| {:.3g}\n",
                             m.name, general_nodes, program.nodes().size(), worst, largest);
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusVsOnnxRuntime, ::testing::ValuesIn(corpus_models()),
                         [](const ::testing::TestParamInfo<CorpusModel>& p) {
                             std::string name = p.param.name;  // "hf_bert_base.dynamo": letters, digits, _
                             std::ranges::replace_if(name, [](char c) { return std::isalnum(static_cast<unsigned char>(c)) == 0; }, '_');
                             return name;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CorpusVsOnnxRuntime);

// An empty corpus would pass every test above by having none.
TEST(Corpus, HasExportedModels) {
    EXPECT_FALSE(corpus_models().empty()) << "no exported models in " << corpus_dir()
                                          << "/manifest.json (INFERBENCH_CORPUS_DIR)";
}

}  // namespace
}  // namespace inferbench::torch_onnx
