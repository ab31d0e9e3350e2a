#include "report/gnuplot.hpp"

#include <sys/statvfs.h>

#include <cmath>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <system_error>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/process/subprocess.hpp"

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

// The last bytes of a file (all of a shorter one).
std::string file_tail(const std::filesystem::path& file, std::uintmax_t size, std::size_t count) {
    std::ifstream in(file, std::ios::binary);
    const auto start = size > count ? size - count : 0;
    in.seekg(static_cast<std::streamoff>(start));
    std::string tail(static_cast<std::size_t>(size - start), '\0');
    in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
    return in ? tail : std::string();
}

// Whether the image ends as its format requires: a PNG with its IEND chunk, an SVG with </svg>.
bool ends_complete(const std::filesystem::path& file, std::uintmax_t size) {
    const std::string ext = file.extension().string();
    if (ext == ".png") return file_tail(file, size, 12) == std::string_view("\0\0\0\0IEND\xae\x42\x60\x82", 12);
    if (ext == ".svg") {
        const std::string tail = file_tail(file, size, 64);
        const auto end = tail.find_last_not_of(" \t\r\n");
        return end != std::string::npos && std::string_view(tail).substr(0, end + 1).ends_with("</svg>");
    }
    return size > 0;
}

std::string free_space_note(const std::filesystem::path& file) {
    struct statvfs fs {};
    if (::statvfs(file.parent_path().c_str(), &fs) != 0) return {};
    const double free_bytes = static_cast<double>(fs.f_bavail) * static_cast<double>(fs.f_frsize);
    if (free_bytes < 1024.0 * 1024.0) return "; " + errno_text(ENOSPC);
    return fmt::format("; {:.0f} MiB free there", free_bytes / (1024.0 * 1024.0));
}

// Why the image gnuplot was to write is missing or incomplete; nothing when it is whole.
std::optional<std::string> incomplete_image(const std::filesystem::path& file, const CapturedRun& run) {
    std::error_code ec;
    const bool exists = std::filesystem::is_regular_file(std::filesystem::symlink_status(file, ec));
    const std::uintmax_t size = exists ? std::filesystem::file_size(file, ec) : 0;
    if (exists && !ec && ends_complete(file, size)) return std::nullopt;
    const std::string who = run.status.success() ? "gnuplot" : fmt::format("gnuplot ({})", run.status.describe());
    const std::string said = first_lines(run.err, 3);
    const std::string from_gnuplot = said.empty() ? "" : " (gnuplot: " + said + ")";
    if (!exists || size == 0) return fmt::format("{} wrote nothing{}{}", who, free_space_note(file), from_gnuplot);
    return fmt::format("{} wrote {} bytes of an incomplete {} image{}{}", who, size, file.extension().string().substr(1),
                       free_space_note(file), from_gnuplot);
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

void run_gnuplot(const std::string& script, OutputFile& output, int timeout_ms) {
    run_gnuplot(script, std::span<OutputFile>(&output, 1), timeout_ms);
}

void run_gnuplot(const std::string& script, std::span<OutputFile> outputs, int timeout_ms) {
    if (outputs.empty()) return;
    const std::string what = outputs.size() == 1 ? outputs.front().target().string()
                                                 : fmt::format("{} and {} more", outputs.front().target().string(),
                                                               outputs.size() - 1);
    const std::string program = gnuplot_program();
    if (!find_program(program))
        throw EnvironmentError(fmt::format("cannot draw {}: {} not found; install Debian's gnuplot-nox "
                                           "(scripts/setup.sh does) or set INFERBENCH_GNUPLOT",
                                           what, program));
    const CapturedRun run = run_captured({program}, script, timeout_ms);
    if (run.timed_out) throw EnvironmentError(fmt::format("gnuplot took more than {} ms drawing {}", timeout_ms, what));
    // gnuplot meets a full disk with a warning at most, or fails on the next file: either way the first
    // image that is not whole is the one that failed.
    for (const auto& output : outputs)
        if (const auto why = incomplete_image(output.staging_path(), run)) output.fail(*why);
    if (!run.status.success())
        throw EnvironmentError(fmt::format("gnuplot failed drawing {} ({}): {}", what, run.status.describe(),
                                           first_lines(run.err, 3)));
    for (auto& output : outputs) output.commit();
}

}  // namespace inferbench::report
