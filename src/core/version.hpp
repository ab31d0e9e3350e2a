// Build facts, compiled in from CMake (see cmake/version_info.cmake).
#pragma once

#include <string_view>

namespace inferbench {

extern const std::string_view kVersion;
extern const std::string_view kGitCommit;
extern const std::string_view kBuildType;
extern const std::string_view kCompiler;

}  // namespace inferbench
