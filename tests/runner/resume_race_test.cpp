// Two `run --resume` of one run started together: both read the run as interrupted, one reopens it, and the
// other is refused as any resume of a run still being written is: a UserError, exit code 2.
#include <gtest/gtest.h>

#include <string>

#include "backends/registry.hpp"
#include "common/scratch_dir.hpp"
#include "core/error.hpp"
#include "core/process/process_identity.hpp"
#include "runner/orchestrator/orchestrator.hpp"

namespace inferbench::runner {
namespace {

// A run written by this process: the winner, alive, that reopened the run a moment ago.
std::int64_t add_running_run(store::ResultsStore& results) {
    store::RunRecord run;
    run.name = std::string{"raced"};
    run.plan_json = std::string{"{}"};
    run.environment_json = std::string{"{}"};
    run.orchestrator = current_process_identity();
    run.host = run.orchestrator->host;
    return results.begin_run(run);
}

TEST(ResumeRace, TheLoserIsRefusedAsARunStillBeingWritten) {
    testing::ScratchDir dir;
    auto results = store::ResultsStore::open(dir.path() / "r.db");
    const std::int64_t run_id = add_running_run(results);

    Plan plan;
    plan.models = {"null"};
    plan.backends = {"null"};
    plan.batch_sizes = {1};
    const auto registry = BackendRegistry::discover({});
    try {
        resume_plan(plan, registry, results, RunnerOptions{}, ResumeTarget{run_id, {}});
        FAIL() << "a run another orchestrator writes must not be resumed";
    } catch (const UserError& error) {
        EXPECT_EQ(
            std::string(error.what())
                .find("--resume " + std::to_string(run_id) + ": the run is still being written by inferbench (pid "),
            0u)
            << error.what();
    }
    EXPECT_EQ(results.find_run(run_id)->orchestrator->start_ticks, current_process_identity().start_ticks);
}

}  // namespace
}  // namespace inferbench::runner
