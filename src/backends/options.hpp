// Reads a backend's options (the plan's `backend_options.<backend>:` map) against the list the
// backend declares, so that defaults live in one place (that list) and every backend reports an
// unknown option or a bad value with the same one-line UserError.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backends/backend.hpp"

namespace inferbench {

// Options that mean the same in every backend that takes them, declared here once with one help text.
BackendOption device_resident_option();  // flag: inputs and outputs stay on the GPU, no H2D or D2H
BackendOption cuda_graph_option();       // flag: one inference captured in a CUDA graph, replayed per iteration
BackendOption threads_option();          // count: the CPU's intra-op threads, 0 for one per logical core

// Why `spec` cannot take cuda_graph or device_resident (both need a cuda device), or nothing.
std::optional<std::string> cuda_only_options_problem(const BenchmarkSpec& spec, bool cuda_graph, bool device_resident);

class OptionReader {
public:
    // Throws UserError for a key not in `known`.
    OptionReader(std::string backend, const OptionMap& options, std::vector<BackendOption> known);

    std::string text(std::string_view name) const;
    bool flag(std::string_view name) const;                             // true/false, yes/no, on/off, 1/0
    std::int64_t count(std::string_view name) const;                    // a whole number >= 0
    std::int64_t count(std::string_view name, std::int64_t max) const;  // a whole number 0..max
    std::string choice(std::string_view name, std::initializer_list<std::string_view> valid) const;

    // A choice that maps each name to a value (e.g. an SDK enum): one table holds both.
    template <typename T, std::size_t N>
    T choice(std::string_view name, const std::pair<std::string_view, T> (&valid)[N]) const {
        std::array<std::string_view, N> names;
        for (std::size_t i = 0; i < N; ++i) names[i] = valid[i].first;
        return valid[choice_index(name, names)].second;
    }

    // "a, b,c" -> {a, b, c}, trimmed; blank text -> {}. An empty item ("a,,b") or fewer than
    // `min_items` items is a bad value.
    std::vector<std::string> list(std::string_view name, std::size_t min_items = 0) const;

    // For a check only the backend knows (an item of a list, a cross-option rule): the same
    // one-line UserError as the accessors give.
    [[noreturn]] void reject(std::string_view name, std::string_view value, std::string_view valid) const;

private:
    const BackendOption& declared(std::string_view name) const;
    std::size_t choice_index(std::string_view name, std::span<const std::string_view> valid) const;

    std::string backend_;
    const OptionMap& options_;
    std::vector<BackendOption> known_;
};

}  // namespace inferbench
