#include "backends/options.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/text_checks.hpp"
#include "core/units.hpp"

namespace inferbench {

BackendOption device_resident_option() {
    return {"device_resident", "false",
            "inputs and outputs stay on the GPU: no host copies per iteration, so H2D and D2H are not measured and "
            "the end-to-end time is the compute (cuda only)",
            OptionType::flag};
}

BackendOption cuda_graph_option() {
    return {"cuda_graph", "false",
            "capture one inference in a CUDA graph and replay the graph each iteration; where a model cannot be "
            "captured the cell fails, except on torch-aoti, which runs it without a graph and says so (cuda only)",
            OptionType::flag};
}

BackendOption threads_option() {
    return {"threads", "0", "CPU intra-op threads; 0: one per logical core", OptionType::count};
}

std::optional<std::string> cuda_only_options_problem(const BenchmarkSpec& spec, bool cuda_graph, bool device_resident) {
    if (spec.device.kind == DeviceKind::cpu && (cuda_graph || device_resident))
        return "cuda_graph and device_resident need a cuda device";
    return std::nullopt;
}

OptionReader::OptionReader(std::string backend, const OptionMap& options, std::vector<BackendOption> known)
    : backend_(std::move(backend)), options_(options), known_(std::move(known)) {
    for (const auto& [key, value] : options_) {
        const bool is_known =
            std::any_of(known_.begin(), known_.end(), [&](const BackendOption& o) { return o.name == key; });
        if (is_known) continue;
        std::vector<std::string> names;
        for (const auto& o : known_) names.push_back(o.name);
        throw UserError(
            fmt::format("unknown {} option '{}'{}; valid options: {} (`inferbench list backends "
                        "--options` says what each does)",
                        backend_, key, did_you_mean(key, names), names.empty() ? "none" : join(names, ", ")));
    }
}

const BackendOption& OptionReader::declared(std::string_view name) const {
    for (const auto& o : known_) {
        if (o.name == name) return o;
    }
    throw std::logic_error(fmt::format("backend {} reads option '{}' it does not declare", backend_, name));
}

std::string OptionReader::text(std::string_view name) const {
    const BackendOption& option = declared(name);
    const auto it = options_.find(name);
    return it == options_.end() ? option.default_value : it->second;
}

void OptionReader::reject(std::string_view name, std::string_view value, std::string_view valid) const {
    throw UserError(fmt::format("{} option {}: '{}' is not valid (use {})", backend_, name, value, valid));
}

bool OptionReader::flag(std::string_view name) const {
    const std::string value = text(name);
    if (value == "true" || value == "yes" || value == "on" || value == "1") return true;
    if (value == "false" || value == "no" || value == "off" || value == "0") return false;
    reject(name, value, "true|false");
}

std::int64_t OptionReader::count(std::string_view name) const {
    const std::string value = text(name);
    const auto parsed = parse_int(value);
    if (!parsed || *parsed < 0) reject(name, value, "a whole number >= 0");
    return *parsed;
}

std::int64_t OptionReader::count(std::string_view name, std::int64_t max) const {
    const std::string value = text(name);
    const auto parsed = parse_int(value);
    if (!parsed || *parsed < 0 || *parsed > max) reject(name, value, fmt::format("a whole number 0..{}", max));
    return *parsed;
}

std::size_t OptionReader::choice_index(std::string_view name, std::span<const std::string_view> valid) const {
    const std::string value = text(name);
    const auto it = std::find(valid.begin(), valid.end(), value);
    if (it != valid.end()) return static_cast<std::size_t>(it - valid.begin());
    std::string names;
    for (auto v : valid) names += fmt::format("{}{}", names.empty() ? "" : "|", v);
    reject(name, value, names);
}

std::string OptionReader::choice(std::string_view name, std::initializer_list<std::string_view> valid) const {
    const std::span<const std::string_view> names(valid.begin(), valid.size());
    return std::string(names[choice_index(name, names)]);
}

std::vector<std::string> OptionReader::list(std::string_view name, std::size_t min_items) const {
    const std::string value = text(name);
    std::vector<std::string> items;
    if (!trim(value).empty()) items = split_list(value);
    const bool has_empty = std::any_of(items.begin(), items.end(), [](const std::string& i) { return i.empty(); });
    if (has_empty || items.size() < min_items) {
        reject(name, value,
               min_items == 0 ? std::string("a comma-separated list without empty items")
                              : fmt::format("a comma-separated list of {} or more items, none empty", min_items));
    }
    return items;
}

}  // namespace inferbench
