// Per-node times of an ONNX model run by the LibTorch interpreter (the torch backend's layer_profile
// option): after the measured loop, one warm-up run and then N runs with each node timed, on the CPU
// by the steady clock around the node (LibTorch's CPU ops return when done), on a GPU by CUDA events
// recorded before and after it on the stream (the GPU time of its kernels, and any gap the launches
// leave). Nodes computed once at load (all inputs constant) are not run, so not listed.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

#include "backends/torch/onnx_interpreter/onnx_program.hpp"
#include "core/spec.hpp"

namespace inferbench {

// Times each step of one run; the times are read once the run is over (a GPU's after synchronising).
class StepClock : public torch_onnx::StepObserver {
public:
    virtual void start_run(std::size_t steps) = 0;
    // Adds each step's time in the run just finished to total_ns[step].
    virtual void finish_run(std::vector<std::int64_t>& total_ns) = 0;
};

std::unique_ptr<StepClock> make_cpu_step_clock();

// One row per node in run order: calls = `iterations`, provider as given. Returns what was measured
// so far (nothing before the first timed run) when `stop` becomes nonzero.
std::vector<LayerTime> profile_program(const torch_onnx::OnnxProgram& program, const std::vector<torch::Tensor>& inputs,
                                       std::int64_t iterations, const std::atomic<std::int32_t>& stop, StepClock& clock,
                                       const std::string& provider);

}  // namespace inferbench
