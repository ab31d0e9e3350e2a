#include "report/gnuplot.hpp"

#include <cmath>
#include <cstdlib>
#include <system_error>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/subprocess.hpp"

namespace inferbench::report {
namespace {

std::string gnuplot_program() {
    const char* configured = std::getenv("INFERBENCH_GNUPLOT");
    return configured && *configured ? configured : "gnuplot";
}

std::string first_lines(const std::string& text, std::size_t max_lines) {
    std::string result;
    std::size_t begin = 0, lines = 0;
    while (begin < text.size() && lines < max_lines) {
        std::size_t end = text.find('\n', begin);
        if (end == std::string::npos) end = text.size();
        std::string_view line(text.data() + begin, end - begin);
        if (line.find_first_not_of(" \t^") != std::string_view::npos) {
            if (!result.empty()) result += " | ";
            result += line;
            ++lines;
        }
        begin = end + 1;
    }
    return result;
}

}  // namespace

std::string_view extension(ImageFormat format) { return format == ImageFormat::png ? "png" : "svg"; }

bool gnuplot_available() { return find_program(gnuplot_program()).has_value(); }

std::string gnuplot_terminal(ImageFormat format, const PlotSize& size, const std::filesystem::path& output) {
    const double scale = size.dpi / 96.0;
    const int font_pt = static_cast<int>(std::lround(10 * scale));
    std::string terminal;
    if (format == ImageFormat::png) {
        terminal = fmt::format("set terminal pngcairo noenhanced size {},{} font 'DejaVu Sans,{}' linewidth {:.2f}\n",
                               size.width_px, size.height_px, font_pt, scale);
    } else {
        terminal = fmt::format("set terminal svg noenhanced size {},{} dynamic font 'DejaVu Sans,{}' linewidth {:.2f}\n",
                               size.width_px, size.height_px, font_pt, scale);
    }
    return terminal + "set output " + gnuplot_quote(output.string()) + "\n";
}

std::string gnuplot_quote(std::string_view text) {
    std::string quoted = "'";
    for (const char c : text) {
        if (c == '\'') {
            quoted += "''";
        } else if (c == '\n' || c == '\r') {
            quoted += ' ';
        } else {
            quoted += c;
        }
    }
    return quoted + "'";
}

std::string gnuplot_datablock(const DataBlock& block) {
    std::string text = "$" + block.name + " << EOD\n";
    for (const auto& row : block.rows) {
        for (std::size_t i = 0; i < row.size(); ++i) {
            if (i > 0) text += ' ';
            text += std::isfinite(row[i]) ? fmt::format("{:.17g}", row[i]) : std::string("NaN");
        }
        text += '\n';
    }
    return text + "EOD\n";
}

void run_gnuplot(const std::string& script, const std::filesystem::path& expected_output, int timeout_ms) {
    run_gnuplot(script, std::vector<std::filesystem::path>{expected_output}, timeout_ms);
}

void run_gnuplot(const std::string& script, const std::vector<std::filesystem::path>& expected_outputs, int timeout_ms) {
    if (expected_outputs.empty()) return;
    const std::string what = expected_outputs.size() == 1
                                 ? expected_outputs.front().string()
                                 : fmt::format("{} and {} more", expected_outputs.front().string(), expected_outputs.size() - 1);
    const std::string program = gnuplot_program();
    if (!find_program(program))
        throw EnvironmentError(fmt::format("cannot draw {}: {} not found; install Debian's gnuplot-nox "
                                           "(scripts/setup.sh does) or set INFERBENCH_GNUPLOT",
                                           what, program));
    const CapturedRun run = run_captured({program}, script, timeout_ms);
    if (run.timed_out) throw EnvironmentError(fmt::format("gnuplot took more than {} ms drawing {}", timeout_ms, what));
    if (!run.status.success())
        throw EnvironmentError(fmt::format("gnuplot failed drawing {} ({}): {}", what, run.status.describe(),
                                           first_lines(run.err, 3)));
    for (const auto& output : expected_outputs) {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(output, ec) || std::filesystem::file_size(output, ec) == 0)
            throw EnvironmentError(fmt::format("gnuplot wrote no {} ({})", output.string(), first_lines(run.err, 3)));
    }
}

}  // namespace inferbench::report
