// nvidia-smi --query-gpu: the field list and command of the sampler's fallback, its lines, and whole
// CSV logs (with or without header, with or without units).
#include <algorithm>
#include <cctype>
#include <map>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/units.hpp"
#include "telemetry/nvidia_smi.hpp"
#include "telemetry/nvidia_smi_detail.hpp"

namespace inferbench::telemetry {
namespace {

enum class Column {
    index,
    timestamp,
    name,
    identity,
    driver_version,
    power_draw,
    power_instant,
    power_average,
    power_limit,
    enforced_power_limit,
    temperature,
    memory_temperature,
    sm_clock,
    memory_clock,
    graphics_clock,
    gpu_util,
    memory_util,
    fb_used,
    fb_total,
    pstate,
    reasons
};

struct KnownField {
    std::string_view name;
    Column column;
    std::string_view unit;  // as nvidia-smi prints it after a value
};

// Every --query-gpu field inferbench reads, under each of the names nvidia-smi accepts or prints.
constexpr KnownField kKnownFields[] = {
    {"index", Column::index, ""},
    {"timestamp", Column::timestamp, ""},
    {"name", Column::name, ""},
    {"gpu_name", Column::name, ""},
    {"uuid", Column::identity, ""},
    {"gpu_uuid", Column::identity, ""},
    {"pci.bus_id", Column::identity, ""},
    {"gpu_bus_id", Column::identity, ""},
    {"driver_version", Column::driver_version, ""},
    {"power.draw", Column::power_draw, "W"},
    {"power.draw.instant", Column::power_instant, "W"},
    {"power.draw.average", Column::power_average, "W"},
    {"power.limit", Column::power_limit, "W"},
    {"enforced.power.limit", Column::enforced_power_limit, "W"},
    {"temperature.gpu", Column::temperature, "C"},
    {"temperature.memory", Column::memory_temperature, "C"},
    {"clocks.current.sm", Column::sm_clock, "MHz"},
    {"clocks.sm", Column::sm_clock, "MHz"},
    {"clocks.current.memory", Column::memory_clock, "MHz"},
    {"clocks.mem", Column::memory_clock, "MHz"},
    {"clocks.current.graphics", Column::graphics_clock, "MHz"},
    {"clocks.gr", Column::graphics_clock, "MHz"},
    {"utilization.gpu", Column::gpu_util, "%"},
    {"utilization.memory", Column::memory_util, "%"},
    {"memory.used", Column::fb_used, "MiB"},
    {"memory.total", Column::fb_total, "MiB"},
    {"pstate", Column::pstate, ""},
    {"clocks_event_reasons.active", Column::reasons, ""},
    {"clocks_throttle_reasons.active", Column::reasons, ""},
};

bool is_metric(Column column) {
    return column != Column::index && column != Column::timestamp && column != Column::name &&
           column != Column::identity && column != Column::driver_version;
}

// "power.draw [W]" -> "power.draw".
std::string_view field_name(std::string_view header) {
    header = trim(header);
    if (const auto bracket = header.find(" ["); bracket != std::string_view::npos && header.back() == ']')
        header = trim(header.substr(0, bracket));
    return header;
}

const KnownField* known_field(std::string_view header) {
    const std::string name = detail::lowercase(field_name(header));
    for (const KnownField& field : kKnownFields)
        if (field.name == name) return &field;
    return nullptr;
}

// nullptr for a field inferbench does not read (its cells are skipped).
std::vector<const KnownField*> resolve(const std::vector<std::string>& fields) {
    std::vector<const KnownField*> columns;
    for (const auto& field : fields) columns.push_back(known_field(field));
    return columns;
}

std::vector<std::string_view> split_cells(std::string_view line) {
    std::vector<std::string_view> cells;
    while (true) {
        const std::size_t comma = line.find(',');
        cells.push_back(trim(line.substr(0, comma)));
        if (comma == std::string_view::npos) break;
        line.remove_prefix(comma + 1);
    }
    return cells;
}

// A header names fields: "timestamp, name, power.draw [W]", and at least one that inferbench knows.
bool is_header(const std::vector<std::string_view>& cells) {
    bool known = false;
    for (const auto cell : cells) {
        const std::string_view name = field_name(cell);
        if (name.empty() || std::isalpha(static_cast<unsigned char>(name.front())) == 0) return false;
        for (const char c : name)
            if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_' && c != '.') return false;
        known = known || known_field(name) != nullptr;
    }
    return known;
}

struct Row {
    GpuSample sample;
    bool has_index = false;
    std::optional<std::int64_t> unix_ms;
    std::string_view name, identity, driver_version;
};

// Sets `why` and returns false when the cell cannot be a reading of its field.
bool read_cell(std::string_view cell, const KnownField& field, Row& row, std::optional<double>& power_draw,
               std::optional<double>& power_limit, std::string& why) {
    GpuSample& s = row.sample;
    switch (field.column) {
        case Column::index: {
            const auto index = parse_int(cell);
            if (!index || *index < 0 || *index > 1023) break;
            s.gpu_index = static_cast<int>(*index);
            row.has_index = true;
            return true;
        }
        case Column::timestamp:
            row.unix_ms = detail::parse_query_timestamp(cell);
            if (!row.unix_ms) break;
            return true;
        case Column::name:
            row.name = cell;
            return true;
        case Column::identity:
            row.identity = cell;
            return true;
        case Column::driver_version:
            row.driver_version = cell;
            return true;
        case Column::reasons:
            if (detail::is_missing(cell)) return true;
            s.clock_event_reasons = detail::parse_hex_mask(cell);
            if (!s.clock_event_reasons) break;
            return true;
        case Column::pstate: {
            const auto reading = detail::parse_pstate(cell);
            if (reading.malformed) break;
            if (reading.value) s.pstate = static_cast<int>(*reading.value);
            return true;
        }
        default: {
            const auto reading = detail::parse_reading(cell, field.unit);
            if (reading.malformed) break;
            std::optional<double>* target = nullptr;
            switch (field.column) {
                case Column::power_draw:
                    target = &power_draw;
                    break;
                case Column::power_instant:
                    target = &s.power_w;
                    break;
                case Column::power_average:
                    target = &s.power_avg_w;
                    break;
                case Column::power_limit:
                    target = &power_limit;
                    break;
                case Column::enforced_power_limit:
                    target = &s.power_limit_w;
                    break;
                case Column::temperature:
                    target = &s.temperature_c;
                    break;
                case Column::memory_temperature:
                    target = &s.memory_temperature_c;
                    break;
                case Column::sm_clock:
                    target = &s.sm_clock_mhz;
                    break;
                case Column::memory_clock:
                    target = &s.memory_clock_mhz;
                    break;
                case Column::graphics_clock:
                    target = &s.graphics_clock_mhz;
                    break;
                case Column::gpu_util:
                    target = &s.gpu_util_pct;
                    break;
                case Column::memory_util:
                    target = &s.memory_util_pct;
                    break;
                case Column::fb_used:
                    target = &s.fb_used_mib;
                    break;
                case Column::fb_total:
                    target = &s.fb_total_mib;
                    break;
                default:
                    break;
            }
            if (target) *target = reading.value;
            return true;
        }
    }
    why = fmt::format("'{}' is not a reading of {}", cell, field.name);
    return false;
}

std::optional<Row> parse_row(std::string_view line, const std::vector<const KnownField*>& columns, std::string& why) {
    const auto cells = split_cells(line);
    if (cells.size() != columns.size()) {
        why = fmt::format("{} column{}, expected {}", cells.size(), cells.size() == 1 ? "" : "s", columns.size());
        return std::nullopt;
    }
    Row row;
    // power.draw and power.limit stand in where the log lacks power.draw.instant and enforced.power.limit.
    std::optional<double> power_draw, power_limit;
    for (std::size_t i = 0; i < cells.size(); ++i)
        if (columns[i] && !read_cell(cells[i], *columns[i], row, power_draw, power_limit, why)) return std::nullopt;
    if (!row.sample.power_w) row.sample.power_w = power_draw;
    if (!row.sample.power_limit_w) row.sample.power_limit_w = power_limit;
    return row;
}

const std::vector<std::string>& default_or(const std::vector<std::string>& fields) {
    return fields.empty() ? nvidia_smi_query_fields() : fields;
}

// Without an index column, GPUs are told apart by uuid or bus id, numbered in order of appearance.
int gpu_index_of(const Row& row, std::map<std::string, int, std::less<>>& identities) {
    if (row.has_index) return row.sample.gpu_index;
    if (row.identity.empty()) return 0;
    const auto [it, added] = identities.try_emplace(std::string(row.identity), static_cast<int>(identities.size()));
    return it->second;
}

}  // namespace

const std::vector<std::string>& nvidia_smi_query_fields() {
    static const std::vector<std::string> fields = {"index",
                                                    "power.draw.instant",
                                                    "power.draw.average",
                                                    "enforced.power.limit",
                                                    "temperature.gpu",
                                                    "temperature.memory",
                                                    "clocks.sm",
                                                    "clocks.mem",
                                                    "clocks.gr",
                                                    "utilization.gpu",
                                                    "utilization.memory",
                                                    "memory.used",
                                                    "memory.total",
                                                    "pstate",
                                                    "clocks_event_reasons.active"};
    return fields;
}

std::vector<std::string> nvidia_smi_supported_query_fields(std::string_view help_query_gpu_text) {
    static const std::map<std::string, std::string, std::less<>> kOlderNames = {
        {"power.draw.instant", "power.draw"},
        {"clocks_event_reasons.active", "clocks_throttle_reasons.active"},
        {"enforced.power.limit", "power.limit"}};
    const auto listed = [&](std::string_view name) {
        return help_query_gpu_text.find(fmt::format("\"{}\"", name)) != std::string_view::npos;
    };
    std::vector<std::string> fields;
    for (const auto& field : nvidia_smi_query_fields()) {
        if (listed(field)) {
            fields.push_back(field);
        } else if (const auto older = kOlderNames.find(field); older != kOlderNames.end() && listed(older->second)) {
            fields.push_back(older->second);
        }
    }
    return fields;
}

std::vector<std::string> nvidia_smi_query_command(int period_ms, std::optional<int> gpu_index) {
    return nvidia_smi_query_command(period_ms, gpu_index, nvidia_smi_query_fields());
}

std::vector<std::string> nvidia_smi_query_command(int period_ms, std::optional<int> gpu_index,
                                                  const std::vector<std::string>& fields) {
    if (period_ms < 1)
        throw std::invalid_argument(fmt::format("nvidia-smi -lms period {} ms: must be >= 1", period_ms));
    std::vector<std::string> argv = {"nvidia-smi", "--query-gpu=" + join(fields, ","), "--format=csv,noheader,nounits",
                                     "-lms", std::to_string(period_ms)};
    if (gpu_index) {
        argv.emplace_back("-i");
        argv.push_back(std::to_string(*gpu_index));
    }
    return argv;
}

std::optional<GpuSample> parse_nvidia_smi_query_line(std::string_view line, const std::vector<std::string>& fields) {
    std::string why;
    auto row = parse_row(line, resolve(fields), why);
    if (!row) return std::nullopt;
    return row->sample;
}

namespace detail {

bool looks_like_query_csv(std::string_view first_line, const std::vector<std::string>& headerless_fields) {
    const auto cells = split_cells(first_line);
    return is_header(cells) || (cells.size() > 1 && cells.size() == default_or(headerless_fields).size());
}

NvidiaSmiLog parse_query_csv_log(std::string_view text, std::string_view file,
                                 const std::vector<std::string>& headerless_fields) {
    NvidiaSmiLog log;
    log.format = "query-csv";
    std::vector<const KnownField*> columns;
    std::vector<std::optional<std::int64_t>> stamps;
    std::map<std::string, int, std::less<>> identities;
    for (const auto& [number, line] : split_lines(text)) {
        if (trim(line).empty()) continue;
        const auto cells = split_cells(line);
        // A header opens the file, and again wherever logs were concatenated.
        if (is_header(cells)) {
            std::vector<std::string> names(cells.begin(), cells.end());
            columns = resolve(names);
            if (std::none_of(columns.begin(), columns.end(), [](auto* c) { return c && is_metric(c->column); })) {
                throw UserError(
                    fmt::format("{}: line {}: none of the columns ({}) is a GPU reading inferbench keeps "
                                "(e.g. power.draw, clocks.sm, utilization.gpu, memory.used)",
                                file, number, trim(line)));
            }
            continue;
        }
        if (columns.empty()) columns = resolve(default_or(headerless_fields));
        std::string why;
        const auto row = parse_row(line, columns, why);
        if (!row) {
            log.warnings.push_back(fmt::format("line {}: {}; skipped", number, why));
            continue;
        }
        GpuSample sample = row->sample;
        sample.gpu_index = gpu_index_of(*row, identities);
        note_gpu_name(log, sample.gpu_index, row->name);
        if (log.driver_version.empty() && !is_missing(row->driver_version)) log.driver_version = row->driver_version;
        log.samples.push_back(sample);
        stamps.push_back(row->unix_ms);
    }
    assign_times(log, stamps, true);
    return log;
}

}  // namespace detail
}  // namespace inferbench::telemetry
