#include "report/findings_table.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace inferbench::report {

Table findings_table(std::span<const findings::Finding> found) {
    Table table;
    table.name = "findings";
    table.columns = {{.key = "severity", .title = "severity"},
                     {.key = "id", .title = "finding"},
                     {.key = "benchmarks", .title = "benchmarks", .fit = Fit::wrap},
                     {.key = "statement", .title = "statement", .fit = Fit::wrap},
                     {.key = "evidence", .title = "evidence", .fit = Fit::footnote, .shed = 2},
                     {.key = "try", .title = "try", .fit = Fit::footnote, .shed = 1}};
    for (const auto& f : found)
        table.rows.push_back({std::string(findings::to_string(f.severity)), f.id,
                              fmt::format("{}", fmt::join(f.benchmarks, ",")), f.statement,
                              findings::describe(f.evidence), f.try_next});
    return table;
}

}  // namespace inferbench::report
