// The inputs a cell feeds its backend: seeded random tensors (backends/random_inputs), or the plan's files
// (backends/input_files), whose samples are cycled one per iteration: the next one is prepared on the backend
// between iterations, untimed, before any other work between them (the L2 flush). The same for every
// backend the harness drives, so that none needs code of its own for it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "backends/input_files.hpp"
#include "runner/worker/measure_loop.hpp"

namespace inferbench::runner {

class InputFeed final : public BetweenIterations {
public:
    // plan: the spec's inputs (its files, else seeded random); random: seeded random whatever the spec says,
    // for a backend that feeds the plan's files to a tool of its own.
    enum class Source { plan, random };

    // The spec's inputs for `infos` (the loaded model's, at the cell's batch size). Throws UserError where
    // the files do not fit them (backends/input_files).
    InputFeed(const BenchmarkSpec& spec, const std::vector<TensorInfo>& infos, Source source = Source::plan);

    // What prepare() takes first.
    const std::vector<HostTensor>& first() const { return samples_.front(); }
    std::int64_t samples() const { return static_cast<std::int64_t>(samples_.size()); }

    // The hook the measured loop runs between iterations: this feed's next sample on `backend` where there are
    // several, then `then` (may be nullptr). Returns `then` alone where there is nothing to cycle.
    BetweenIterations* cycle_on(Backend& backend, BetweenIterations* then);
    bool cycles() const { return backend_ != nullptr; }

    // What the worker stores with the benchmark (core/metrics/harness_metrics): for file inputs, how many samples and
    // whether they were cycled; nothing for random inputs (the stored spec says the seed).
    std::vector<BackendMetric> metrics() const;

    void run() override;

private:
    InputSamples samples_;
    bool from_files_ = false;
    Backend* backend_ = nullptr;
    BetweenIterations* then_ = nullptr;
    std::size_t next_ = 1;  // the first was prepared before the loop
};

}  // namespace inferbench::runner
