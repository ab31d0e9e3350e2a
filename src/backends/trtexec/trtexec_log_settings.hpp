// The lines of a trtexec log that say how it ran rather than what it measured: the printed settings, the
// options trtexec refused, the performance summary's header and TensorRT 11's tuning loop. Part of
// trtexec_log's parser, kept apart so that each file reads one kind of line.
#pragma once

#include <string_view>

#include "backends/trtexec/trtexec_log.hpp"

namespace inferbench::trtexec::detail {

// Reads one line's message (its "[I]" or "[E]" tag as `severity`, 0 without one) into `log`; false when
// the line is none of these.
bool read_setting_line(std::string_view message, char severity, TrtexecLog& log);

}  // namespace inferbench::trtexec::detail
