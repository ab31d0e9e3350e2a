#include "report/html_page.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/units.hpp"
#include "core/version.hpp"
#include "report/html_assets.hpp"

namespace inferbench::report {
namespace {

// A fresh value per page for the Content-Security-Policy: text planted in the data cannot know it.
std::string make_nonce() {
    std::random_device random;
    std::string nonce;
    for (int i = 0; i < 4; ++i) nonce += fmt::format("{:08x}", random());
    return nonce;
}

// An HTML comment must not contain "--"; the license text never does, but nothing is assumed.
std::string comment_text(std::string_view text) {
    std::string out(text);
    for (std::size_t at = out.find("--"); at != std::string::npos; at = out.find("--", at)) out.replace(at, 2, "- -");
    return out;
}

// The numeric value of a cell for sorting: ns for durations; null for text and empty cells.
nlohmann::json sort_value(const Cell& cell) {
    if (const auto* integer = std::get_if<std::int64_t>(&cell)) return *integer;
    if (const auto* real = std::get_if<double>(&cell); real && std::isfinite(*real)) return *real;
    if (const auto* duration = std::get_if<Duration>(&cell); duration && std::isfinite(duration->ns))
        return duration->ns;
    if (const auto* annotated = std::get_if<Annotated>(&cell); annotated && std::isfinite(annotated->value))
        return annotated->value;
    return nullptr;
}

bool numeric_column(const Table& table, std::size_t c) {
    return std::any_of(table.rows.begin(), table.rows.end(), [&](const auto& row) {
        return !std::holds_alternative<std::string>(row[c]) && !std::holds_alternative<Null>(row[c]);
    });
}

std::string_view chart_type_name(ChartType type) {
    switch (type) {
        case ChartType::line:
            return "line";
        case ChartType::points:
            return "points";
        case ChartType::bars:
            return "bars";
        case ChartType::stacked_bars:
            return "stacked_bars";
    }
    return "line";
}

nlohmann::json values_json(const std::vector<double>& values) {
    nlohmann::json out = nlohmann::json::array();
    for (double v : values) out.push_back(std::isfinite(v) ? nlohmann::json(chart_value(v)) : nlohmann::json(nullptr));
    return out;
}

}  // namespace

std::string html_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char ch : text) {
        switch (ch) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&#39;";
                break;
            default:
                out += ch;
        }
    }
    return out;
}

std::string script_json(const nlohmann::json& value) {
    const std::string json = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    std::string out;
    out.reserve(json.size());
    for (char ch : json) {
        switch (ch) {
            case '<':
                out += "\\u003c";
                break;
            case '>':
                out += "\\u003e";
                break;
            case '&':
                out += "\\u0026";
                break;
            default:
                out += ch;
        }
    }
    return out;
}

void downsample_min_max(std::vector<double>& x, std::vector<double>& y, std::size_t max_points) {
    const std::size_t n = std::min(x.size(), y.size());
    max_points = std::max<std::size_t>(max_points, 2);
    if (n <= max_points) return;
    const std::size_t buckets = max_points / 2;
    std::vector<double> out_x, out_y;
    out_x.reserve(max_points);
    out_y.reserve(max_points);
    for (std::size_t b = 0; b < buckets; ++b) {
        const std::size_t begin = b * n / buckets, end = (b + 1) * n / buckets;
        std::size_t low = end, high = end;
        for (std::size_t i = begin; i < end; ++i) {
            if (std::isnan(y[i])) continue;
            if (low == end || y[i] < y[low]) low = i;
            if (high == end || y[i] > y[high]) high = i;
        }
        if (low == end) {  // only gaps: keep one so the line breaks here
            out_x.push_back(x[begin]);
            out_y.push_back(y[begin]);
            continue;
        }
        const std::size_t first = std::min(low, high), second = std::max(low, high);
        out_x.push_back(x[first]);
        out_y.push_back(y[first]);
        if (second != first) {
            out_x.push_back(x[second]);
            out_y.push_back(y[second]);
        }
    }
    x = std::move(out_x);
    y = std::move(out_y);
}

double chart_value(double value) {
    if (!std::isfinite(value) || value == 0) return value;
    return std::strtod(fmt::format("{:.6g}", value).c_str(), nullptr);
}

HtmlPage::HtmlPage(std::string title) : title_(std::move(title)) {}

void HtmlPage::raw(std::string_view html) { body_ += html; }

void HtmlPage::heading(int level, std::string_view text) {
    body_ += fmt::format("<h{0}>{1}</h{0}>\n", std::clamp(level, 1, 6), html_escape(text));
}

void HtmlPage::paragraph(std::string_view text, std::string_view css_class) {
    if (css_class.empty())
        body_ += fmt::format("<p>{}</p>\n", html_escape(text));
    else
        body_ += fmt::format("<p class=\"{}\">{}</p>\n", html_escape(css_class), html_escape(text));
}

void HtmlPage::definition_list(const std::vector<std::pair<std::string, std::string>>& entries) {
    body_ += "<dl>\n";
    for (const auto& [term, value] : entries)
        body_ += fmt::format("<dt>{}</dt><dd>{}</dd>\n", html_escape(term), html_escape(value));
    body_ += "</dl>\n";
}

void HtmlPage::list(const std::vector<std::string>& items) {
    body_ += "<ul>\n";
    for (const auto& item : items) body_ += fmt::format("<li>{}</li>\n", html_escape(item));
    body_ += "</ul>\n";
}

void HtmlPage::table(const Table& table) {
    const std::size_t n = table.columns.size();
    std::vector<bool> numeric(n);
    for (std::size_t c = 0; c < n; ++c) numeric[c] = numeric_column(table, c);
    body_ += fmt::format("<div class=\"table-wrap\"><table class=\"sortable\" data-table=\"{}\">\n<thead><tr>",
                         html_escape(table.name));
    for (std::size_t c = 0; c < n; ++c) {
        if (table.columns[c].machine_only) continue;
        const auto& column = table.columns[c];
        const std::string hint =
            column.hint.empty() ? "" : fmt::format(" title=\"{}\" tabindex=\"0\"", html_escape(column.hint));
        body_ += fmt::format("<th data-type=\"{}\" data-key=\"{}\" scope=\"col\"{}>{}</th>", numeric[c] ? "num" : "text",
                             html_escape(column.key), hint, html_escape(column.title));
    }
    body_ += "</tr></thead>\n<tbody>\n";
    for (const auto& row : table.rows) {
        body_ += "<tr>";
        for (std::size_t c = 0; c < n; ++c) {
            if (table.columns[c].machine_only) continue;
            const std::string text = html_escape(cell_display_text(row[c], table.columns[c]));
            const auto value = sort_value(row[c]);
            if (value.is_null())
                body_ += fmt::format("<td>{}</td>", text);
            else
                body_ += fmt::format("<td class=\"num\" data-v=\"{}\">{}</td>", value.dump(), text);
        }
        body_ += "</tr>\n";
    }
    body_ += "</tbody></table></div>\n";
}

namespace {

nlohmann::json chart_json(const Chart& chart) {
    nlohmann::json series = nlohmann::json::array();
    for (const auto& s : chart.series) {
        nlohmann::json entry = {{"label", s.label}, {"x", values_json(s.x)}, {"y", values_json(s.y)}};
        if (s.type) entry["type"] = chart_type_name(*s.type);
        if (s.dashed) entry["dashed"] = true;
        if (!s.colour.empty()) entry["colour"] = s.colour;
        if (!s.point_labels.empty()) entry["point_labels"] = s.point_labels;
        series.push_back(std::move(entry));
    }
    return {{"type", chart_type_name(chart.type)},
            {"x_label", chart.x_label},
            {"y_label", chart.y_label},
            {"x_log", chart.x_log},
            {"y_log", chart.y_log},
            {"log_base", chart.log_base},
            {"categories", chart.categories},
            {"series", std::move(series)}};
}

}  // namespace

void ChartSpool::Closer::operator()(std::FILE* file) const { std::fclose(file); }

ChartSpool::ChartSpool() : dir_("report-charts"), file_(std::fopen((dir_.path() / "charts.json").c_str(), "w+b")) {
    if (!file_)
        throw EnvironmentError(fmt::format("cannot make {} for the page's charts: {}",
                                           (dir_.path() / "charts.json").string(), errno_text(errno)));
}

void ChartSpool::add(std::string title, const std::vector<Chart>& charts) {
    if (charts.empty()) return;
    Section& section = sections_.emplace_back();
    section.title = std::move(title);
    for (const auto& chart : charts) {
        // Each chart as the page's data holds it, after a comma where one came before.
        const std::string text = (charts_ == 0 ? "" : ",") + script_json(chart_json(chart));
        if (std::fwrite(text.data(), 1, text.size(), file_.get()) != text.size())
            throw EnvironmentError(fmt::format("cannot write the page's charts to {}: {}",
                                               (dir_.path() / "charts.json").string(), errno_text(errno)));
        section.chart_titles.push_back(chart.title);
        ++charts_;
    }
}

void HtmlPage::figure(std::size_t index, std::string_view title) {
    body_ += fmt::format(
        "<figure class=\"chart\" data-chart=\"{}\"><figcaption>{}</figcaption><div class=\"plot\"></div>"
        "</figure>\n",
        index, html_escape(title));
}

void HtmlPage::chart(const Chart& chart) {
    charts_.push_back(chart_json(chart));
    figure(chart_count() - 1, chart.title);
}

void HtmlPage::spooled_charts(const ChartSpool& spool) {
    spool_ = &spool;
    spool_offset_ = charts_.size();
    std::size_t index = 0;
    for (const auto& section : spool.sections_) {
        open_section(section.title);
        raw("<div class=\"charts\">\n");
        for (const auto& title : section.chart_titles) figure(spool_offset_ + index++, title);
        raw("</div>\n");
        close_section();
    }
}

void HtmlPage::open_section(std::string_view title, std::string_view id) {
    if (id.empty())
        body_ += "<section>\n";
    else
        body_ += fmt::format("<section id=\"{}\">\n", html_escape(id));
    heading(2, title);
}

void HtmlPage::close_section() { body_ += "</section>\n"; }

void HtmlPage::open_details(std::string_view summary) {
    body_ += fmt::format("<details><summary>{}</summary>\n", html_escape(summary));
}

void HtmlPage::close_details() { body_ += "</details>\n"; }

std::string HtmlPage::finish() const {
    std::ostringstream out;
    write_document(out);
    return std::move(out).str();
}

namespace {

void create_parent_folders(const std::filesystem::path& file) {
    std::error_code error;
    if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path(), error);
    if (error)
        throw EnvironmentError(
            fmt::format("{}: cannot create the folder: {}", file.parent_path().string(), error.message()));
}

}  // namespace

void HtmlPage::write_file(const std::filesystem::path& file) const {
    create_parent_folders(file);
    OutputFile output(file);
    {
        std::ofstream out(output.staging_path(), std::ios::binary | std::ios::trunc);
        if (!out) output.fail(errno_text(errno));
        write_document(out);
        out.flush();
        if (!out) output.fail(errno_text(errno));
    }
    output.commit();
}

void HtmlPage::write_document(std::ostream& out) const {
    const std::string nonce = make_nonce();
    out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
    // Only the page's own scripts run, nothing is fetched: the file works offline and stays inert.
    out << fmt::format(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "script-src 'nonce-{}'; style-src 'unsafe-inline'; img-src data:\">\n",
        nonce);
    out << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
    out << fmt::format("<meta name=\"generator\" content=\"inferbench {}\">\n", html_escape(kVersion));
    out << fmt::format("<title>{}</title>\n", html_escape(title_));
    out << fmt::format("<!-- Charts: uPlot (https://github.com/leeoniya/uPlot), embedded below; {}.\n{}-->\n",
                       comment_text(trim(html_assets::uplot_version())), comment_text(html_assets::uplot_license()));
    out << fmt::format("<style>\n{}\n</style>\n<style>\n{}\n</style>\n</head>\n<body>\n", html_assets::uplot_css(),
                       html_assets::page_css());
    out << fmt::format("<header><h1>{}</h1></header>\n<main>\n", html_escape(title_));
    out << body_;
    out << "</main>\n";
    out << "<script type=\"application/json\" id=\"data\">";
    write_chart_data(out);
    out << "</script>\n";
    out << fmt::format("<script nonce=\"{}\">\n{}\n</script>\n", nonce, html_assets::uplot_js());
    out << fmt::format("<script nonce=\"{}\">\n{}\n</script>\n", nonce, html_assets::page_js());
    out << "</body>\n</html>\n";
}

// {"charts":[...]} as script_json writes it: the page's own charts before the spool's, the spool's (copied from
// its file a block at a time), then the page's own after it.
void HtmlPage::write_chart_data(std::ostream& out) const {
    bool first = true;
    const auto separate = [&] {
        if (!first) out << ",";
        first = false;
    };
    const std::size_t before = spool_ ? spool_offset_ : charts_.size();
    out << "{\"charts\":[";
    for (std::size_t i = 0; i < before; ++i) {
        separate();
        out << script_json(charts_[i]);
    }
    if (spool_ && spool_->charts_ > 0) {  // its charts already separated from each other
        separate();
        std::FILE* file = spool_->file_.get();
        if (std::fflush(file) != 0 || std::ferror(file))
            throw EnvironmentError(fmt::format("cannot write the page's charts to {}: {}",
                                               (spool_->dir_.path() / "charts.json").string(), errno_text(errno)));
        std::rewind(file);
        std::vector<char> block(std::size_t{1} << 20);
        while (const std::size_t got = std::fread(block.data(), 1, block.size(), file))
            out.write(block.data(), static_cast<std::streamsize>(got));
        std::fseek(file, 0, SEEK_END);  // where the next add() appends
    }
    for (std::size_t i = before; i < charts_.size(); ++i) {
        separate();
        out << script_json(charts_[i]);
    }
    out << "]}";
}

namespace {
void flatten(const nlohmann::json& value, const std::string& path,
             std::vector<std::pair<std::string, std::string>>& out) {
    if (value.is_object() && !value.empty()) {
        for (const auto& [key, item] : value.items()) flatten(item, path.empty() ? key : path + "." + key, out);
    } else if (value.is_array() && !value.empty()) {
        for (std::size_t i = 0; i < value.size(); ++i) flatten(value[i], fmt::format("{}[{}]", path, i), out);
    } else {
        out.emplace_back(path, value.is_string()
                                   ? value.get<std::string>()
                                   : value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    }
}
}  // namespace

std::vector<std::pair<std::string, std::string>> json_entries(const nlohmann::json& value) {
    std::vector<std::pair<std::string, std::string>> out;
    if (value.is_object() || value.is_array()) flatten(value, "", out);
    return out;
}

std::string format_utc(std::int64_t unix_ms) {
    const auto seconds = static_cast<std::time_t>(unix_ms / 1000);
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02} UTC", utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday,
                       utc.tm_hour, utc.tm_min, utc.tm_sec);
}

void write_text_file(const std::filesystem::path& file, std::string_view content) {
    create_parent_folders(file);
    write_file_atomically(file, content);
}

}  // namespace inferbench::report
