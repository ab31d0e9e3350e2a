// The progress line of a long plan: benchmark k of n, elapsed time, ETA.
#pragma once

#include <cstdio>

#include "runner/orchestrator/orchestrator.hpp"

namespace inferbench::cli {

class ProgressPrinter {
public:
    // Live, rewritten line on a terminal; one line per finished benchmark otherwise.
    explicit ProgressPrinter(std::FILE* out);
    void operator()(const runner::ProgressEvent& event);

private:
    std::FILE* out_;
    bool live_;
};

}  // namespace inferbench::cli
