#include "report/selection.hpp"

#include <algorithm>
#include <initializer_list>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "analysis/default_run.hpp"
#include "core/error.hpp"
#include "core/fnv1a.hpp"
#include "core/units.hpp"

namespace inferbench::report {
namespace {

// "1-3, 7": run ids for messages.
std::string id_ranges(std::vector<std::int64_t> ids) {
    std::sort(ids.begin(), ids.end());
    std::vector<std::string> parts;
    for (std::size_t i = 0; i < ids.size();) {
        std::size_t j = i;
        while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
        parts.push_back(j == i ? std::to_string(ids[i]) : fmt::format("{}-{}", ids[i], ids[j]));
        i = j + 1;
    }
    return join(parts, ", ");
}

constexpr std::size_t kMaxKey = 160;

std::vector<std::int64_t> selected_runs(const store::ResultsStore& results, const std::string& spec) {
    const auto runs = results.runs();
    if (runs.empty())
        throw UserError(fmt::format("{}: no runs stored yet; run `inferbench run` first", results.path().string()));
    std::vector<std::int64_t> known;
    for (const auto& run : runs) known.push_back(run.run_id);
    if (spec == "all") return known;
    if (spec == "latest" || spec.empty()) {
        const auto choice = analysis::default_run(results);
        if (!choice.note.empty()) fmt::print(stderr, "inferbench: {}\n", choice.note);
        return {choice.run_id};
    }
    std::vector<std::int64_t> ids;
    for (const auto& item : split_list(spec)) {
        const auto id = parse_int(item);
        if (!id)
            throw UserError(
                fmt::format("--run {}: '{}' is not a run id; give ids (e.g. 3 or 3,5), 'latest' or 'all'", spec, item));
        if (std::find(known.begin(), known.end(), *id) == known.end())
            throw UserError(
                fmt::format("--run {}: {} has no run {}; it has runs {} (`inferbench summary --runs` "
                            "lists them)",
                            spec, results.path().string(), *id, id_ranges(known)));
        if (std::find(ids.begin(), ids.end(), *id) == ids.end()) ids.push_back(*id);
    }
    return ids;
}

std::string scope_text(const std::vector<std::int64_t>& runs, std::size_t stored_runs) {
    if (runs.size() == 1) return fmt::format("run {}", runs.front());
    if (runs.size() == stored_runs) return "any run";
    return fmt::format("runs {}", id_ranges(runs));
}

template <typename T, typename Field>
void check_values(const std::vector<T>& wanted, const std::vector<store::BenchmarkRecord>& pool, Field field,
                  std::string_view flag, const std::string& where) {
    std::set<T> present;
    for (const auto& b : pool) present.insert(b.*field);
    for (const auto& value : wanted) {
        if (present.contains(value)) continue;
        std::vector<std::string> have;
        for (const auto& p : present) have.push_back(fmt::format("{}", p));
        throw UserError(fmt::format("{} {}: not found in {}; it has: {}", flag, value, where, join(have, ", ")));
    }
}

template <typename T>
bool admits(const std::vector<T>& wanted, const T& value) {
    return wanted.empty() || std::find(wanted.begin(), wanted.end(), value) != wanted.end();
}

std::string joined_nonempty(std::initializer_list<std::string_view> parts, std::string_view separator) {
    std::vector<std::string> present;
    for (const auto part : parts)
        if (!part.empty()) present.emplace_back(part);
    return join(present, separator);
}

}  // namespace

std::string bounded_file_part(const std::string& part) {
    if (part.size() <= kMaxKey) return part;
    return fmt::format("{}-{:08x}", part.substr(0, kMaxKey - 9), fnv1a64(part) & 0xffffffffU);
}

std::string sanitize_file_part(std::string_view text) {
    std::string out;
    for (const char c : text) {
        const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                          c == '_' || c == '-' || c == '+' || c == '=';
        out += keep ? c : '_';
    }
    return out.empty() ? "_" : out;
}

std::vector<store::BenchmarkRecord> select_benchmarks(const store::ResultsStore& results, const ReportFilter& filter) {
    const auto runs = selected_runs(results, filter.runs);
    const std::size_t stored_runs = results.runs().size();
    std::vector<store::BenchmarkRecord> pool;
    if (runs.size() == stored_runs) {
        pool = results.benchmarks();
    } else {
        for (const auto id : runs) {
            auto some = results.benchmarks(id);
            pool.insert(pool.end(), some.begin(), some.end());
        }
    }
    const std::string where = fmt::format("{} of {}", scope_text(runs, stored_runs), results.path().string());
    if (pool.empty())
        throw UserError(
            fmt::format("{} has no benchmarks; pick a run with --run (`inferbench summary --runs` lists them)", where));
    check_values(filter.devices, pool, &store::BenchmarkRecord::device, "--device", where);
    check_values(filter.models, pool, &store::BenchmarkRecord::model, "--model", where);
    check_values(filter.backends, pool, &store::BenchmarkRecord::backend, "--backend", where);
    check_values(filter.precisions, pool, &store::BenchmarkRecord::precision, "--precision", where);
    check_values(filter.batch_sizes, pool, &store::BenchmarkRecord::batch_size, "--batch", where);
    std::vector<store::BenchmarkRecord> selected;
    for (auto& b : pool) {
        if (admits(filter.devices, b.device) && admits(filter.models, b.model) && admits(filter.backends, b.backend) &&
            admits(filter.precisions, b.precision) && admits(filter.batch_sizes, b.batch_size))
            selected.push_back(std::move(b));
    }
    if (selected.empty())
        throw UserError(fmt::format("no benchmark of {} matches all the filters together; drop one of them", where));
    return selected;
}

std::vector<BenchmarkGroup> group_benchmarks(const std::vector<store::BenchmarkRecord>& benchmarks) {
    std::set<std::int64_t> runs;
    for (const auto& b : benchmarks) runs.insert(b.run_id);
    const bool several_runs = runs.size() > 1;
    using Identity = std::tuple<std::int64_t, std::string, std::string, std::string, std::string, std::string>;
    std::map<Identity, std::size_t> index;
    std::vector<BenchmarkGroup> groups;
    std::set<std::string> keys;
    for (const auto& b : benchmarks) {
        const Identity identity{several_runs ? b.run_id : 0, b.device, b.model, b.backend, b.precision, b.variant};
        auto [it, added] = index.try_emplace(identity, groups.size());
        if (added) {
            BenchmarkGroup group;
            const std::string run_part = several_runs ? fmt::format("run{}-", b.run_id) : "";
            const std::string run_title = several_runs ? fmt::format(", run {}", b.run_id) : "";
            const std::string family = run_part + sanitize_file_part(b.device) + "-" + sanitize_file_part(b.model);
            group.family_key = bounded_file_part(family);
            group.family_title = fmt::format("{} on {}{}", b.model, b.device, run_title);
            // An imported log has no precision (nor variant): an empty field is left out, not shown blank.
            group.series_title = joined_nonempty({b.backend, b.precision, b.variant}, " ");
            std::string key = bounded_file_part(family + "-" + sanitize_file_part(b.backend) +
                                                (b.precision.empty() ? "" : "-" + sanitize_file_part(b.precision)) +
                                                (b.variant.empty() ? "" : "-" + sanitize_file_part(b.variant)));
            // Different texts may sanitize alike ("cuda:0", "cuda_0"); file names must stay apart.
            const std::string base = key;
            for (int n = 2; keys.contains(key); ++n) key = fmt::format("{}-{}", base, n);
            keys.insert(key);
            group.key = key;
            group.title = joined_nonempty({b.model, b.backend, b.precision, b.device}, " / ") +
                          (b.variant.empty() ? "" : " (" + b.variant + ")") + run_title;
            groups.push_back(std::move(group));
        }
        groups[it->second].benchmarks.push_back(b);
    }
    for (auto& group : groups) {
        std::stable_sort(group.benchmarks.begin(), group.benchmarks.end(),
                         [](const auto& a, const auto& b) { return a.batch_size < b.batch_size; });
        std::map<std::string, int> seen;
        for (const auto& b : group.benchmarks) {
            // A generative benchmark's lengths are axes like its batch size: they name it too.
            const std::string base = b.input_tokens > 0
                                         ? fmt::format("batch {} in {} out {}", b.batch_size, b.input_tokens, b.output_tokens)
                                         : fmt::format("batch {}", b.batch_size);
            const int n = ++seen[base];
            if (n == 1) group.labels.push_back(base);
            else if (b.repeat > 0) group.labels.push_back(fmt::format("{} repeat {}", base, b.repeat + 1));
            else group.labels.push_back(fmt::format("{} #{}", base, n));
        }
    }
    return groups;
}

}  // namespace inferbench::report
