#include "core/plan/shard.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/plan/matrix.hpp"
#include "core/plan/plan.hpp"
#include "core/plan/settings.hpp"

namespace inferbench {
namespace {

// Every cell costs its batch size: larger batches take longer, as the run estimate scales them.
std::int64_t batch_cost(const BenchmarkSpec& spec) { return spec.batch_size; }

std::vector<BenchmarkSpec> cells_of(std::vector<std::string> models, std::vector<Device> devices,
                                    std::vector<std::int64_t> batches) {
    Plan plan;
    plan.models = std::move(models);
    plan.backends = {"null"};
    plan.devices = std::move(devices);
    plan.batch_sizes = std::move(batches);
    return expand_matrix(plan);
}

const Device kCpu{DeviceKind::cpu, 0};
const Device kGpu0{DeviceKind::cuda, 0};
const Device kGpu1{DeviceKind::cuda, 1};

// Every cell in exactly one shard.
void expect_partition(const std::vector<std::vector<std::size_t>>& shards, std::size_t cells) {
    std::vector<int> seen(cells, 0);
    for (const auto& shard : shards) {
        EXPECT_TRUE(std::is_sorted(shard.begin(), shard.end()));
        for (const std::size_t c : shard) ++seen[c];
    }
    EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
}

double load(const std::vector<BenchmarkSpec>& cells, const std::vector<std::size_t>& shard) {
    double sum = 0;
    for (const std::size_t c : shard) sum += static_cast<double>(batch_cost(cells[c]));
    return sum;
}

TEST(Shard, ParsesKOfN) {
    const auto parsed = parse_shard("2/8");
    ASSERT_TRUE(parsed.shard);
    EXPECT_EQ(*parsed.shard, (Shard{2, 8}));
    EXPECT_EQ(to_string(*parsed.shard), "2/8");
}

TEST(Shard, RefusesMalformedAndOutOfRangeWithOneLine) {
    EXPECT_EQ(parse_shard("2").problem, "shard '2' is not K/N; write e.g. 2/8 for the second of 8 shards");
    EXPECT_EQ(parse_shard("a/4").problem, "shard 'a/4' is not K/N; write e.g. 2/8 for the second of 8 shards");
    EXPECT_EQ(parse_shard("5/4").problem, "shard '5/4': K goes from 1 to N (4)");
    EXPECT_EQ(parse_shard("0/4").problem, "shard '0/4': K goes from 1 to N (4)");
    EXPECT_EQ(parse_shard("1/0").problem, "shard '1/0': N goes from 1 to 10000");
    EXPECT_FALSE(parse_shard("1/10001").shard);
}

TEST(Shard, IsAPlanSettingReadIntoItsType) {
    RunSettings settings;
    const SettingField* field = find_setting("shard");
    ASSERT_NE(field, nullptr);
    EXPECT_FALSE(set_setting(settings, *field, "3/4"));
    EXPECT_EQ(settings.shard, (Shard{3, 4}));
    EXPECT_EQ(setting_text(settings, *field), "3/4");
    EXPECT_EQ(set_setting(settings, *field, "4/3"), "shard '4/3': K goes from 1 to N (3)");
    EXPECT_FALSE(set_setting(settings, *field, ""));
    EXPECT_FALSE(settings.shard);
    EXPECT_EQ(setting_text(settings, *field), "");
}

TEST(Shard, KeepsAModelsCellsTogetherWhenThereAreAsManyModelsAsShards) {
    const auto cells = cells_of({"a", "b", "c", "d"}, {kCpu}, {1, 2, 4});
    const auto shards = split_into_shards(cells, 4, batch_cost);
    ASSERT_EQ(shards.size(), 4u);
    expect_partition(shards, cells.size());
    for (const auto& shard : shards) {
        ASSERT_EQ(shard.size(), 3u);
        for (const std::size_t c : shard) EXPECT_EQ(cells[c].model, cells[shard.front()].model);
    }
    EXPECT_EQ(cells[shards[0].front()].model, "a");  // shard 1 holds the plan's first cell
    EXPECT_EQ(cells[shards[3].front()].model, "d");
}

TEST(Shard, BalancesWholeModelsByTheirTime) {
    // a: 1+2+4+8 = 15, b: 15, c: 15, d: 1 (batch 1 alone via its own plan), two shards.
    auto cells = cells_of({"a", "b", "c"}, {kCpu}, {1, 2, 4, 8});
    auto small = cells_of({"d"}, {kCpu}, {1});
    cells.insert(cells.end(), small.begin(), small.end());
    const auto shards = split_into_shards(cells, 2, batch_cost);
    expect_partition(shards, cells.size());
    const double first = load(cells, shards[0]), second = load(cells, shards[1]);
    EXPECT_EQ(std::max(first, second), 30);  // two models in one shard, the third and d in the other
    EXPECT_EQ(std::min(first, second), 16);
    for (const auto& shard : shards) {
        std::map<std::string, std::size_t> per_model;
        for (const std::size_t c : shard) ++per_model[cells[c].model];
        for (const auto& [model, n] : per_model) EXPECT_EQ(n, model == "d" ? 1u : 4u) << model;
    }
}

TEST(Shard, SplitsAModelOnlyWhenThereAreMoreShardsThanModels) {
    const auto even = cells_of({"a", "b"}, {kCpu}, {1, 2, 3, 4, 5, 6});
    const auto shards = split_into_shards(even, 4, [](const BenchmarkSpec&) { return std::int64_t{1}; });
    expect_partition(shards, even.size());
    ASSERT_EQ(shards.size(), 4u);
    for (const auto& shard : shards) {
        EXPECT_EQ(shard.size(), 3u);  // each model's six cells in two runs of three, in plan order
        EXPECT_EQ(shard.back() - shard.front(), 2u);
        for (const std::size_t c : shard) EXPECT_EQ(even[c].model, even[shard.front()].model);
    }
}

TEST(Shard, GivesTheSlowerModelMoreShards) {
    // a's cells weigh 10 each, b's 1 each: of 5 shards, b gets one and a four.
    const auto cells = cells_of({"a", "b"}, {kCpu}, {1, 2, 3, 4});
    const auto shards = split_into_shards(cells, 5, [](const BenchmarkSpec& s) { return s.model == "a" ? 10 : 1; });
    expect_partition(shards, cells.size());
    int b_shards = 0;
    for (const auto& shard : shards) {
        ASSERT_FALSE(shard.empty());
        if (cells[shard.front()].model == "b") {
            ++b_shards;
            EXPECT_EQ(shard.size(), 4u);
        }
    }
    EXPECT_EQ(b_shards, 1);
}

TEST(Shard, NeverMixesCpuAndGpuCellsWhileThereAreShardsForEach) {
    const auto cells = cells_of({"a", "b", "c"}, {kCpu, kGpu0, kGpu1}, {1, 8});
    for (const std::int64_t count : {2, 3, 5, 9, 18}) {
        const auto shards = split_into_shards(cells, count, batch_cost);
        expect_partition(shards, cells.size());
        for (const auto& shard : shards) {
            ASSERT_FALSE(shard.empty()) << count;
            for (const std::size_t c : shard)
                EXPECT_EQ(cells[c].device.kind, cells[shard.front()].device.kind) << count;
        }
    }
    // GPU cells of one model on cuda:0 and cuda:1 share a shard: a task asks for a kind of device, not one GPU.
    const auto two = split_into_shards(cells, 2, batch_cost);
    std::set<DeviceKind> kinds;
    for (const auto& shard : two) kinds.insert(cells[shard.front()].device.kind);
    EXPECT_EQ(kinds.size(), 2u);
}

TEST(Shard, MoreShardsThanCellsLeavesTheLastOnesEmpty) {
    const auto cells = cells_of({"a"}, {kCpu}, {1, 2});
    const auto shards = split_into_shards(cells, 4, batch_cost);
    ASSERT_EQ(shards.size(), 4u);
    expect_partition(shards, cells.size());
    EXPECT_EQ(shards[0], (std::vector<std::size_t>{0}));
    EXPECT_EQ(shards[1], (std::vector<std::size_t>{1}));
    EXPECT_TRUE(shards[2].empty());
    EXPECT_TRUE(shards[3].empty());
    EXPECT_EQ(shard_cells(cells, {2, 4}, batch_cost), (std::vector<std::size_t>{1}));
}

TEST(Shard, OneShardIsThePlan) {
    const auto cells = cells_of({"a", "b"}, {kCpu, kGpu0}, {1, 8});
    const auto shards = split_into_shards(cells, 1, batch_cost);
    ASSERT_EQ(shards.size(), 1u);
    EXPECT_EQ(shards[0].size(), cells.size());
}

TEST(Shard, TheSplitDependsOnThePlanAlone) {
    const auto cells = cells_of({"a", "b", "c", "d", "e"}, {kCpu, kGpu0}, {1, 2, 4, 8, 16});
    EXPECT_EQ(split_into_shards(cells, 7, batch_cost), split_into_shards(cells, 7, batch_cost));
}

}  // namespace
}  // namespace inferbench
