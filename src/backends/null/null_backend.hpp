// The null backend does nothing, so a benchmark of it measures the harness's own overhead per
// iteration (as MLPerf LoadGen's null system under test does).
#pragma once

#include <memory>

#include "backends/backend.hpp"

namespace inferbench {

std::unique_ptr<Backend> make_null_backend();

}  // namespace inferbench
