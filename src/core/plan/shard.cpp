#include "core/plan/shard.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <queue>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "core/units.hpp"

namespace inferbench {
namespace {

// Cells that must stay together where the shards allow: one model on one kind of device, or (above) every cell of
// one kind of device.
struct Unit {
    std::vector<std::size_t> cells;  // ascending
    double cost = 0;
};

using Bins = std::vector<std::vector<std::size_t>>;

// The units of `cells` keyed by `key`, in the order their first cell comes in the plan.
template <typename Key>
std::vector<Unit> units_by(const std::vector<std::size_t>& cells, const std::vector<double>& costs, Key key) {
    std::vector<Unit> units;
    std::map<decltype(key(std::size_t{})), std::size_t> index;
    for (const std::size_t cell : cells) {
        const auto [at, added] = index.try_emplace(key(cell), units.size());
        if (added) units.emplace_back();
        Unit& unit = units[at->second];
        unit.cells.push_back(cell);
        unit.cost += costs[cell];
    }
    return units;
}

// Longest first into the least loaded bin (Graham's LPT: within 4/3 of the best balance).
Bins pack_units(const std::vector<Unit>& units, std::size_t bins) {
    std::vector<std::size_t> order(units.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return units[a].cost > units[b].cost; });
    using Load = std::pair<double, std::size_t>;  // (cost so far, bin): the least loaded, then the first
    std::priority_queue<Load, std::vector<Load>, std::greater<>> loads;
    for (std::size_t bin = 0; bin < bins; ++bin) loads.emplace(0.0, bin);
    Bins packed(bins);
    for (const std::size_t u : order) {
        auto [load, bin] = loads.top();
        loads.pop();
        packed[bin].insert(packed[bin].end(), units[u].cells.begin(), units[u].cells.end());
        loads.emplace(load + units[u].cost, bin);
    }
    return packed;
}

// How many bins each unit gets out of `bins` (at least the unit count): one each, then each further bin to the
// unit whose cells have the most time per bin, never more bins than a unit has cells. Bins left over stay unused.
std::vector<std::size_t> share_bins(const std::vector<Unit>& units, std::size_t bins) {
    std::vector<std::size_t> shares(units.size(), 1);
    using Claim = std::pair<double, std::size_t>;  // (cost per bin, -unit) : the most, then the first unit
    auto claim = [&](std::size_t u) { return Claim(units[u].cost / static_cast<double>(shares[u]), units.size() - u); };
    std::priority_queue<Claim> claims;
    for (std::size_t u = 0; u < units.size(); ++u)
        if (units[u].cells.size() > 1) claims.push(claim(u));
    for (std::size_t left = bins - units.size(); left > 0 && !claims.empty(); --left) {
        const std::size_t u = units.size() - claims.top().second;
        claims.pop();
        ++shares[u];
        if (shares[u] < units[u].cells.size()) claims.push(claim(u));
    }
    return shares;
}

// A unit's cells in `parts` runs of the plan's order, each about the same time (parts <= cells).
Bins split_in_order(const Unit& unit, std::size_t parts, const std::vector<double>& costs) {
    Bins runs;
    double left_cost = unit.cost;
    std::size_t next = 0;
    const std::size_t n = unit.cells.size();
    for (std::size_t part = 0; part < parts; ++part) {
        const std::size_t parts_left = parts - part;
        const double target = left_cost / static_cast<double>(parts_left);
        std::vector<std::size_t> run;
        double taken = 0;
        // Every later part keeps at least one cell; a cell goes in where it brings the run nearer its target.
        while (next < n - (parts_left - 1)) {
            const double cost = costs[unit.cells[next]];
            if (parts_left > 1 && !run.empty() && taken + cost / 2 > target) break;
            run.push_back(unit.cells[next++]);
            taken += cost;
        }
        left_cost -= taken;
        runs.push_back(std::move(run));
    }
    return runs;
}

// `bins` bins (at least one per unit) over units that should each stay whole: whole units where there are at
// least as many units as bins, else each unit split over its share of the bins.
Bins spread_units(const std::vector<Unit>& units, std::size_t bins, const std::vector<double>& costs) {
    if (bins <= units.size()) return pack_units(units, bins);
    const auto shares = share_bins(units, bins);
    Bins spread;
    for (std::size_t u = 0; u < units.size(); ++u)
        for (auto& run : split_in_order(units[u], shares[u], costs)) spread.push_back(std::move(run));
    return spread;
}

}  // namespace

ShardParse parse_shard(std::string_view text) {
    const auto slash = text.find('/');
    const auto index = slash == std::string_view::npos ? std::nullopt : parse_int(text.substr(0, slash));
    const auto count = slash == std::string_view::npos ? std::nullopt : parse_int(text.substr(slash + 1));
    if (!index || !count)
        return {std::nullopt, fmt::format("shard '{}' is not K/N; write e.g. 2/8 for the second of 8 shards", text)};
    if (*count < 1 || *count > kMaxShards)
        return {std::nullopt, fmt::format("shard '{}': N goes from 1 to {}", text, kMaxShards)};
    if (*index < 1 || *index > *count)
        return {std::nullopt, fmt::format("shard '{}': K goes from 1 to N ({})", text, *count)};
    return {Shard{*index, *count}, {}};
}

std::string to_string(const Shard& shard) { return fmt::format("{}/{}", shard.index, shard.count); }

std::vector<std::vector<std::size_t>> split_into_shards(const std::vector<BenchmarkSpec>& cells, std::int64_t count,
                                                        const CellCost& cost) {
    if (count < 1) throw std::logic_error("split_into_shards: fewer than one shard");
    const auto shards = static_cast<std::size_t>(count);
    std::vector<double> costs;
    costs.reserve(cells.size());
    for (const BenchmarkSpec& cell : cells) costs.push_back(static_cast<double>(std::max<std::int64_t>(cost(cell), 1)));
    std::vector<std::size_t> all(cells.size());
    std::iota(all.begin(), all.end(), std::size_t{0});
    const auto kinds = units_by(all, costs, [&](std::size_t c) { return cells[c].device.kind; });
    Bins bins;
    if (shards < kinds.size()) {
        bins = pack_units(kinds, shards);
    } else {
        // Each kind of device its share of the shards, then each kind's models spread over its share.
        const auto shares = share_bins(kinds, shards);
        for (std::size_t k = 0; k < kinds.size(); ++k) {
            const auto models = units_by(kinds[k].cells, costs, [&](std::size_t c) { return cells[c].model; });
            for (auto& bin : spread_units(models, shares[k], costs)) bins.push_back(std::move(bin));
        }
    }
    for (auto& bin : bins) std::sort(bin.begin(), bin.end());
    // Shard 1 holds the plan's first cell, and so on; empty shards last.
    std::stable_sort(bins.begin(), bins.end(), [](const auto& a, const auto& b) {
        if (a.empty() || b.empty()) return !a.empty() && b.empty();
        return a.front() < b.front();
    });
    bins.resize(shards);
    return bins;
}

std::vector<std::size_t> shard_cells(const std::vector<BenchmarkSpec>& cells, const Shard& shard,
                                     const CellCost& cost) {
    if (shard.index < 1 || shard.index > shard.count) throw std::logic_error("shard_cells: a shard outside its count");
    return split_into_shards(cells, shard.count, cost)[static_cast<std::size_t>(shard.index - 1)];
}

}  // namespace inferbench
