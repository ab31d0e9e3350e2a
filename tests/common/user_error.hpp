// The one line a UserError says, for tests of bad input: "(no error)" where nothing was thrown.
#pragma once

#include <string>

#include "core/error.hpp"

namespace inferbench::testing {

template <typename F>
std::string user_error(F&& f) {
    try {
        f();
    } catch (const UserError& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace inferbench::testing
