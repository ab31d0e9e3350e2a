// The options of the trtexec backend (plan: backend_options.trtexec), read through OptionReader.
#pragma once

#include <string>
#include <vector>

#include "backends/backend.hpp"

namespace inferbench::trtexec {

struct TrtexecOptions {
    std::string trtexec;                  // empty: PATH, then /usr/src/tensorrt/bin/trtexec
    std::vector<std::string> extra_args;  // split at spaces; given to both the build and the run
};

std::vector<BackendOption> trtexec_option_list();
TrtexecOptions parse_trtexec_options(const OptionMap& options);  // throws UserError

}  // namespace inferbench::trtexec
