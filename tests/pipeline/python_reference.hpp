// Runs a reference written in Python (NumPy, torch, torchvision of Debian's python3 packages) on text the test
// writes to its standard input, and gives back what it printed; the test is skipped where those are missing.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "core/process/subprocess.hpp"

namespace inferbench::testing {

inline constexpr const char* kSystemPython = "/usr/bin/python3";

// Whether Debian's python3 imports torchvision (python3-torchvision), asked once.
inline bool have_torchvision() {
    static const bool have = [] {
        const auto run = run_captured({kSystemPython, "-I", "-c", "import torchvision, numpy"}, std::nullopt, 60'000);
        return run.status.success();
    }();
    return have;
}

// Whether Debian's python3 imports NumPy (python3-numpy), asked once.
inline bool have_numpy() {
    static const bool have = [] {
        const auto run = run_captured({kSystemPython, "-I", "-c", "import numpy"}, std::nullopt, 60'000);
        return run.status.success();
    }();
    return have;
}

// The script's standard output; a failed run fails the test with its standard error. -I keeps the current folder
// and PYTHON* variables out of the import path.
inline std::string run_python_reference(const std::string& script, const std::string& input) {
    const auto run = run_captured({kSystemPython, "-I", "-c", script}, input, 120'000);
    EXPECT_TRUE(run.status.success()) << run.err;
    return run.out;
}

}  // namespace inferbench::testing

#define SKIP_WITHOUT_TORCHVISION()                             \
    if (!::inferbench::testing::have_torchvision())            \
    GTEST_SKIP() << "needs /usr/bin/python3 with torchvision " \
                    "(python3-torchvision)"

#define SKIP_WITHOUT_NUMPY() \
    if (!::inferbench::testing::have_numpy()) GTEST_SKIP() << "needs /usr/bin/python3 with NumPy (python3-numpy)"
