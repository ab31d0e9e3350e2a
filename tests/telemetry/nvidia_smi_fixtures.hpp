// The real nvidia-smi outputs in shared/fixtures/nvidia-smi (an H200, driver 580.159.04), read as text.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

namespace inferbench::telemetry::testing {

inline std::string smi_fixture(const std::string& name) {
    std::ifstream in(std::string(INFERBENCH_FIXTURES_DIR) + "/nvidia-smi/" + name, std::ios::binary);
    EXPECT_TRUE(in) << name;
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace inferbench::telemetry::testing
