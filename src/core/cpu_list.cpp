#include "core/cpu_list.hpp"

#include <sched.h>

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

namespace inferbench {
namespace {

std::optional<int> cpu_number(std::string_view text) {
    int value = -1;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value < 0 || value >= kMaxCpus) return std::nullopt;
    return value;
}

std::string_view trimmed(std::string_view text) {
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
    return text;
}

}  // namespace

std::optional<std::vector<int>> parse_cpu_list(std::string_view text, std::string& why) {
    std::vector<int> cpus;
    if (trimmed(text).empty()) {
        why = "the CPU list is empty; write CPUs and ranges, e.g. 0-7,16-23";
        return std::nullopt;
    }
    std::size_t pos = 0;
    while (pos <= text.size()) {
        const std::size_t comma = std::min(text.find(',', pos), text.size());
        const std::string_view item = trimmed(text.substr(pos, comma - pos));
        pos = comma + 1;
        const std::size_t dash = item.find('-');
        const auto first = cpu_number(item.substr(0, dash));
        const auto last = dash == std::string_view::npos ? first : cpu_number(item.substr(dash + 1));
        if (!first || !last) {
            why = fmt::format("'{}' is not a CPU number (0 to {}) or a range of them like 0-7", item, kMaxCpus - 1);
            return std::nullopt;
        }
        if (*last < *first) {
            why = fmt::format("'{}' is a range whose end is below its start", item);
            return std::nullopt;
        }
        for (int cpu = *first; cpu <= *last; ++cpu) cpus.push_back(cpu);
    }
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    return cpus;
}

std::string format_cpu_list(std::span<const int> cpus) {
    std::string text;
    for (std::size_t i = 0; i < cpus.size();) {
        std::size_t j = i;
        while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
        if (!text.empty()) text += ',';
        text += j == i ? fmt::format("{}", cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
        i = j + 1;
    }
    return text;
}

std::vector<int> allowed_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> cpus;
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
    for (std::size_t cpu = 0; cpu < static_cast<std::size_t>(kMaxCpus); ++cpu)
        if (CPU_ISSET(cpu, &set)) cpus.push_back(static_cast<int>(cpu));
    return cpus;
}

}  // namespace inferbench
