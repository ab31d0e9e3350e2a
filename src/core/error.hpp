// Errors that reach the user: one line saying what is wrong, where, and how to fix it.
#pragma once

#include <stdexcept>
#include <string>

namespace inferbench {

// Bad input from the user (plan, command line, file): exit code 2, nothing run.
class UserError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The environment cannot do what was asked (missing library, unreadable database): exit code 1.
class EnvironmentError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitNothingRan = 3;  // a run in which every benchmark was skipped
inline constexpr int kExitNotStored = 4;  // the results store could not take what was measured
inline constexpr int kExitRegression = 5;  // `compare --fail-on-regression`: a pair is slower by more than allowed
inline constexpr int kExitInterrupted = 130;

}  // namespace inferbench
