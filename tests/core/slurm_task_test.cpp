#include "core/process/slurm_task.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace inferbench {
namespace {

EnvironmentLookup lookup_in(const std::map<std::string, std::string>& variables) {
    return [&variables](const char* name) -> const char* {
        const auto found = variables.find(name);
        return found == variables.end() ? nullptr : found->second.c_str();
    };
}

TEST(SlurmTask, IsNothingOutsideSlurm) {
    const std::map<std::string, std::string> none;
    EXPECT_FALSE(current_slurm_task(lookup_in(none)));
}

TEST(SlurmTask, ReadsAnArrayTaskAndItsRestartCount) {
    const std::map<std::string, std::string> vars{{"SLURM_JOB_ID", "42"},
                                                  {"SLURM_ARRAY_JOB_ID", "40"},
                                                  {"SLURM_ARRAY_TASK_ID", "3"},
                                                  {"SLURM_RESTART_COUNT", "2"},
                                                  {"SLURMD_NODENAME", "node7"}};
    const auto task = current_slurm_task(lookup_in(vars));
    ASSERT_TRUE(task);
    EXPECT_EQ(task->job_id, "42");
    EXPECT_EQ(task->array_job_id, "40");
    EXPECT_EQ(task->array_task_id, "3");
    EXPECT_EQ(task->restart_count, 2);
    EXPECT_EQ(task->node, "node7");
}

TEST(SlurmTask, RoundTripsThroughARunsEnvironment) {
    const SlurmTask task{"42", "40", "3", 1, "node7"};
    nlohmann::ordered_json environment;
    environment["host"] = "node7";
    environment["slurm"] = to_json(task);
    const auto back = slurm_task_of(environment.dump());
    ASSERT_TRUE(back);
    EXPECT_EQ(back->job_id, "42");
    EXPECT_EQ(back->array_task_id, "3");
    EXPECT_EQ(back->restart_count, 1);
    EXPECT_FALSE(slurm_task_of(R"({"host": "x"})"));
    EXPECT_FALSE(slurm_task_of("not json"));
    EXPECT_FALSE(slurm_task_of(R"({"slurm": {"job_id": 5}})"));
}

TEST(SlurmTask, AnEarlierStartIsTheSameJobStartedFewerTimes) {
    const SlurmTask first{"42", "40", "3", 0, "node1"};
    const SlurmTask again{"42", "40", "3", 1, "node2"};
    const SlurmTask other{"43", "40", "4", 1, "node2"};
    EXPECT_TRUE(is_earlier_start(first, again));
    EXPECT_FALSE(is_earlier_start(again, first));
    EXPECT_FALSE(is_earlier_start(again, again));  // this very start: its orchestrator may be alive
    EXPECT_FALSE(is_earlier_start(first, other));
}

}  // namespace
}  // namespace inferbench
