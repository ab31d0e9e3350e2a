#include "report/table.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/units.hpp"

namespace inferbench::report {
namespace {

// Human text for terminals and Markdown; `machine` gives CSV's plain numbers instead.
std::string cell_text(const Cell& cell, const Column& column, bool machine = false) {
    if (std::holds_alternative<Null>(cell)) return "";
    if (const auto* duration = std::get_if<Duration>(&cell))
        return machine ? fmt::format("{:.6f}", duration->ns / 1e6) : format_latency(duration->ns);
    if (const auto* text = std::get_if<std::string>(&cell)) return *text;
    if (const auto* annotated = std::get_if<Annotated>(&cell))
        return machine ? fmt::format("{:.{}f}", annotated->value, column.decimals) : annotated->text;
    if (const auto* integer = std::get_if<std::int64_t>(&cell)) return std::to_string(*integer);
    if (const auto* flag = std::get_if<bool>(&cell)) return *flag ? "yes" : "no";
    const double value = std::get<double>(cell);
    if (!std::isfinite(value)) return "";
    return fmt::format("{:.{}f}", value, column.decimals);
}

bool is_numeric(const Cell& cell) {
    return std::holds_alternative<std::int64_t>(cell) || std::holds_alternative<double>(cell) ||
           std::holds_alternative<Duration>(cell) || std::holds_alternative<Annotated>(cell);
}

// Terminals and Markdown leave out the machine-only columns.
Table shown_columns(const Table& table) {
    if (std::none_of(table.columns.begin(), table.columns.end(), [](const Column& c) { return c.machine_only; }))
        return table;
    Table shown{table.name, {}, std::vector<std::vector<Cell>>(table.rows.size())};
    for (std::size_t c = 0; c < table.columns.size(); ++c) {
        if (table.columns[c].machine_only) continue;
        shown.columns.push_back(table.columns[c]);
        for (std::size_t r = 0; r < table.rows.size(); ++r) shown.rows[r].push_back(table.rows[r][c]);
    }
    return shown;
}

std::string render_text(const Table& table, bool markdown) {
    const std::size_t n = table.columns.size();
    std::vector<std::size_t> widths(n);
    std::vector<std::vector<std::string>> texts;
    for (std::size_t c = 0; c < n; ++c) widths[c] = table.columns[c].title.size();
    for (const auto& row : table.rows) {
        auto& line = texts.emplace_back();
        for (std::size_t c = 0; c < n; ++c) {
            line.push_back(cell_text(row[c], table.columns[c]));
            if (markdown) {
                std::string escaped;
                for (char ch : line.back()) {
                    if (ch == '|') escaped += '\\';
                    escaped += ch;
                }
                line.back() = escaped;
            }
            widths[c] = std::max(widths[c], line.back().size());
        }
    }
    const std::string sep = markdown ? " | " : "  ";
    const auto emit = [&](const std::vector<std::string>& cells, const std::vector<bool>& right) {
        std::string out = markdown ? "| " : "";
        for (std::size_t c = 0; c < n; ++c) {
            if (c) out += sep;
            const bool last_plain = !markdown && c + 1 == n;
            out += right[c] ? fmt::format("{:>{}}", cells[c], widths[c])
                            : (last_plain ? cells[c] : fmt::format("{:<{}}", cells[c], widths[c]));
        }
        out += markdown ? " |\n" : "\n";
        return out;
    };
    std::vector<bool> right(n, false);
    for (std::size_t c = 0; c < n; ++c) {
        right[c] = std::any_of(table.rows.begin(), table.rows.end(), [&](const auto& row) { return is_numeric(row[c]); });
    }
    std::vector<std::string> titles;
    for (const auto& column : table.columns) titles.push_back(column.title);
    std::string out = emit(titles, std::vector<bool>(n, false));
    std::vector<std::string> rule;
    for (std::size_t c = 0; c < n; ++c) {
        std::string dashes(widths[c], '-');
        if (markdown && right[c]) dashes.back() = ':';
        rule.push_back(dashes);
    }
    out += emit(rule, std::vector<bool>(n, false));
    for (const auto& line : texts) out += emit(line, right);
    return out;
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

std::string render_csv(const Table& table) {
    std::string out;
    for (std::size_t c = 0; c < table.columns.size(); ++c) {
        if (c) out += ',';
        out += csv_field(table.columns[c].key);
    }
    out += "\n";
    for (const auto& row : table.rows) {
        for (std::size_t c = 0; c < table.columns.size(); ++c) {
            if (c) out += ',';
            const std::string text = cell_text(row[c], table.columns[c], true);
            out += csv_field(std::holds_alternative<std::string>(row[c]) ? spreadsheet_text(text) : text);
        }
        out += "\n";
    }
    return out;
}

std::string render_json(const Table& table) {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const auto& row : table.rows) {
        nlohmann::ordered_json object = nlohmann::ordered_json::object();
        for (std::size_t c = 0; c < table.columns.size(); ++c) {
            const Cell& cell = row[c];
            auto& slot = object[table.columns[c].key];
            if (const auto* text = std::get_if<std::string>(&cell)) slot = *text;
            else if (const auto* integer = std::get_if<std::int64_t>(&cell)) slot = *integer;
            else if (const auto* real = std::get_if<double>(&cell); real && std::isfinite(*real)) slot = *real;
            else if (const auto* duration = std::get_if<Duration>(&cell)) slot = duration->ns / 1e6;
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
    return doc.dump(2) + "\n";
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

std::string render(const Table& table, Format format) {
    switch (format) {
        case Format::text: return render_text(shown_columns(table), false);
        case Format::markdown: return render_text(shown_columns(table), true);
        case Format::csv: return render_csv(table);
        case Format::json: return render_json(table);
    }
    return {};
}

}  // namespace inferbench::report
