// How a comparison's sides are made and named: one per (source, host, device, device name), a later run's figures
// where one host's device measured a cell in several runs, labels told apart, the baseline found, the legend.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/run_context.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "report/comparison.hpp"
#include "report/pipeline_comparison.hpp"

namespace inferbench::report {
namespace {

std::string lower(std::string_view text) {
    std::string out(text);
    for (auto& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return out;
}

std::string json_string(const nlohmann::json& object, const char* key) {
    if (!object.is_object() || !object.contains(key) || !object[key].is_string()) return "";
    return object[key].get<std::string>();
}

bool measured(const analysis::BenchmarkSummary& s) {
    return s.benchmark.status == BenchmarkStatus::ok && s.e2e.count > 0;
}

// Generative cells of other lengths are other rows; so are pipeline cells (report/pipeline_comparison sets each
// beside the network-only row of its setup).
ComparisonKey key_of(const analysis::BenchmarkSummary& s) {
    const auto& b = s.benchmark;
    std::string variant = b.variant;
    if (analysis::is_generative(b))
        variant += fmt::format("{}input_tokens={} output_tokens={}", variant.empty() ? "" : " ", b.input_tokens,
                               b.output_tokens);
    if (s.pipeline) variant = with_pipeline(variant, *s.pipeline);
    return {b.model, b.backend, variant, b.precision, b.batch_size};
}

std::string host_of(const store::RunRecord& run) {
    if (!run.host.empty()) return run.host;
    return json_string(nlohmann::json::parse(run.environment_json, nullptr, false), "host");
}

// The run of a source that a summary comes from; a source of one run holds that run's summaries alone.
const store::RunRecord& run_of(const ComparisonSource& source, const analysis::BenchmarkSummary& s) {
    static const store::RunRecord kNone;
    if (source.runs.size() == 1) return source.runs.front();
    for (const auto& run : source.runs)
        if (run.run_id == s.benchmark.run_id) return run;
    return kNone;
}

// The id of the run a summary comes from.
std::int64_t run_id_of(const ComparisonSource& source, const analysis::BenchmarkSummary& s) {
    const auto id = run_of(source, s).run_id;
    return id != 0 ? id : s.benchmark.run_id;
}

std::string run_list(const std::vector<std::int64_t>& ids) {
    std::vector<std::string> items;
    for (const auto id : ids) items.push_back(std::to_string(id));
    return fmt::format("run{} {}", ids.size() == 1 ? "" : "s", join(items, ", "));
}

// What tells a side from alike ones of other sources: its runs where another source reads the same database
// (two runs of one store), else the database's place on the command line.
std::string source_tag(const Comparison& comparison, const ComparisonSide& side) {
    const auto& sources = comparison.sources;
    const auto same_db = std::count_if(sources.begin(), sources.end(),
                                       [&](const ComparisonSource& s) { return s.db == sources[side.source].db; });
    return same_db > 1 ? run_list(side.run_ids) : fmt::format("db {}", side.source + 1);
}

void make_labels_unique(Comparison& comparison) {
    const auto alike = [](const std::vector<ComparisonSide>& sides, const ComparisonSide& side, bool other_source) {
        return std::count_if(sides.begin(), sides.end(), [&](const ComparisonSide& o) {
                   return o.label == side.label && (!other_source || o.source != side.source);
               }) > (other_source ? 0 : 1);
    };
    // GPU names say nothing of the machine: the host tells alike GPUs of several machines apart.
    std::vector<ComparisonSide> before = comparison.sides;
    for (auto& side : comparison.sides) {
        if (alike(before, side, false) && !side.host.empty() && side.label.find(" @ ") == std::string::npos)
            side.label += " @ " + side.host;
    }
    // Still alike: the same kind of device in several databases or runs, then several alike devices of one host.
    before = comparison.sides;
    for (auto& side : comparison.sides)
        if (alike(before, side, true)) side.label += fmt::format(" ({})", source_tag(comparison, side));
    before = comparison.sides;
    for (auto& side : comparison.sides)
        if (alike(before, side, false)) side.label += " " + side.device;
}

std::string side_list(const Comparison& comparison) {
    std::vector<std::string> items;
    for (std::size_t i = 0; i < comparison.sides.size(); ++i)
        items.push_back(fmt::format("[{}] {} ({})", i + 1, comparison.sides[i].label, comparison.sides[i].device));
    return join(items, ", ");
}

std::size_t find_baseline(const Comparison& comparison, const std::string& baseline) {
    if (baseline.empty()) return 0;
    if (const auto index = parse_int(baseline)) {
        if (*index < 1 || static_cast<std::size_t>(*index) > comparison.sources.size())
            throw UserError(
                fmt::format("--baseline {}: there are {} compared databases or runs; give 1 to {}, or a device",
                            baseline, comparison.sources.size(), comparison.sources.size()));
        for (std::size_t i = 0; i < comparison.sides.size(); ++i)
            if (comparison.sides[i].source == static_cast<std::size_t>(*index - 1)) return i;
        throw UserError(fmt::format("--baseline {}: {} has no benchmark with status ok to compare against", baseline,
                                    comparison.sources[static_cast<std::size_t>(*index - 1)].db));
    }
    const std::string wanted = lower(baseline);
    std::vector<std::size_t> exact, partial;
    for (std::size_t i = 0; i < comparison.sides.size(); ++i) {
        const auto& side = comparison.sides[i];
        if (lower(side.device) == wanted || lower(side.label) == wanted)
            exact.push_back(i);
        else if (lower(side.label).find(wanted) != std::string::npos ||
                 lower(side.host).find(wanted) != std::string::npos)
            partial.push_back(i);  // part of its name, or of its host's (a fleet's columns)
    }
    const auto& matches = exact.empty() ? partial : exact;
    if (matches.size() == 1) return matches.front();
    throw UserError(fmt::format("--baseline {}: {} side; give a database index (1, 2, ...) or one of: {}", baseline,
                                matches.empty() ? "matches no" : "matches more than one", side_list(comparison)));
}

}  // namespace

const store::RunRecord& Comparison::run_of(std::size_t side) const {
    static const store::RunRecord kNone;
    const auto& s = sides.at(side);
    const auto& runs = sources[s.source].runs;
    if (runs.size() == 1) return runs.front();
    for (const auto& run : runs)
        if (!s.run_ids.empty() && run.run_id == s.run_ids.back()) return run;
    return kNone;
}

bool Comparison::spans_hosts_or_gpus() const {
    std::set<std::string> hosts;
    std::size_t gpus = 0;
    for (const auto& side : sides) {
        hosts.insert(side.host);
        gpus += side.device.starts_with("cuda");
    }
    return hosts.size() > 1 || gpus > 1;
}

std::string device_label(const store::RunRecord& run, const analysis::BenchmarkSummary& benchmark) {
    const auto& b = benchmark.benchmark;
    const std::string name = analysis::device_name(nlohmann::json::parse(run.environment_json, nullptr, false), b);
    if (b.device.starts_with("cuda") && name != b.device) return name;  // a GPU's name
    const std::string host = host_of(run);
    return host.empty() ? name : fmt::format("{} @ {}", name, host);
}

namespace {

// The GPU driver's version a run recorded for the benchmark's device; empty for a CPU or where not recorded.
std::string driver_of(const nlohmann::json& environment, const store::BenchmarkRecord& b) {
    const auto device = parse_device(b.device);
    if (!device || device->kind != DeviceKind::cuda) return "";
    const auto facts = analysis::gpu_facts(environment);
    const auto it = facts.find(device->index);
    return it == facts.end() ? "" : it->second.driver_version;
}

ComparisonSide new_side(std::size_t source, const store::RunRecord& run, const analysis::BenchmarkSummary& s,
                        std::string host, std::string name) {
    const auto environment = nlohmann::json::parse(run.environment_json, nullptr, false);
    return {.source = source,
            .device = s.benchmark.device,
            .label = device_label(run, s),
            .host = std::move(host),
            .name = std::move(name),
            .driver = driver_of(environment, s.benchmark),
            .run_ids = {},
            .frameworks = {},
            .superseded = 0};
}

template <typename T>
void add_once(std::vector<T>& list, const T& value) {
    if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
}

std::string framework_of(const store::BenchmarkRecord& b) {
    return b.backend_version.empty() ? b.backend + " (version not recorded)" : b.backend + " " + b.backend_version;
}

// Where a run stands among its source's runs (oldest first): a later run's figures replace an earlier one's.
std::size_t run_position(const ComparisonSource& source, std::int64_t run_id) {
    for (std::size_t i = 0; i < source.runs.size(); ++i)
        if (source.runs[i].run_id == run_id) return i;
    return 0;
}

// The sides and rows of one source's measured summaries.
void add_source(Comparison& comparison, std::size_t source, std::map<ComparisonKey, std::size_t>& row_index) {
    using SideKey = std::tuple<std::string, std::string, std::string>;  // host, device, device name
    std::map<SideKey, std::size_t> side_index;
    const auto& src = comparison.sources[source];
    for (std::size_t i = 0; i < src.summaries.size(); ++i) {
        const auto& s = src.summaries[i];
        if (!measured(s)) continue;
        const auto& run = run_of(src, s);
        std::string host = host_of(run);
        std::string name =
            analysis::device_name(nlohmann::json::parse(run.environment_json, nullptr, false), s.benchmark);
        auto [side, added] = side_index.try_emplace({host, s.benchmark.device, name}, comparison.sides.size());
        if (added) comparison.sides.push_back(new_side(source, run, s, std::move(host), std::move(name)));
        auto& facts = comparison.sides[side->second];
        add_once(facts.run_ids, run_id_of(src, s));
        add_once(facts.frameworks, framework_of(s.benchmark));
        auto [row, new_row] = row_index.try_emplace(key_of(s), comparison.rows.size());
        if (new_row) comparison.rows.push_back({key_of(s), {}});
        auto& cells = comparison.rows[row->second].cells;
        if (cells.size() <= side->second) cells.resize(side->second + 1);
        auto& cell = cells[side->second];
        if (!cell) {
            cell = i;
        } else if (run_position(src, s.benchmark.run_id) > run_position(src, src.summaries[*cell].benchmark.run_id)) {
            cell = i;  // measured again in a later run: the later figures
            ++facts.superseded;
        }  // measured twice in one run: the first
    }
}

}  // namespace

Comparison build_comparison(std::vector<ComparisonSource> sources, const std::string& baseline) {
    Comparison comparison;
    comparison.sources = std::move(sources);
    std::map<ComparisonKey, std::size_t> row_index;
    for (std::size_t source = 0; source < comparison.sources.size(); ++source)
        add_source(comparison, source, row_index);
    if (comparison.sides.empty()) {
        std::vector<std::string> dbs;
        for (const auto& source : comparison.sources) dbs.push_back(source.db);
        throw UserError(fmt::format("nothing to compare: no benchmark with status ok among the selected ones of {}",
                                    join(dbs, ", ")));
    }
    for (auto& row : comparison.rows) row.cells.resize(comparison.sides.size());
    std::sort(comparison.rows.begin(), comparison.rows.end(),
              [](const ComparisonRow& a, const ComparisonRow& b) { return a.key < b.key; });
    make_labels_unique(comparison);
    comparison.baseline = find_baseline(comparison, baseline);
    return comparison;
}

std::int64_t Comparison::run_id(const ComparisonRow& row, std::size_t side) const {
    const auto* s = at(row, side);
    return s ? run_id_of(sources[sides[side].source], *s) : 0;
}

namespace {

// "on node-a, driver 550.54.15, torch 2.3.0": where a side's figures come from, as far as its runs recorded it.
std::string side_facts(const ComparisonSide& side) {
    std::vector<std::string> parts;
    if (!side.host.empty()) parts.push_back("on " + side.host);
    if (side.device.starts_with("cuda"))
        parts.push_back(side.driver.empty() ? "driver not recorded" : "driver " + side.driver);
    parts.insert(parts.end(), side.frameworks.begin(), side.frameworks.end());
    return join(parts, ", ");
}

}  // namespace

std::vector<std::string> comparison_legend(const Comparison& comparison) {
    std::vector<std::string> lines;
    for (std::size_t i = 0; i < comparison.sides.size(); ++i) {
        const auto& side = comparison.sides[i];
        const std::string facts = side_facts(side);
        lines.push_back(fmt::format("[{}] {} ({}): {} {}{}{}", i + 1, side.label, side.device,
                                    comparison.sources[side.source].db, run_list(side.run_ids),
                                    facts.empty() ? "" : " " + facts, i == comparison.baseline ? ", baseline" : ""));
    }
    return lines;
}

Table comparison_sides_table(const Comparison& comparison) {
    Table table;
    table.name = "comparison_sides";
    table.columns = {{"side", "side"},
                     {"device_label", "device label"},
                     {"device", "device"},
                     {"host", "host"},
                     {"device_name", "device name"},
                     {"driver_version", "driver"},
                     {"frameworks", "frameworks"},
                     {"db", "db"},
                     {"run_ids", "runs"},
                     {"baseline", "baseline"}};
    for (std::size_t i = 0; i < comparison.sides.size(); ++i) {
        const auto& side = comparison.sides[i];
        std::vector<std::string> runs;
        for (const auto id : side.run_ids) runs.push_back(std::to_string(id));
        const auto text = [](const std::string& value) { return value.empty() ? Cell{Null{}} : Cell{value}; };
        table.rows.push_back({static_cast<std::int64_t>(i + 1), side.label, side.device, text(side.host),
                              text(side.name), text(side.driver), join(side.frameworks, ", "),
                              comparison.sources[side.source].db, join(runs, ","), i == comparison.baseline});
    }
    return table;
}

}  // namespace inferbench::report
