// A table of typed cells that every printer renders without knowing what it holds: aligned text for
// terminals, Markdown, CSV and JSON (with a schema version).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace inferbench::report {

enum class Format { text, markdown, csv, json };

// "table"/"text", "md"/"markdown", "csv", "json"; throws UserError otherwise.
Format parse_format(std::string_view name);

struct Column {
    std::string key;    // JSON/CSV name, with its unit: "mean_ms"
    std::string title;  // terminal/Markdown heading: "mean ms"
    int decimals = 2;   // for real numbers in text, Markdown and CSV
    bool machine_only = false;  // CSV and JSON only: what terminals and Markdown say in another cell's text
};

struct Null {};
// A time in nanoseconds: terminals and Markdown show it in a readable unit ("812 ns", "23.41 ms");
// CSV and JSON give milliseconds, so such a column's key ends in _ms.
struct Duration {
    double ns = 0;
};
// A bool is "yes"/"no" on terminals, Markdown and CSV, and true/false in JSON.
// A number that terminals and Markdown show as `text` (">=0.48 (642 nodes unknown)"), CSV and JSON
// as the plain number.
struct Annotated {
    double value = 0;
    std::string text;
};
using Cell = std::variant<Null, std::string, std::int64_t, double, Duration, bool, Annotated>;

struct Table {
    std::string name;  // "summary", "runs", ...
    std::vector<Column> columns;
    std::vector<std::vector<Cell>> rows;
};

inline constexpr int kJsonSchemaVersion = 1;

std::string render(const Table& table, Format format);

// One cell as terminals and Markdown show it ("23.41 ms", "42.1"); empty for Null and non-finite numbers.
std::string cell_display_text(const Cell& cell, const Column& column);

}  // namespace inferbench::report
