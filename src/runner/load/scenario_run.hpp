// The worker's part of a load scenario other than single_stream (core/plan/scenario_settings.hpp; single_stream
// is the measured loop of runner/worker/measure_loop): the backend instances the scenario needs, their warm-up,
// and the run itself on the query engine (runner/load/load_engine), find_peak's search first where asked, with
// what it measured beside its queries as metrics and series (core/metrics/scenario_metrics.hpp).
//
// Instances: one per stream at the cell's batch size (the first is the worker's own, loaded and timed as
// every cell's is); with the batcher, one per stream at each of the batcher's batch sizes
// (batcher_batch_sizes). A model whose batch dimension is fixed loads at its own size only: the smaller
// sizes are then left out (the note says why) and every batch is padded to the cell's.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "runner/load/load_engine.hpp"
#include "runner/worker/measure_loop.hpp"
#include "store/results_store.hpp"

namespace inferbench::runner {

// Another instance of the cell's backend, loaded and prepared at `batch_size` as the worker prepares its
// own (the cell's model file, the seeded inputs). Throws what load() or prepare() throws.
using InstanceMaker = std::function<std::unique_ptr<Backend>(std::int64_t batch_size)>;

class ScenarioInstances {
public:
    ScenarioInstances(Backend& primary, const BenchmarkSpec& spec, const InstanceMaker& make);

    std::span<const StreamInstances> streams() const { return streams_; }
    // The smallest batch size the batcher runs (the cell's where it has no smaller instances).
    std::int64_t smallest_batch() const { return streams_.front().front().batch_size; }
    // Why the batcher runs without some batch sizes; empty when it has them all.
    const std::vector<std::string>& notes() const { return notes_; }
    // Warms every instance but the primary (the worker warms that one): `iterations` inferences each.
    WarmupResult warm_up_others(std::int64_t iterations, const std::atomic<std::int32_t>& stop) const;

private:
    Backend* primary_;
    std::vector<std::unique_ptr<Backend>> owned_;
    std::vector<StreamInstances> streams_;
    std::vector<std::string> notes_;
};

struct ScenarioOutcome {
    MeasureResult measured;
    std::vector<BackendMetric> metrics;
    std::vector<store::Series> series;
};

// Runs the cell's scenario into `sink` (at most `capacity` records; find_peak's steps reuse it, and the
// run at the peak found is what stays). `seconds_per_inference` is the warm-up's pace on the primary
// (0: unknown): the offline query's size and find_peak's first guess of the capacity come from it.
ScenarioOutcome run_scenario(const ScenarioInstances& instances, const BenchmarkSpec& spec, const LoopSettings& loop,
                             double seconds_per_inference, TraceSink sink, std::int64_t capacity,
                             const std::atomic<std::int32_t>& stop, LoadClock& clock);

}  // namespace inferbench::runner
