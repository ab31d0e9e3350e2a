#include "backends/torch/layer_profile.hpp"

#include <c10/core/InferenceMode.h>

#include "core/clock.hpp"

namespace inferbench {
namespace {

class CpuStepClock final : public StepClock {
public:
    void start_run(std::size_t steps) override {
        started_.assign(steps, 0);
        elapsed_.assign(steps, 0);
    }
    void before(std::size_t step) override { started_[step] = monotonic_ns(); }
    void after(std::size_t step) override { elapsed_[step] += monotonic_ns() - started_[step]; }
    void finish_run(std::vector<std::int64_t>& total_ns) override {
        for (std::size_t i = 0; i < elapsed_.size(); ++i) total_ns[i] += elapsed_[i];
    }

private:
    std::vector<std::int64_t> started_, elapsed_;
};

}  // namespace

std::unique_ptr<StepClock> make_cpu_step_clock() { return std::make_unique<CpuStepClock>(); }

std::vector<LayerTime> profile_program(const torch_onnx::OnnxProgram& program, const std::vector<torch::Tensor>& inputs,
                                       std::int64_t iterations, const std::atomic<std::int32_t>& stop, StepClock& clock,
                                       const std::string& provider) {
    const c10::InferenceMode guard;
    const auto nodes = program.nodes();
    std::vector<std::int64_t> total_ns(nodes.size(), 0);
    std::int64_t runs = 0;
    program.run(inputs);  // warm-up: allocations of the profiled path, not timed
    for (std::int64_t i = 0; i < iterations && stop.load(std::memory_order_relaxed) == 0; ++i) {
        clock.start_run(nodes.size());
        program.run(inputs, &clock);
        clock.finish_run(total_ns);
        ++runs;
    }
    std::vector<LayerTime> layers;
    if (runs == 0) return layers;
    layers.reserve(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i)
        layers.push_back({nodes[i].name, nodes[i].op_type, provider, runs, total_ns[i]});
    return layers;
}

}  // namespace inferbench
