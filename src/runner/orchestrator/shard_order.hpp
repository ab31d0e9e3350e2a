// Which benchmarks a run of a plan measures: every cell's repeats in run order (core/plan/matrix), or only
// those of the plan's shard (core/plan/shard), split by the run estimate's time of each cell. `run`, `run
// --resume`, `run --dry-run` and `slurm status` all ask here, so they agree on a shard's cells.
#pragma once

#include <cstdint>
#include <vector>

#include "core/plan/matrix.hpp"
#include "core/plan/plan.hpp"
#include "core/plan/shard.hpp"

namespace inferbench::runner {

// A cell's time as the split weighs it: run_estimate's before any cell ran (the same on every host).
std::int64_t planned_cell_ns(const BenchmarkSpec& spec);

// Every shard's cells of a plan split `count` ways (shard K at [K - 1]).
std::vector<std::vector<std::size_t>> plan_shards(const std::vector<BenchmarkSpec>& cells, std::int64_t count);

// The benchmarks the run measures, in run order: the plan's shard's cells only where it has one. Throws
// UserError where the shard holds no cell (more shards than the plan has cells).
std::vector<CellRepeat> planned_order(const Plan& plan, const std::vector<BenchmarkSpec>& cells);

}  // namespace inferbench::runner
