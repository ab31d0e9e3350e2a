// What the torch backend's generation pays for running its ONNX interpreter unspecialised (backends/torch/
// torch_decoder.hpp): a decode step of an ONNX decoder at a fixed cache length, run (a) as generation runs it,
// without OnnxProgram::specialize, the shape arithmetic computed at every step; (b) specialised to that step's
// shapes, as a fixed-shape cell runs; and (c) the cost of specialising once, which re-specialising per distinct
// length would pay at every step (each step's lengths differ). LibTorch on one CPU thread, fp32, batch 1; (a) and (b)
// interleaved run by run, medians.
//
//   build/release/bench/torch_decode_shapes [MODEL=llama-tiny] [PAST=128] [RUNS=200]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "backends/torch/onnx_interpreter/onnx_program.hpp"
#include "core/temp_dir.hpp"
#include "models/decoder_models.hpp"
#include "models/onnx_decoder.hpp"

namespace {

using inferbench::torch_onnx::OnnxProgram;

// The inputs of one decode step with `past` tokens in the cache, in the program's input order.
std::vector<torch::Tensor> decode_inputs(const OnnxProgram& program, const inferbench::DecoderShape& s,
                                         std::int64_t past) {
    std::vector<torch::Tensor> inputs;
    for (const auto& input : program.inputs()) {
        if (input.name == "input_ids") inputs.push_back(torch::full({1, 1}, 100, torch::kLong));
        else if (input.name == "attention_mask") inputs.push_back(torch::ones({1, past + 1}, torch::kLong));
        else if (input.name == "position_ids") inputs.push_back(torch::full({1, 1}, past, torch::kLong));
        else inputs.push_back(torch::randn({1, s.kv_heads, past, s.head_dim}));
    }
    return inputs;
}

double seconds_of_run(const OnnxProgram& program, const std::vector<torch::Tensor>& inputs) {
    const auto begin = std::chrono::steady_clock::now();
    program.run(inputs);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

double median(std::vector<double> times) {
    std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2), times.end());
    return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    const std::string name = argc > 1 ? argv[1] : "llama-tiny";
    const std::int64_t past = argc > 2 ? std::atoll(argv[2]) : 128;
    const int runs = argc > 3 ? std::atoi(argv[3]) : 200;
    const auto* model = inferbench::models::find_decoder_model(name);
    if (!model) {
        std::fprintf(stderr, "no zoo decoder %s\n", name.c_str());
        return 2;
    }
    torch::set_num_threads(1);
    c10::InferenceMode guard;
    const inferbench::TempDir dir("decode-shapes");
    const auto path = dir.path() / (name + ".onnx");
    inferbench::models::write_llama_onnx(model->shape, 42, inferbench::Precision::fp32, path);
    OnnxProgram program = OnnxProgram::load(path);
    program.to(torch::kCPU, torch::kFloat, false);
    OnnxProgram specialised = OnnxProgram::load(path);
    specialised.to(torch::kCPU, torch::kFloat, false);
    const auto inputs = decode_inputs(program, model->shape, past);
    const auto begin = std::chrono::steady_clock::now();
    specialised.specialize(inputs);
    const double specialize_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    // Interleaved, so that a busy machine's slow spells fall on both alike.
    std::vector<double> dynamic_runs, fixed_runs;
    for (int i = 0; i < runs; ++i) {
        dynamic_runs.push_back(seconds_of_run(program, inputs));
        fixed_runs.push_back(seconds_of_run(specialised, inputs));
    }
    const double dynamic_s = median(dynamic_runs);
    const double fixed_s = median(fixed_runs);
    std::printf("%s decode step, cache %lld tokens, 1 CPU thread, median of %d:\n", name.c_str(),
                static_cast<long long>(past), runs);
    std::printf("  unspecialised (generation's path): %8.1f us\n", dynamic_s * 1e6);
    std::printf("  specialised to these shapes:       %8.1f us  (unspecialised costs %+.1f%%)\n", fixed_s * 1e6,
                (dynamic_s / fixed_s - 1) * 100);
    std::printf("  specialize() once:                 %8.1f us  (%.1f steps' time)\n", specialize_s * 1e6,
                specialize_s / fixed_s);
    return 0;
}
