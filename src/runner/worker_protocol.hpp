// How an orchestrator and its worker process talk. The worker is this same executable started as
// `inferbench __worker`, with:
//   fd 0: the request (one JSON document: the spec and the resolved model path), then EOF
//   fd 1, 2: a pipe the orchestrator keeps the last lines of (failure reasons)
//   fd 3: the iteration trace (memfd, see trace_buffer.hpp)
//   fd 4: events, one JSON object per line: loaded, warmup, measured, layers (per-layer times from the
//         backend's separate profiled run, when its options ask for one), error
#pragma once

#include <string_view>

namespace inferbench::worker_protocol {

inline constexpr std::string_view kWorkerCommand = "__worker";
inline constexpr int kRequestFd = 0;
inline constexpr int kTraceFd = 3;
inline constexpr int kEventFd = 4;

// Worker exit codes besides 0.
inline constexpr int kExitBenchmarkError = 3;  // an error event was sent
inline constexpr int kExitProtocolError = 4;   // started wrongly

}  // namespace inferbench::worker_protocol
