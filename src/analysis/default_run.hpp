// The run that `summary`, `report`, `roofline` and `compare` show when none is named: the latest run
// that has stored benchmarks. A run still in progress, or one a kill left empty, has none yet; the
// latest of all runs would show nothing (or fail), so it is passed over, and the note says so.
#pragma once

#include <cstdint>
#include <string>

#include "store/results_store.hpp"

namespace inferbench::analysis {

struct DefaultRun {
    std::int64_t run_id = 0;
    std::string note;  // "run 7 has no results yet; showing run 6", or empty
};

// Throws UserError when the store holds no run. When no run has benchmarks, the latest run is
// returned (callers then say it has none).
DefaultRun default_run(const store::ResultsStore& results);

// What `summary`, `report` and `compare` show when no run is named: default_run(), or, in a store whose runs with
// benchmarks come from more than one host (shards merged by `inferbench merge`, a shared store), every run, as
// the latest run is then one host's part alone. `runs` is a ReportFilter run spec: "all" or a run id.
struct DefaultRuns {
    std::string runs;
    std::string note;  // "all.db holds runs of 3 hosts (a, b, c): showing all 5 runs; --run latest shows ..."
};
DefaultRuns default_runs(const store::ResultsStore& results);

}  // namespace inferbench::analysis
