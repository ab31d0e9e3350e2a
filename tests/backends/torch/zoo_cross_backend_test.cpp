// Every zoo model through both ONNX backends, the LibTorch interpreter and ONNX Runtime, on the same
// file and inputs: the outputs agree to fp32 rounding. By default each architecture is built at a
// reduced input size (the same layers, channels and heads: see ZooOptions) that a 2-core CI
// machine runs in seconds; with INFERBENCH_FULL_SIZE_CROSS_CHECK=1 the published sizes run too (a
// larger machine's job: ssd-resnet34 at 1200x1200 and 3d-unet at 128^3 are ~0.2 and ~0.5 TMACs).
//
//   ctest -L cross-backend                                         # this suite alone
//   INFERBENCH_FULL_SIZE_CROSS_CHECK=1 ctest -L cross-backend      # with the published sizes
//   INFERBENCH_CROSS_CHECK_FP64=1 ...                              # and each backend against float64
//
// Agreement: max |torch - onnxruntime| <= tolerance * max(1, max |onnxruntime|), per output.
#include <gtest/gtest.h>

#include <torch/types.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backends/torch/onnx_interpreter/onnx_kernels.hpp"
#include "backends/torch/onnx_interpreter/onnx_program.hpp"
#include "backends/torch/onnxruntime_reference.hpp"
#include "common/scratch_dir.hpp"
#include "models/zoo.hpp"
#include "models/zoo_builders.hpp"

namespace inferbench::torch_onnx {
namespace {

constexpr std::uint64_t kSeed = 42;
constexpr double kFullSizeTolerance = 1e-4;  // fp32, both backends free to pick their kernels
constexpr std::int64_t kVocabulary = models::BertConfig{}.vocab;

struct CrossCheck {
    std::string model;
    models::ZooOptions reduced;  // the CI size
    std::int64_t batch = 1;      // at the reduced size (the published size runs batch 1)
    double tolerance = 1e-5;     // at the reduced size
};

// For test names and failure messages: the model, not the struct's bytes.
void PrintTo(const CrossCheck& check, std::ostream* out) { *out << check.model; }

// The reduced sizes: the smallest each architecture takes, or a little more where the smallest
// would shrink every feature map to 1x1. The tolerances are 5-10x the worst error seen on the
// 2-core CI machine (Debian's LibTorch 1.13, ONNX Runtime 1.30). Against a float64 run of the
// interpreter (INFERBENCH_CROSS_CHECK_FP64=1) ONNX Runtime is the closer of the two, by 1.5-3x:
// that LibTorch uses Debian's reference BLAS for matrix products and for the convolutions oneDNN
// does not take (3-D ones among them), which sums each dot product in one float in order.
const std::vector<CrossCheck>& cross_checks() {
    static const std::vector<CrossCheck> checks = {
        {"resnet50", {.image_size = 64}, 2, 2e-5},
        {"mobilenet", {.image_size = 64}, 2, 1e-6},  // probabilities: max 0.005, errors ~1e-9
        {"mobilenet-v2", {.image_size = 64}, 2, 1e-5},
        {"ssd-mobilenet", {.image_size = 128}, 2, 1e-5},  // maps 8, 4, 2, 1, 1, 1
        {"ssd-resnet34", {.image_size = 400}, 1, 1e-5},   // 385 is the smallest: maps 50 ... 1
        // 32^3 (the bottleneck is 1^3). 3-D convolutions with K = C_in * 27 up to 17,280 terms per
        // sum: the interpreter's error against float64 is 1.5e-5, ONNX Runtime's 5e-6.
        {"3d-unet", {.image_size = 32}, 1, 1e-4},
        {"bert", {.sequence_length = 16}, 1, 5e-5},  // all 24 layers, 16 tokens
        {"bert-base", {.sequence_length = 16}, 2, 2e-5},
        {"yolov3", {.image_size = 64}, 2, 2e-5},
        {"yolov3-608", {.image_size = 96}, 1, 3e-5},  // the same network as yolov3: another size
        {"yolov5s", {.image_size = 64}, 2, 1e-5},
        {"yolov5m", {.image_size = 64}, 2, 1e-5},
        {"yolov5l", {.image_size = 64}, 1, 1e-5},
        {"yolov5x", {.image_size = 64}, 1, 1e-5},
        {"swin-t", {.image_size = 224}, 1, 1e-5},  // window 7 over 4 stages: 224 is the smallest
        {"swin-s", {.image_size = 224}, 1, 1e-5},
        {"swin-b", {.image_size = 224}, 1, 1e-5},
        {"swin-l", {.image_size = 224}, 1, 1e-5},
    };
    return checks;
}

bool full_size_enabled() {
    const char* value = std::getenv("INFERBENCH_FULL_SIZE_CROSS_CHECK");
    return value != nullptr && std::string(value) == "1";
}

// Seeded inputs for the program's declared inputs at `batch`: images and volumes N(0, 1); BERT's
// token ids over the whole vocabulary, the last quarter of each sequence padding (masked), and
// the second half segment B.
std::vector<torch::Tensor> make_inputs(const OnnxProgram& program, std::int64_t batch) {
    torch::manual_seed(7);
    std::vector<torch::Tensor> inputs;
    for (const auto& info : program.inputs()) {
        std::vector<std::int64_t> shape;
        for (const auto& d : info.dims)
            shape.push_back(std::holds_alternative<std::int64_t>(d) ? std::get<std::int64_t>(d) : batch);
        if (info.elem_type == models::onnx::DataType::float32) {
            inputs.push_back(torch::randn(shape));
            continue;
        }
        const std::int64_t tokens = shape.at(1);
        const torch::Tensor position = torch::arange(tokens, torch::kLong).expand(shape).contiguous();
        if (info.name == "input_ids") {
            inputs.push_back(torch::randint(0, kVocabulary, shape, torch::kLong));
        } else if (info.name == "attention_mask") {
            inputs.push_back((position < tokens - tokens / 4).to(torch::kLong));
        } else if (info.name == "token_type_ids") {
            inputs.push_back((position >= tokens / 2).to(torch::kLong));
        } else {
            ADD_FAILURE() << "no input generator for " << info.name;
        }
    }
    return inputs;
}

// Also runs the interpreter in float64 and reports both backends' error against it: which one is
// closer where they disagree. Slow (no fp64 kernels in oneDNN), so only on request.
bool float64_reference_enabled() {
    const char* value = std::getenv("INFERBENCH_CROSS_CHECK_FP64");
    return value != nullptr && std::string(value) == "1";
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

class ZooCrossBackend : public ::testing::TestWithParam<CrossCheck> {
protected:
    // Builds, writes and runs the model both ways; checks every output.
    static void check(const std::string& model, const models::ZooOptions& options, std::int64_t batch, double tolerance,
                      const std::string& size) {
        const inferbench::testing::ScratchDir dir;
        const auto path = dir.path() / (model + ".onnx");
        auto start = std::chrono::steady_clock::now();
        {
            const models::GraphBuilder graph = models::build_zoo_model(model, kSeed, options);
            std::set<std::string> missing;
            for (const auto& node : graph.nodes()) {
                if (find_kernel_factory(node.op_type) == nullptr) missing.insert(node.op_type);
            }
            ASSERT_TRUE(missing.empty()) << model << " uses operators the interpreter lacks: "
                                         << fmt::format("{}", fmt::join(missing, ", "));
            std::ofstream out(path, std::ios::binary);
            graph.write(out);
        }
        const double build_s = seconds_since(start);

        start = std::chrono::steady_clock::now();
        std::vector<torch::Tensor> inputs;
        std::vector<torch::Tensor> ours;
        std::vector<torch::Tensor> exact;  // float64, where asked for
        double torch_load_s = 0;
        double torch_run_s = 0;
        {
            OnnxProgram program = OnnxProgram::load(path);  // released before ONNX Runtime loads
            torch_load_s = seconds_since(start);
            inputs = make_inputs(program, batch);
            start = std::chrono::steady_clock::now();
            ours = program.run(inputs);
            torch_run_s = seconds_since(start);
            if (float64_reference_enabled()) {
                program.to(torch::kCPU, torch::kDouble, false);
                exact = program.run(inputs);
            }
        }
        start = std::chrono::steady_clock::now();
        const std::vector<torch::Tensor> theirs = ort_reference::run_onnxruntime(path, inputs);
        const double ort_s = seconds_since(start);

        ASSERT_EQ(ours.size(), theirs.size());
        double worst = 0;
        for (std::size_t k = 0; k < ours.size(); ++k) {
            ASSERT_EQ(ours[k].sizes(), theirs[k].sizes()) << model << " output " << k;
            EXPECT_TRUE(torch::isfinite(theirs[k]).all().item<bool>()) << model << " output " << k;
            // A network whose outputs are constant would agree trivially.
            EXPECT_GT(theirs[k].to(torch::kDouble).std().item<double>(), 0.0) << model << " output " << k;
            const ort_reference::Agreement a = ort_reference::agreement(ours[k], theirs[k]);
            worst = std::max(worst, a.error());
            EXPECT_LE(a.error(), tolerance) << model << " output " << k << ": max |torch - onnxruntime| "
                                            << a.max_difference << ", max |onnxruntime| " << a.max_reference;
            std::cout << fmt::format(
                "[cross-backend] {} {} batch {} output {} {}: max|torch-ort| {:.3g}, "
                "max|ort| {:.4g}, error {:.3g} (tolerance {:g})\n",
                model, size, batch, k, fmt::join(theirs[k].sizes(), "x"), a.max_difference, a.max_reference, a.error(),
                tolerance);
            if (!exact.empty()) {
                std::cout << fmt::format(
                    "[cross-backend] {} {} output {} against float64: torch fp32 error {:.3g}, "
                    "onnxruntime error {:.3g}\n",
                    model, size, k, ort_reference::agreement(ours[k], exact[k]).error(),
                    ort_reference::agreement(theirs[k], exact[k]).error());
            }
        }
        std::cout << fmt::format(
            "[cross-backend] {} {}: worst error {:.3g}; build+write {:.2f} s, torch load {:.2f} s "
            "+ run {:.2f} s, onnxruntime load+run {:.2f} s\n",
            model, size, worst, build_s, torch_load_s, torch_run_s, ort_s);
    }
};

TEST_P(ZooCrossBackend, ReducedSizeAgreesWithOnnxRuntime) {
    const CrossCheck& c = GetParam();
    const std::string size = c.reduced.image_size != 0 ? fmt::format("at {}", c.reduced.image_size)
                                                       : fmt::format("at {} tokens", c.reduced.sequence_length);
    check(c.model, c.reduced, c.batch, c.tolerance, size);
}

TEST_P(ZooCrossBackend, FullSizeAgreesWithOnnxRuntime) {
    if (!full_size_enabled()) GTEST_SKIP() << "published sizes: set INFERBENCH_FULL_SIZE_CROSS_CHECK=1";
    check(GetParam().model, {}, 1, kFullSizeTolerance, "at the published size");
}

// Every zoo model but "null" (no file) is in the table, so a new model cannot go unchecked.
TEST(ZooCrossBackendTable, CoversTheWholeZoo) {
    std::vector<std::string> checked;
    for (const auto& c : cross_checks()) checked.push_back(c.model);
    std::vector<std::string> zoo = models::zoo_names();
    std::erase(zoo, "null");
    EXPECT_EQ(checked, zoo);
}

INSTANTIATE_TEST_SUITE_P(Zoo, ZooCrossBackend, ::testing::ValuesIn(cross_checks()), [](const auto& test) {
    std::string name = test.param.model;
    std::ranges::replace(name, '-', '_');
    return name;
});

}  // namespace
}  // namespace inferbench::torch_onnx
