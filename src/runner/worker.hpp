// The worker process: load (timed), prepare inputs (untimed), warm-up, measured iterations.
#pragma once

namespace inferbench {

// Entry point of `inferbench __worker`; returns the process exit code.
int worker_main();

}  // namespace inferbench
