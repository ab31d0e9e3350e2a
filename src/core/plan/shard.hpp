// A plan's cells split into N shards (`run --shard K/N`, plan key `shard: K/N`), one per host or Slurm array task.
// A shard's cells need one kind of device (a CPU shard asks its scheduler for no GPU) and a model's cells stay in
// one shard, so its files are made, converted and loaded by one host, unless there are more shards than models:
// then a model's cells are split into contiguous runs of the plan's order. Shards are balanced by each cell's
// estimated time (the caller's estimate: runner/orchestrator/run_estimate), so the slowest shard ends about when
// the others do. The split depends on the plan alone: every task of an array, `--dry-run` and `slurm status`
// compute the same shards.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/spec.hpp"

namespace inferbench {

// The K-th of N parts of a plan's benchmarks, K from 1.
struct Shard {
    std::int64_t index = 1;
    std::int64_t count = 1;
    friend bool operator==(const Shard&, const Shard&) = default;
};

// The most shards a plan may be split into: one per cell of the largest plan.
inline constexpr std::int64_t kMaxShards = 10'000;

// "2/8" -> {2, 8}; what is wrong otherwise ("shard '9/8': K goes from 1 to N (8)").
struct ShardParse {
    std::optional<Shard> shard;
    std::string problem;
};
ShardParse parse_shard(std::string_view text);
std::string to_string(const Shard& shard);  // "2/8"

// A cell's estimated time in nanoseconds (only relative sizes matter).
using CellCost = std::function<std::int64_t(const BenchmarkSpec&)>;

// Every shard's cells (ordinals into `cells`, ascending), shard K at [K - 1]. Each shard gets at least one cell
// where there are at least `count` cells; with fewer, the last shards are empty.
std::vector<std::vector<std::size_t>> split_into_shards(const std::vector<BenchmarkSpec>& cells, std::int64_t count,
                                                        const CellCost& cost);

// The ordinals of one shard's cells, ascending.
std::vector<std::size_t> shard_cells(const std::vector<BenchmarkSpec>& cells, const Shard& shard, const CellCost& cost);

}  // namespace inferbench
