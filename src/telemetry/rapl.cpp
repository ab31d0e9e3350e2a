#include "telemetry/rapl.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "core/units.hpp"

namespace inferbench::telemetry {
namespace {

std::optional<std::uint64_t> parse_counter(std::string_view text) {
    text = trim(text);
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

std::string first_line(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

// "intel-rapl:0" is a package (or psys) domain; "intel-rapl:0:1" one of its parts.
bool is_top_level_domain(const std::string& name) {
    return name.starts_with("intel-rapl:") && std::count(name.begin(), name.end(), ':') == 1;
}

}  // namespace

RaplReader::RaplReader(const std::filesystem::path& powercap_root) {
    std::vector<std::filesystem::path> dirs;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(powercap_root, ec), end; !ec && it != end; it.increment(ec))
        if (is_top_level_domain(it->path().filename().string())) dirs.push_back(it->path());
    std::sort(dirs.begin(), dirs.end());
    for (const auto& dir : dirs) {
        Domain domain{first_line(dir / "name"), procfs::CachedFile(dir / "energy_uj")};
        if (!domain.name.starts_with("package")) continue;  // psys covers more than the packages
        if (!domain.energy.is_open()) {
            why_not_ = fmt::format("{}: {}{}", (dir / "energy_uj").string(), std::strerror(domain.energy.open_errno()),
                                   domain.energy.open_errno() == EACCES ? " (readable by root only since Linux 5.10)" : "");
            domains_.clear();
            return;
        }
        const auto range = parse_counter(first_line(dir / "max_energy_range_uj"));
        const auto content = domain.energy.read();
        const auto now = content ? parse_counter(*content) : std::nullopt;
        if (!range || !now) {
            why_not_ = fmt::format("{}: unreadable energy counter or range", dir.string());
            domains_.clear();
            return;
        }
        domain.range_uj = *range;
        domain.last_uj = *now;
        domains_.push_back(std::move(domain));
    }
    if (domains_.empty() && why_not_.empty())
        why_not_ = fmt::format("no RAPL package domain under {}", powercap_root.string());
}

std::string RaplReader::describe() const {
    std::vector<std::string> names;
    for (const auto& domain : domains_) names.push_back(domain.name);
    return join(names, ", ");
}

std::optional<double> RaplReader::read_joules() {
    std::optional<double> total;
    for (auto& domain : domains_) {
        const auto content = domain.energy.read();
        const auto now = content ? parse_counter(*content) : std::nullopt;
        if (now) {
            // The counter wraps to 0 after max_energy_range_uj; at most one wrap between readings.
            const std::uint64_t delta = *now >= domain.last_uj ? *now - domain.last_uj : domain.range_uj - domain.last_uj + *now;
            domain.total_j += static_cast<double>(delta) / 1e6;
            domain.last_uj = *now;
        }
        total = total.value_or(0.0) + domain.total_j;
    }
    return total;
}

}  // namespace inferbench::telemetry
