// The worker process: load (timed), prepare inputs (untimed), warm-up, measured iterations, then the
// backend's per-layer profile where its options ask for one.
#pragma once

namespace inferbench::runner {

// Entry point of `inferbench __worker`; returns the process exit code.
int worker_main();

}  // namespace inferbench::runner
