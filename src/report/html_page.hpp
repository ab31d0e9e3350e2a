// The one way inferbench writes an HTML page: one self-contained file (uPlot, its style and the page's
// script inline, see html_assets.hpp) that opens offline. Text is HTML-escaped where the page is
// written; chart data travels as JSON in <script type="application/json" id="data"> with < > &
// escaped, and the page's script puts text into the DOM only through textContent. A
// Content-Security-Policy with a fresh nonce lets only the page's own scripts run and forbids any
// network access.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/temp_dir.hpp"
#include "report/table.hpp"

namespace inferbench::report {

// Text for element content and attribute values: & < > " ' as entities.
std::string html_escape(std::string_view text);

// JSON for a <script type="application/json"> element: < > & as \u003c \u003e \u0026 (they occur only
// inside strings), so no string can end the element; invalid UTF-8 is replaced by U+FFFD.
std::string script_json(const nlohmann::json& value);

// stacked_bars: one bar per category, its series drawn over each other from the first (the tallest) on, so a
// caller gives each series the running sum of the segments up to its own.
enum class ChartType { line, points, bars, stacked_bars };

struct ChartSeries {
    std::string label;
    std::vector<double> x = {};  // ascending
    std::vector<double> y = {};  // NaN: no value (a gap)
    // Optional styling, for charts that mix kinds (a roofline: roofs as lines, benchmarks as points).
    std::optional<ChartType> type = {};         // line or points; the chart's type when absent
    bool dashed = false;                        // lines only
    std::string colour = {};                    // "#rrggbb"; the palette's when empty
    std::vector<std::string> point_labels = {};  // empty, or one per point, written beside it
};

// An interactive chart (uPlot): drag to zoom, double-click to reset, values under the cursor.
struct Chart {
    std::string title;
    std::string x_label, y_label;
    ChartType type = ChartType::line;
    bool x_log = false;                        // logarithmic x axis (base log_base)
    bool y_log = false;                        // logarithmic y axis (base log_base)
    int log_base = 2;                          // 2 (batch sizes) or 10
    std::vector<std::string> categories = {};  // non-empty: x values are indices into these names
    std::vector<ChartSeries> series = {};
};

// Keeps the shape of a long series in at most `max_points` points (>= 2): the points are cut into
// max_points / 2 equal buckets and each bucket keeps its lowest and its highest point, in their
// order, so spikes survive; points whose y is NaN are dropped from buckets that have values.
void downsample_min_max(std::vector<double>& x, std::vector<double>& y, std::size_t max_points);

// Rounds to 6 significant digits: enough for any chart, and keeps the page small.
double chart_value(double value);

// Charts held in a temporary file until their page is written: a report of many benchmarks draws each group's
// charts while it holds the group's rows and keeps their text on disk, not in memory, so that the page's memory
// does not grow with the number of benchmarks. Each section is a titled set of charts, as HtmlPage shows them.
class ChartSpool {
public:
    ChartSpool();  // a file in a private temporary folder (core/temp_dir); throws EnvironmentError where none can be
                   // made
    // Appends a section of charts; a section without charts is left out, as the page leaves it.
    void add(std::string title, const std::vector<Chart>& charts);
    std::size_t chart_count() const { return charts_; }

private:
    friend class HtmlPage;
    struct Section {
        std::string title;
        std::vector<std::string> chart_titles;
    };
    struct Closer {
        void operator()(std::FILE* file) const;
    };
    std::vector<Section> sections_;
    TempDir dir_;
    std::unique_ptr<std::FILE, Closer> file_;  // closed before dir_ goes
    std::size_t charts_ = 0;
};

// One page being written, top to bottom.
class HtmlPage {
public:
    explicit HtmlPage(std::string title);

    // Appends HTML written by the caller, who has escaped every text in it with html_escape.
    void raw(std::string_view html);
    void heading(int level, std::string_view text);
    void paragraph(std::string_view text, std::string_view css_class = {});
    void definition_list(const std::vector<std::pair<std::string, std::string>>& entries);
    void list(const std::vector<std::string>& items);
    // A table that sorts by a column when its heading is clicked (numbers as numbers).
    void table(const Table& table);
    void chart(const Chart& chart);
    // <section> with an <h2>; sections do not nest.
    void open_section(std::string_view title, std::string_view id = {});
    void close_section();
    // <details> with its summary line, for what most readers skip (environments).
    void open_details(std::string_view summary);
    void close_details();

    // The spool's sections with their charts, here in the page; their data is copied from the spool when the
    // page is written, so the spool must outlive the page's finish() or write_file(). One spool per page.
    void spooled_charts(const ChartSpool& spool);

    std::size_t chart_count() const { return charts_.size() + (spool_ ? spool_->chart_count() : 0); }
    // The whole document.
    std::string finish() const;
    // The same written to `file` as it is made (complete or absent, core/file_io's OutputFile): the spooled
    // charts are never all in memory. Throws EnvironmentError naming the file.
    void write_file(const std::filesystem::path& file) const;

private:
    void write_document(std::ostream& out) const;
    void write_chart_data(std::ostream& out) const;
    void figure(std::size_t index, std::string_view title);

    std::string title_;
    std::string body_;
    nlohmann::json charts_ = nlohmann::json::array();
    const ChartSpool* spool_ = nullptr;
    std::size_t spool_offset_ = 0;  // the page's own charts before the spool's
};

// An object as (dotted path, value) pairs for a definition list: {"a": {"b": 1}, "c": [2]} gives
// ("a.b", "1"), ("c[0]", "2"); strings without their quotes.
std::vector<std::pair<std::string, std::string>> json_entries(const nlohmann::json& value);

// "2024-05-01 12:00:03 UTC"
std::string format_utc(std::int64_t unix_ms);

// Writes `content` to `file` (parent folders created), complete or not at all (write_file_atomically);
// throws EnvironmentError naming the file and why it failed.
void write_text_file(const std::filesystem::path& file, std::string_view content);

}  // namespace inferbench::report
