// A table of typed cells that every printer renders without knowing what it holds: aligned text for
// terminals, Markdown, CSV and JSON (with a schema version). The one width policy of every command
// lives here: a terminal table fits the terminal (terminal_width()) by, in this order, saying a column
// whose value is the same in every row once above the table, wrapping text, moving notes below the
// table, leaving out the least important columns (named under the table), and, when the columns that
// may not go still do not fit, continuing the table below with the row-naming columns repeated.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace inferbench::report {

enum class Format { text, markdown, csv, json };

// "table"/"text", "md"/"markdown", "csv", "json"; throws UserError otherwise.
Format parse_format(std::string_view name);

// How a terminal table that is too wide makes room for a column.
enum class Fit {
    keep,      // shown whole
    wrap,      // its text wraps onto more lines
    footnote,  // its texts move below the table, numbered, identical ones once
};

struct Column {
    std::string key;    // JSON/CSV name, with its unit: "mean_ms"
    std::string title;  // terminal/Markdown heading: "mean ms"
    int decimals = 2;   // for real numbers on terminals and in Markdown (CSV and JSON keep full precision)
    Fit fit = Fit::keep;
    // 0: always on a terminal (a headline figure); otherwise left out when the terminal is too narrow,
    // highest first.
    int shed = 0;
    // Context for files (run id, host, settings, every statistic): in Markdown, CSV and JSON; on a
    // terminal only when --columns names it.
    bool export_only = false;
    // Terminals and Markdown show real numbers times this, in the unit the title names (J in the key,
    // mJ in the title: 1000); CSV and JSON give the value as the key says.
    double shown_scale = 1.0;
    // In CSV and JSON only (on a terminal or in Markdown when --columns names it): a plain number that
    // terminals and Markdown already say in another cell's text (an Annotated ">=" figure's bound).
    bool machine_only = false;
    // Names what a row measured (model, batch, options, id): where its values differ it tells rows
    // apart, so it is never left out, and it heads every part of a table continued below.
    bool identity = false;
    // What the column means, where a reader may need it (TTFT: from when to when): the HTML page shows it when
    // the heading is hovered or focused; the other formats leave it out.
    std::string hint = {};
};

// The kinds of column the tables are made of: a name that tells rows apart (never left out; wraps where `fit`
// says), a figure a narrow terminal leaves out at `rank` (highest first), a column for files only.
Column identity_column(const char* key, const char* title, Fit fit = Fit::keep);
Column shed_column(const char* key, const char* title, int decimals, int rank);
Column file_column(const char* key, const char* title, int decimals = 2);

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

// 2: columns without a value in any row are left out; CSV and JSON numbers at full precision.
inline constexpr int kJsonSchemaVersion = 2;

// The width a table fitted for a terminal gets when its output is not a terminal.
inline constexpr std::size_t kPipedWidth = 100;

struct RenderOptions {
    // Column keys to show, in this order (--columns); "all" is every column, never left out for width.
    // Empty: every column (on a terminal, those not export_only). An unknown key throws UserError.
    std::vector<std::string> columns;
    std::size_t width = 0;    // text: fit into this many characters; 0: no limit
    bool hide_empty = true;   // leave out columns without a value in any row (every format)
};

std::string render(const Table& table, Format format, const RenderOptions& options = {});

// The table as its JSON output holds it ({schema_version, table, rows}; render(Format::json) writes this value),
// for a JSON document that holds a table beside other values: the value itself, never its text read back.
nlohmann::ordered_json table_json(const Table& table, const RenderOptions& options = {});

// The width of the terminal behind `fd`: COLUMNS when set to a number, else the terminal's own
// (TIOCGWINSZ), else kPipedWidth.
std::size_t terminal_width(int fd);

// Characters a terminal shows for UTF-8 text (code points; every one counted as one column).
std::size_t display_width(std::string_view text);

// `text` wrapped at spaces into lines of at most `width` columns, each ending in a newline; text that
// fits is kept as it is.
std::string wrap_paragraph(const std::string& text, std::size_t width);

// `text` cut to `width` terminal columns, "..." marking the cut.
std::string fit_line(std::string_view text, std::size_t width);

// `table` without the columns that have no value in any row (as every printer leaves them out), for
// pages that draw a Table themselves: a CPU run's overview has no power or energy column.
Table without_empty_columns(Table table);

// `table` as a page shows it: without the columns for files only (Column::export_only: intervals, bytes per step,
// ...; the workbooks have them all) and without empty columns.
Table page_columns(const Table& table);

// Each column's definition (Column::hint) as (titles, definition), columns with the same definition together
// ("TTFT p50, TTFT p99"), appended to `definitions`: a page's Definitions list.
void add_column_definitions(std::vector<std::pair<std::string, std::string>>& definitions, const Table& table);

// One cell as terminals and Markdown show it ("23.41 ms", "42.1"); empty for Null and non-finite numbers.
std::string cell_display_text(const Cell& cell, const Column& column);

}  // namespace inferbench::report
