// Reads the per-iteration file `trtexec --exportTimes=FILE` writes (sampleReporting.cpp,
// exportJSONTrace): a JSON array with one flat object per measured query, every value in ms since
// trtexec's own origin:
//   [ { "startEnqMs" : 0.46, "endEnqMs" : 0.6, "startH2dMs" : 0.47, "endH2dMs" : 0.5,
//       "startComputeMs" : 0.5, "endComputeMs" : 1.9, "startD2hMs" : 1.9, "endD2hMs" : 1.91,
//       "h2dMs" : 0.03, "computeMs" : 1.4, "d2hMs" : 0.01, "latencyMs" : 1.44, "endToEndMs" : 1.45 }, ... ]
// endToEndMs exists in some versions only; TensorRT 7 wrote startInMs/endInMs/inMs and
// startOutMs/endOutMs/outMs for H2D and D2H. Keys are matched without regard to case, and any key
// may be missing.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/spec.hpp"

namespace inferbench::trtexec {

// One IterationRecord per object, times in ns. start_ns = origin_ns + the start of H2D (else of
// enqueue, else of compute). e2e: endToEndMs, else endD2h - startH2d, else latencyMs (H2D + compute
// + D2H), else compute alone; an object with none of these is skipped. Durations prefer the printed
// intervals (h2dMs, computeMs, d2hMs) over differences of timestamps, because trtexec prints six
// significant digits: a timestamp beyond 10 s is rounded to 0.1 ms, an interval is not.
// Throws std::runtime_error, with the byte offset, for text that is not such an array.
std::vector<IterationRecord> parse_trtexec_times(std::string_view json, std::int64_t origin_ns);

}  // namespace inferbench::trtexec
