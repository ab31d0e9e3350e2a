#include "report/findings_section.hpp"

#include <algorithm>

#include "report/findings_table.hpp"

namespace inferbench::report {

void findings_section(HtmlPage& page, std::span<const findings::Finding> found) {
    page.open_section("Findings", "findings");
    if (found.empty()) {
        page.paragraph("None: no rule found throttling, a bound, an anomaly or instability in the selected results.",
                       "muted");
    } else {
        page.paragraph("What the stored data shows, problems first; each finding names its benchmarks (ids as in "
                       "the overview), its evidence and what to try. `inferbench explain` prints the same.",
                       "hint");
        page.table(findings_table(found));
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
