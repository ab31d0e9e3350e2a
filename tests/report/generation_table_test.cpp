// The generative benchmarks' table: their own columns, what is not defined or not measured said in its cell,
// failed cells with their reason, and the per-iteration table without them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analysis/generation_bounds.hpp"
#include "common/generation_fixture.hpp"
#include "report/generation_table.hpp"

namespace inferbench::report {
namespace {

using ::testing::HasSubstr;
using testing::GenerationPlan;

constexpr GenerationPlan kPlan{.batch = 2, .input_tokens = 16, .output_tokens = 5, .generations = 4,
                               .ttft_ns = 10'000'000, .step_ns = 2'000'000};

analysis::BenchmarkSummary generative(const GenerationPlan& plan) {
    auto measured = testing::generative_benchmark(plan);
    measured.metrics = testing::decoder_metric_rows(testing::small_decoder_shape(), 2.0, plan.kv_bytes_per_token);
    return analysis::summarize_measured(measured);
}

// The row of benchmark `row` as JSON, by column key.
nlohmann::json json_row(const Table& table, std::size_t row) {
    const auto all = nlohmann::json::parse(render(table, Format::json));
    return all.at("rows").at(row);
}

TEST(GenerationTable, HasTtftTpotRatesAndTheBoundFraction) {
    std::vector<analysis::BenchmarkSummary> summaries = {generative(kPlan)};
    devices::DeviceRoofs roofs;
    roofs.memory = {{"DRAM", 100e9, devices::RoofOrigin::measured, "probe dram_copy"}};
    const std::vector<std::optional<analysis::GenerationBounds>> bounds = {
        analysis::generation_bounds(*summaries[0].generation, roofs, "fp32")};
    const auto row = json_row(generation_table(summaries, bounds), 0);
    EXPECT_DOUBLE_EQ(row.at("ttft_p50_ms").get<double>(), 10.0);
    EXPECT_DOUBLE_EQ(row.at("tpot_p99_ms").get<double>(), 2.0);
    EXPECT_DOUBLE_EQ(row.at("decode_tokens_per_s").get<double>(), 1000.0);
    EXPECT_EQ(row.at("input_tokens").get<int>(), 16);
    EXPECT_EQ(row.at("tokens_per_joule").get<std::string>(), "not measured");  // a CPU without RAPL
    const double ceiling = bounds[0]->decode[0].steps_per_s;
    EXPECT_DOUBLE_EQ(row.at("decode_bound_pct").get<double>(), 500.0 / ceiling * 100);
    EXPECT_EQ(row.at("ttft_floor_pct").get<std::string>(), "unknown");  // no compute roof
    EXPECT_EQ(row.at("decode_bound_from").get<std::string>(), "probe dram_copy");
}

TEST(GenerationTable, OneOutputTokenSaysNotDefined) {
    GenerationPlan plan = kPlan;
    plan.output_tokens = 1;
    const auto row = json_row(generation_table({generative(plan)}), 0);
    EXPECT_EQ(row.at("tpot_p50_ms").get<std::string>(), "not defined");
    EXPECT_EQ(row.at("decode_tokens_per_s").get<std::string>(), "not defined");
    EXPECT_EQ(row.at("decode_bound_pct").get<std::string>(), "unknown");
}

TEST(GenerationTable, FailedCellsKeepTheirRowAndReason) {
    analysis::BenchmarkSummary failed;
    failed.benchmark = testing::generative_benchmark(kPlan).record;
    failed.benchmark.batch_size = 64;
    failed.benchmark.status = BenchmarkStatus::failed;
    failed.benchmark.reason = "out of memory: KV cache of 64 x 21 tokens";
    analysis::BenchmarkSummary image;
    image.benchmark.model = "resnet50";
    const std::vector<analysis::BenchmarkSummary> summaries = {generative(kPlan), failed, image};
    const Table table = generation_table(summaries);
    ASSERT_EQ(table.rows.size(), 2U);
    const auto row = json_row(table, 1);
    EXPECT_EQ(row.at("status").get<std::string>(), "failed");
    EXPECT_THAT(row.at("note").get<std::string>(), HasSubstr("out of memory"));
    const auto rest = per_iteration_summaries(summaries);
    ASSERT_EQ(rest.size(), 1U);
    EXPECT_EQ(rest[0].benchmark.model, "resnet50");
}

}  // namespace
}  // namespace inferbench::report
