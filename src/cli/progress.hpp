// The progress line of a long plan: benchmark k of n, elapsed time, ETA. Under parallel: per_device one bracket
// per device, each with its benchmark k of n: [cuda:0 3/10 resnet50 ...] [cuda:1 2/10 ...].
#pragma once

#include <cstdio>
#include <map>
#include <string>

#include "runner/orchestrator/orchestrator.hpp"

namespace inferbench::cli {

class ProgressPrinter {
public:
    // Live, rewritten line on a terminal; one line per finished benchmark otherwise.
    explicit ProgressPrinter(std::FILE* out);
    void operator()(const runner::ProgressEvent& event);

private:
    void lanes_event(const runner::ProgressEvent& event);

    std::FILE* out_;
    bool live_;
    std::map<std::string, std::string> lanes_;  // device -> what its lane is doing, per_device only
};

}  // namespace inferbench::cli
