// What this build of inferbench holds, for `inferbench --version` (written by cmake/build_facts.cmake).
#pragma once

#include <string>

namespace inferbench::cli {

// "inferbench 0.1.0\ncommit ...\nbuild ...\nbackend modules ...\nframeworks ...": one fact a line.
std::string version_text();

}  // namespace inferbench::cli
