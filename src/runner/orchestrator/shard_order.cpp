#include "runner/orchestrator/shard_order.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"
#include "runner/orchestrator/run_estimate.hpp"

namespace inferbench::runner {

std::int64_t planned_cell_ns(const BenchmarkSpec& spec) { return estimate_cell_ns(spec, {}); }

std::vector<std::vector<std::size_t>> plan_shards(const std::vector<BenchmarkSpec>& cells, std::int64_t count) {
    return split_into_shards(cells, count, planned_cell_ns);
}

std::vector<CellRepeat> planned_order(const Plan& plan, const std::vector<BenchmarkSpec>& cells) {
    auto order = run_order(cells.size(), plan.settings.repeats);
    const auto& shard = plan.settings.shard;
    if (!shard) return order;
    const auto mine = shard_cells(cells, *shard, planned_cell_ns);
    if (mine.empty())
        throw UserError(
            fmt::format("{}: shard {} holds no benchmark: the plan has {} cell(s), so split it into at most "
                        "{} shard(s)",
                        plan.source, to_string(*shard), cells.size(), std::max<std::size_t>(cells.size(), 1)));
    std::erase_if(order, [&](const CellRepeat& b) { return !std::binary_search(mine.begin(), mine.end(), b.ordinal); });
    return order;
}

}  // namespace inferbench::runner
