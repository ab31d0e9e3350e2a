#include "report/findings_section.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/findings_table.hpp"

namespace inferbench::report {
namespace {

// A summary line names the benchmarks up to this many, else counts them.
constexpr std::size_t kNamedBenchmarks = 8;

struct RuleFindings {
    std::string id;
    findings::Severity severity = findings::Severity::info;  // the most severe of its findings
    std::vector<findings::Finding> found;
};

// The findings by rule, the most severe rules first, else in the order they came.
std::vector<RuleFindings> by_rule(std::span<const findings::Finding> found) {
    std::vector<RuleFindings> rules;
    for (const auto& f : found) {
        auto rule = std::find_if(rules.begin(), rules.end(), [&](const RuleFindings& r) { return r.id == f.id; });
        if (rule == rules.end())
            rule = rules.insert(rules.end(), RuleFindings{.id = f.id, .severity = f.severity, .found = {}});
        rule->severity = std::max(rule->severity, f.severity);
        rule->found.push_back(f);
    }
    std::stable_sort(rules.begin(), rules.end(),
                     [](const RuleFindings& a, const RuleFindings& b) { return a.severity > b.severity; });
    return rules;
}

// "problem · throttling.power_cap: 3 findings, benchmarks 1, 2, 5"
std::string summary_line(const RuleFindings& rule) {
    std::set<std::int64_t> benchmarks;
    for (const auto& f : rule.found) benchmarks.insert(f.benchmarks.begin(), f.benchmarks.end());
    const std::string where =
        benchmarks.size() <= kNamedBenchmarks
            ? fmt::format("benchmark{} {}", benchmarks.size() == 1 ? "" : "s", fmt::join(benchmarks, ", "))
            : fmt::format("{} benchmarks", benchmarks.size());
    return fmt::format("{} · {}: {} finding{}, {}", findings::to_string(rule.severity), rule.id, rule.found.size(),
                       rule.found.size() == 1 ? "" : "s", where);
}

}  // namespace

void findings_section(HtmlPage& page, std::span<const findings::Finding> found) {
    page.open_section("Findings", "findings");
    if (found.empty()) {
        page.paragraph("None: no rule found throttling, a bound, an anomaly or instability in the selected results.",
                       "muted");
    } else {
        page.paragraph(
            "What the stored data shows, one line per rule, problems first: open a line for its findings, "
            "each with its benchmarks (ids as in the overview), its evidence and what to try. "
            "`inferbench explain` prints the same.",
            "hint");
        for (const auto& rule : by_rule(found)) {
            page.open_details(summary_line(rule));
            page.table(findings_table(rule.found));
            page.close_details();
        }
    }
    page.close_section();
}

std::vector<findings::Finding> findings_of(std::span<const findings::Finding> found,
                                           std::span<const std::int64_t> benchmark_ids) {
    std::vector<findings::Finding> out;
    for (const auto& f : found)
        if (std::any_of(f.benchmarks.begin(), f.benchmarks.end(), [&](std::int64_t id) {
                return std::find(benchmark_ids.begin(), benchmark_ids.end(), id) != benchmark_ids.end();
            }))
            out.push_back(f);
    return out;
}

void write_findings_sheet(XlsxWorkbook& book, std::span<const findings::Finding> found) {
    if (found.empty()) return;
    const Table table = findings_table(found);
    XlsxWorkbook::Sheet sheet = book.add_sheet("Findings");
    std::vector<XlsxWorkbook::Column> header;
    for (const auto& column : table.columns) header.emplace_back(column.key);
    sheet.header(header);
    for (std::size_t r = 0; r < table.rows.size(); ++r)
        for (std::size_t c = 0; c < table.columns.size(); ++c)
            sheet.text(static_cast<XlsxWorkbook::Row>(r + 1), static_cast<XlsxWorkbook::Col>(c),
                       cell_display_text(table.rows[r][c], table.columns[c]));
}

}  // namespace inferbench::report
