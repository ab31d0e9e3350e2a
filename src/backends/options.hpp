// Reads a backend's options (the plan's `backend_options.<backend>:` map) against the list the
// backend declares, so that defaults live in one place (that list) and every backend reports an
// unknown option or a bad value with the same one-line UserError.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.hpp"

namespace inferbench {

class OptionReader {
public:
    // Throws UserError for a key not in `known`.
    OptionReader(std::string backend, const OptionMap& options, std::vector<BackendOption> known);

    std::string text(std::string_view name) const;
    bool flag(std::string_view name) const;             // true/false, yes/no, on/off, 1/0
    std::int64_t count(std::string_view name) const;    // a whole number >= 0
    std::string choice(std::string_view name, std::initializer_list<std::string_view> valid) const;

private:
    const BackendOption& declared(std::string_view name) const;
    [[noreturn]] void bad_value(std::string_view name, std::string_view value, std::string_view valid) const;

    std::string backend_;
    const OptionMap& options_;
    std::vector<BackendOption> known_;
};

}  // namespace inferbench
