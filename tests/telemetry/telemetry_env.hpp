// Environment variables set for one test and restored after it, and scripts for the fake NVML.
#pragma once

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include "common/scratch_dir.hpp"

namespace inferbench::testing {

class ScopedEnv {
public:
    ScopedEnv(std::string name, const std::string& value) : name_(std::move(name)) {
        if (const char* old = std::getenv(name_.c_str())) old_ = old;
        setenv(name_.c_str(), value.c_str(), 1);
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;
    ~ScopedEnv() {
        if (old_) setenv(name_.c_str(), old_->c_str(), 1);
        else unsetenv(name_.c_str());
    }

private:
    std::string name_;
    std::optional<std::string> old_;
};

// FAKE_NVML_SCRIPT pointing at a file with `text`, for as long as this lives.
class FakeNvmlScript {
public:
    explicit FakeNvmlScript(const std::string& text)
        : path_((dir_.path() / "fake_nvml.txt").string()), env_("FAKE_NVML_SCRIPT", path_) {
        std::ofstream(path_) << text;
    }

private:
    ScratchDir dir_;
    std::string path_;
    ScopedEnv env_;
};

}  // namespace inferbench::testing
