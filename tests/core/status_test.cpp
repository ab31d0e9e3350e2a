// Benchmark and run statuses: one mapping to the stored words, both ways.
#include "core/status.hpp"

#include <gtest/gtest.h>

namespace inferbench {
namespace {

TEST(Status, BenchmarkStatusesMapToTheStoredWordsAndBack) {
    const std::pair<BenchmarkStatus, std::string_view> words[] = {{BenchmarkStatus::ok, "ok"},
                                                                  {BenchmarkStatus::failed, "failed"},
                                                                  {BenchmarkStatus::skipped, "skipped"},
                                                                  {BenchmarkStatus::interrupted, "interrupted"}};
    ASSERT_EQ(std::size(words), std::size(kAllBenchmarkStatuses));
    for (const auto& [status, word] : words) {
        EXPECT_EQ(to_string(status), word);
        EXPECT_EQ(parse_benchmark_status(word), status) << word;
    }
    EXPECT_EQ(known_benchmark_statuses(), "ok, failed, skipped, interrupted");
}

TEST(Status, RunStatusesMapToTheStoredWordsAndBack) {
    const std::pair<RunStatus, std::string_view> words[] = {{RunStatus::running, "running"},
                                                            {RunStatus::completed, "completed"},
                                                            {RunStatus::interrupted, "interrupted"},
                                                            {RunStatus::failed, "failed"}};
    ASSERT_EQ(std::size(words), std::size(kAllRunStatuses));
    for (const auto& [status, word] : words) {
        EXPECT_EQ(to_string(status), word);
        EXPECT_EQ(parse_run_status(word), status) << word;
    }
    EXPECT_EQ(known_run_statuses(), "running, completed, interrupted, failed");
}

TEST(Status, OtherTextIsNoStatus) {
    for (const std::string_view text : {"", "OK", "ok ", "paused", "completed"})
        EXPECT_EQ(parse_benchmark_status(text), std::nullopt) << "'" << text << "'";
    for (const std::string_view text : {"", "Running", "ok", "skipped", "done"})
        EXPECT_EQ(parse_run_status(text), std::nullopt) << "'" << text << "'";
}

}  // namespace
}  // namespace inferbench
