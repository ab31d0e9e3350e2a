#include "report/xlsx_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"

namespace inferbench::report {
namespace {

// Text that libxlsxwriter would read as a formula ("=...") is shown as written instead.
std::string literal(std::string_view text) {
    return text.starts_with('=') ? " " + std::string(text) : std::string(text);
}

// libxlsxwriter prints its own error lines, naming the staging path; the error thrown names the file
// and carries the same cause, so its lines are silenced while it writes (the report is single-threaded).
class QuietStderr {
public:
    QuietStderr() : saved_(::dup(STDERR_FILENO)) {
        const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (saved_ >= 0 && null >= 0) ::dup2(null, STDERR_FILENO);
        if (null >= 0) ::close(null);
    }
    QuietStderr(const QuietStderr&) = delete;
    QuietStderr& operator=(const QuietStderr&) = delete;
    ~QuietStderr() {
        if (saved_ < 0) return;
        ::dup2(saved_, STDERR_FILENO);
        ::close(saved_);
    }

private:
    int saved_;
};

}  // namespace

XlsxWorkbook::XlsxWorkbook(const std::filesystem::path& file, const Options& options)
    : file_(file), output_(file), tmpdir_(options.tmpdir.string()) {
    lxw_workbook_options lxw_options{};
    lxw_options.constant_memory = options.constant_memory ? LXW_TRUE : LXW_FALSE;
    lxw_options.tmpdir = tmpdir_.empty() ? nullptr : tmpdir_.data();
    lxw_options.use_zip64 = LXW_TRUE;  // a sheet of a million rows passes 4 GB of XML only far later, but costs nothing
    book_ = workbook_new_opt(output_.staging_path().c_str(), &lxw_options);
    if (!book_)
        throw EnvironmentError(
            fmt::format("{}: libxlsxwriter could not start a workbook (out of memory?)", file_.string()));
    bold_ = workbook_add_format(book_);
    if (!bold_) throw EnvironmentError(fmt::format("{}: libxlsxwriter could not add a format", file_.string()));
    format_set_bold(bold_);
}

XlsxWorkbook::~XlsxWorkbook() {
    if (book_) lxw_workbook_free(book_);
}

void XlsxWorkbook::check(lxw_error error, std::string_view what) const {
    if (error != LXW_NO_ERROR)
        throw EnvironmentError(fmt::format("{}: {}: {}", file_.string(), what, lxw_strerror(error)));
}

XlsxWorkbook::Sheet XlsxWorkbook::add_sheet(const std::string& name) {
    check(workbook_validate_sheet_name(book_, name.c_str()), fmt::format("sheet '{}'", name));
    lxw_worksheet* sheet = workbook_add_worksheet(book_, name.c_str());
    if (!sheet)
        throw EnvironmentError(fmt::format("{}: libxlsxwriter could not add sheet '{}' (temporary file in {}?)",
                                           file_.string(), name, tmpdir_.empty() ? "the temp folder" : tmpdir_));
    return Sheet(this, sheet, name);
}

void XlsxWorkbook::Sheet::number(lxw_row_t row, lxw_col_t col, double value) {
    if (!std::isfinite(value)) return;
    const lxw_error error = worksheet_write_number(sheet_, row, col, value, nullptr);
    if (error != LXW_NO_ERROR) book_->check(error, fmt::format("sheet '{}' row {} column {}", name_, row + 1, col + 1));
}

void XlsxWorkbook::Sheet::number(lxw_row_t row, lxw_col_t col, std::optional<double> value) {
    if (value) number(row, col, *value);
}

void XlsxWorkbook::Sheet::text(lxw_row_t row, lxw_col_t col, std::string_view value) {
    if (value.empty()) return;
    book_->check(worksheet_write_string(sheet_, row, col, std::string(value).c_str(), nullptr),
                 fmt::format("sheet '{}' row {} column {}", name_, row + 1, col + 1));
}

void XlsxWorkbook::Sheet::header(const std::vector<std::string>& titles, double width) {
    if (titles.empty()) return;
    book_->check(worksheet_set_column(sheet_, 0, static_cast<lxw_col_t>(titles.size() - 1), width, nullptr),
                 fmt::format("sheet '{}' column widths", name_));
    for (std::size_t c = 0; c < titles.size(); ++c) {
        book_->check(worksheet_write_string(sheet_, 0, static_cast<lxw_col_t>(c), titles[c].c_str(), book_->bold_),
                     fmt::format("sheet '{}' header", name_));
    }
    worksheet_freeze_panes(sheet_, 1, 0);
}

void XlsxWorkbook::insert_chart(Sheet& sheet, lxw_row_t row, lxw_col_t col, const Chart& spec) {
    lxw_chart* chart =
        workbook_add_chart(book_, spec.markers ? LXW_CHART_SCATTER_STRAIGHT_WITH_MARKERS : LXW_CHART_SCATTER_STRAIGHT);
    if (!chart) throw EnvironmentError(fmt::format("{}: libxlsxwriter could not add a chart", file_.string()));
    const std::string title = literal(spec.title), x_title = literal(spec.x_title), y_title = literal(spec.y_title);
    chart_title_set_name(chart, title.c_str());
    chart_axis_set_name(chart->x_axis, x_title.c_str());
    chart_axis_set_name(chart->y_axis, y_title.c_str());
    if (spec.log2_x) chart_axis_set_log_base(chart->x_axis, 2);
    chart_legend_set_position(chart, LXW_CHART_LEGEND_BOTTOM);
    chart_show_blanks_as(chart, LXW_CHART_BLANKS_AS_GAP);
    for (const auto& s : spec.series) {
        lxw_chart_series* series = chart_add_series(chart, nullptr, nullptr);
        if (!series)
            throw EnvironmentError(fmt::format("{}: libxlsxwriter could not add a chart series", file_.string()));
        chart_series_set_categories(series, s.sheet.c_str(), s.first_row, s.x_col, s.last_row, s.x_col);
        chart_series_set_values(series, s.sheet.c_str(), s.first_row, s.y_col, s.last_row, s.y_col);
        const std::string name = literal(s.name);
        chart_series_set_name(series, name.c_str());
        if (spec.markers) chart_series_set_marker_size(series, 5);
    }
    lxw_chart_options options{};
    options.x_scale = 1.5;
    options.y_scale = 1.2;
    check(worksheet_insert_chart_opt(sheet.sheet_, row, col, chart, &options),
          fmt::format("chart '{}' in sheet '{}'", spec.title, sheet.name()));
}

void XlsxWorkbook::close() {
    lxw_workbook* book = book_;
    book_ = nullptr;  // workbook_close frees it, whatever it returns
    lxw_error error = LXW_NO_ERROR;
    int cause = 0;
    {
        const QuietStderr quiet;
        errno = 0;
        error = workbook_close(book);
        // libxlsxwriter's code names only its step ("error creating output xlsx file"); errno says why.
        cause = errno;
    }
    if (error != LXW_NO_ERROR)
        output_.fail(cause == 0 ? std::string(lxw_strerror(error))
                                : fmt::format("{} ({})", lxw_strerror(error), errno_text(cause)));
    output_.commit();
}

}  // namespace inferbench::report
