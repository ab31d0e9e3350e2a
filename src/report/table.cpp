#include "report/table.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/text_checks.hpp"
#include "core/time_units.hpp"
#include "core/units.hpp"
#include "report/table_text.hpp"

namespace inferbench::report {
namespace {

// Decimals shown of a human number: the column's, but no more than keep it to kShownDigits significant digits, so
// that a large figure (the null backend's 105025468.7 inferences/s) shows no noise digits and stays as wide as its
// integer part.
constexpr int kShownDigits = 7;

int shown_decimals(double value, int decimals) {
    const double magnitude = std::abs(value);
    // A figure that is not zero never shows as 0 (a tiny model's 0.004% of a GPU's bound): two significant digits
    // where the column's decimals would round it away.
    if (magnitude > 0 && magnitude < 0.5 * std::pow(10.0, -decimals))
        return static_cast<int>(std::ceil(-std::log10(magnitude))) + 1;
    if (magnitude < 1) return decimals;
    const int integer_digits = static_cast<int>(std::floor(std::log10(magnitude))) + 1;
    return std::clamp(kShownDigits - integer_digits, 0, decimals);
}

// Human text for terminals and Markdown; `machine` gives CSV's plain numbers at full precision
// (the shortest text that reads back as the same double) and its text as stored instead.
std::string cell_text(const Cell& cell, const Column& column, bool machine = false) {
    if (std::holds_alternative<Null>(cell)) return "";
    if (const auto* duration = std::get_if<Duration>(&cell))
        return machine ? fmt::format("{}", ns_to_ms(duration->ns)) : format_latency(duration->ns);
    // Stored names may hold control characters: a terminal would act on them rather than show them.
    if (const auto* text = std::get_if<std::string>(&cell)) return machine ? *text : printable_text(*text);
    if (const auto* annotated = std::get_if<Annotated>(&cell))
        return machine ? fmt::format("{}", annotated->value) : annotated->text;
    if (const auto* integer = std::get_if<std::int64_t>(&cell)) return std::to_string(*integer);
    if (const auto* flag = std::get_if<bool>(&cell)) return *flag ? "yes" : "no";
    const double value = std::get<double>(cell);
    if (!std::isfinite(value)) return "";
    if (machine) return fmt::format("{}", value);
    const double shown = value * column.shown_scale;
    return fmt::format("{:.{}f}", shown, shown_decimals(shown, column.decimals));
}

bool is_numeric(const Cell& cell) {
    return std::holds_alternative<std::int64_t>(cell) || std::holds_alternative<double>(cell) ||
           std::holds_alternative<Duration>(cell) || std::holds_alternative<Annotated>(cell);
}

bool column_empty(const Table& table, std::size_t c) {
    return std::all_of(table.rows.begin(), table.rows.end(),
                       [&](const auto& row) { return cell_text(row[c], table.columns[c]).empty(); });
}

std::vector<std::string> valid_keys(const Table& table) {
    std::vector<std::string> keys;
    for (const auto& column : table.columns) keys.push_back(column.key);
    keys.emplace_back("all");
    return keys;
}

// The columns shown, in order: those --columns names (as asked, even when empty), else every column
// with a value (on a terminal, not the export-only ones, and on a terminal and in Markdown not the
// machine-only ones, unless --columns all).
std::vector<std::size_t> chosen_columns(const Table& table, Format format, const RenderOptions& options) {
    const bool all = options.columns.size() == 1 && options.columns.front() == "all";
    std::vector<std::size_t> chosen;
    if (!options.columns.empty() && !all) {
        for (const auto& key : options.columns) {
            const auto it = std::find_if(table.columns.begin(), table.columns.end(),
                                         [&](const Column& column) { return column.key == key; });
            if (it == table.columns.end())
                throw UserError(fmt::format("--columns {}: the {} table has no such column; valid names: {}", key,
                                            table.name, join(valid_keys(table), ", ")));
            chosen.push_back(static_cast<std::size_t>(it - table.columns.begin()));
        }
        return chosen;
    }
    for (std::size_t c = 0; c < table.columns.size(); ++c) {
        const Column& column = table.columns[c];
        const bool human = format == Format::text || format == Format::markdown;
        if (!all && ((format == Format::text && column.export_only) || (human && column.machine_only))) continue;
        if (options.hide_empty && column_empty(table, c)) continue;
        chosen.push_back(c);
    }
    return chosen;
}

std::string markdown_escaped(const std::string& text) {
    std::string escaped;
    for (char ch : text) {
        if (ch == '|') escaped += '\\';
        escaped += ch == '\n' ? ' ' : ch;
    }
    return escaped;
}

std::string render_text(const Table& table, const std::vector<std::size_t>& chosen, bool markdown,
                        std::size_t width, bool may_shed) {
    detail::TextGrid grid;
    for (const auto c : chosen) {
        grid.columns.push_back(&table.columns[c]);
        grid.titles.push_back(table.columns[c].title);
        grid.right.push_back(
            std::any_of(table.rows.begin(), table.rows.end(), [&](const auto& row) { return is_numeric(row[c]); }));
    }
    for (const auto& row : table.rows) {
        auto& line = grid.cells.emplace_back();
        for (const auto c : chosen) {
            const std::string text = cell_text(row[c], table.columns[c]);
            line.push_back(markdown ? markdown_escaped(text) : text);
        }
    }
    return detail::render_grid(std::move(grid), markdown, width, may_shed);
}

std::string csv_field(const std::string& text) {
    if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
    std::string out = "\"";
    for (char ch : text) {
        if (ch == '"') out += '"';
        out += ch;
    }
    out += '"';
    return out;
}

// A text cell that a spreadsheet would run as a formula (first character = + - @, TAB or CR, as
// OWASP's CSV-injection guidance lists them) gets a leading apostrophe: spreadsheets then show it as
// text. Text that is all one number ("-1.5") cannot be a formula and stays as written.
std::string spreadsheet_text(const std::string& text) {
    if (text.empty() || std::string_view("=+-@\t\r").find(text.front()) == std::string_view::npos ||
        parse_double(text))
        return text;
    return "'" + text;
}

std::string render_csv(const Table& table, const std::vector<std::size_t>& chosen) {
    std::string out;
    for (std::size_t i = 0; i < chosen.size(); ++i) {
        if (i) out += ',';
        out += csv_field(table.columns[chosen[i]].key);
    }
    out += "\n";
    for (const auto& row : table.rows) {
        for (std::size_t i = 0; i < chosen.size(); ++i) {
            if (i) out += ',';
            const Cell& cell = row[chosen[i]];
            const std::string text = cell_text(cell, table.columns[chosen[i]], true);
            out += csv_field(std::holds_alternative<std::string>(cell) ? spreadsheet_text(text) : text);
        }
        out += "\n";
    }
    return out;
}

nlohmann::ordered_json json_document(const Table& table, const std::vector<std::size_t>& chosen) {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const auto& row : table.rows) {
        nlohmann::ordered_json object = nlohmann::ordered_json::object();
        for (const auto c : chosen) {
            const Cell& cell = row[c];
            auto& slot = object[table.columns[c].key];
            if (const auto* text = std::get_if<std::string>(&cell)) slot = *text;
            else if (const auto* integer = std::get_if<std::int64_t>(&cell)) slot = *integer;
            else if (const auto* real = std::get_if<double>(&cell); real && std::isfinite(*real)) slot = *real;
            else if (const auto* duration = std::get_if<Duration>(&cell)) slot = ns_to_ms(duration->ns);
            else if (const auto* flag = std::get_if<bool>(&cell)) slot = *flag;
            else if (const auto* annotated = std::get_if<Annotated>(&cell); annotated && std::isfinite(annotated->value))
                slot = annotated->value;
            else slot = nullptr;
        }
        rows.push_back(std::move(object));
    }
    nlohmann::ordered_json doc;
    doc["schema_version"] = kJsonSchemaVersion;
    doc["table"] = table.name;
    doc["rows"] = std::move(rows);
    return doc;
}

}  // namespace

Format parse_format(std::string_view name) {
    if (name == "table" || name == "text") return Format::text;
    if (name == "md" || name == "markdown") return Format::markdown;
    if (name == "csv") return Format::csv;
    if (name == "json") return Format::json;
    throw UserError(fmt::format("--format {}: unknown format; valid choices: table, md, csv, json", name));
}

std::string cell_display_text(const Cell& cell, const Column& column) { return cell_text(cell, column); }

Column identity_column(const char* key, const char* title, Fit fit) {
    return Column{.key = key, .title = title, .fit = fit, .identity = true};
}

Column shed_column(const char* key, const char* title, int decimals, int rank) {
    return Column{key, title, decimals, Fit::keep, rank};
}

Column file_column(const char* key, const char* title, int decimals) {
    return Column{key, title, decimals, Fit::keep, 0, true};
}

Table without_empty_columns(Table table) {
    for (std::size_t c = table.columns.size(); c-- > 0;) {
        if (!column_empty(table, c)) continue;
        table.columns.erase(table.columns.begin() + static_cast<std::ptrdiff_t>(c));
        for (auto& row : table.rows) row.erase(row.begin() + static_cast<std::ptrdiff_t>(c));
    }
    return table;
}

Table page_columns(const Table& table) {
    Table shown;
    shown.name = table.name;
    std::vector<std::size_t> kept;
    for (std::size_t c = 0; c < table.columns.size(); ++c)
        if (!table.columns[c].export_only) kept.push_back(c);
    for (const auto c : kept) shown.columns.push_back(table.columns[c]);
    for (const auto& row : table.rows) {
        auto& cells = shown.rows.emplace_back();
        for (const auto c : kept) cells.push_back(row[c]);
    }
    return without_empty_columns(std::move(shown));
}

void add_column_definitions(std::vector<std::pair<std::string, std::string>>& definitions, const Table& table) {
    for (const auto& column : table.columns) {
        if (column.hint.empty()) continue;
        const auto same = std::find_if(definitions.begin(), definitions.end(),
                                       [&](const auto& d) { return d.second == column.hint; });
        if (same == definitions.end()) definitions.emplace_back(column.title, column.hint);
        else if (same->first.find(column.title) == std::string::npos) same->first += ", " + column.title;
    }
}

std::string render(const Table& table, Format format, const RenderOptions& options) {
    const auto chosen = chosen_columns(table, format, options);
    switch (format) {
        case Format::text: return render_text(table, chosen, false, options.width, options.columns.empty());
        case Format::markdown: return render_text(table, chosen, true, 0, false);
        case Format::csv: return render_csv(table, chosen);
        case Format::json: return json_document(table, chosen).dump(2) + "\n";
    }
    return {};
}

nlohmann::ordered_json table_json(const Table& table, const RenderOptions& options) {
    return json_document(table, chosen_columns(table, Format::json, options));
}

std::size_t terminal_width(int fd) {
    if (const char* columns = std::getenv("COLUMNS")) {
        std::size_t width = 0;
        const std::string_view text(columns);
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), width);
        if (error == std::errc() && end == text.data() + text.size() && width > 0) return width;
    }
    winsize size{};
    if (isatty(fd) && ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
    return kPipedWidth;
}

std::size_t display_width(std::string_view text) {
    return static_cast<std::size_t>(
        std::count_if(text.begin(), text.end(), [](char ch) { return (static_cast<unsigned char>(ch) & 0xC0) != 0x80; }));
}

std::string wrap_paragraph(const std::string& text, std::size_t width) {
    if (display_width(text) <= width && text.find('\n') == std::string::npos) return text + "\n";  // spacing kept
    std::string out;
    for (const auto& line : detail::wrap_text(text, width)) out += line + "\n";
    return out;
}

std::string fit_line(std::string_view text, std::size_t width) {
    if (display_width(text) <= width) return std::string(text);
    if (width <= 3) return std::string(width, '.');
    std::string kept;
    std::size_t count = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80 && count++ == width - 3) break;
        kept += text[i];
    }
    return kept + "...";
}

}  // namespace inferbench::report
