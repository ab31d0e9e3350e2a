// The one way inferbench draws a figure: a gnuplot program (Debian's gnuplot-nox) fed on stdin, data
// inline as datablocks, output PNG (cairo) or SVG. Callers build scripts with the helpers below, so
// quoting and terminal settings are the same in every plot.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace inferbench::report {

enum class ImageFormat { png, svg };
std::string_view extension(ImageFormat format);  // "png", "svg"

struct PlotSize {
    int width_px = 1280;
    int height_px = 720;
    int dpi = 96;  // scales fonts and lines: 96 is gnuplot's 1:1
};

// Whether gnuplot can be run here (on PATH, or INFERBENCH_GNUPLOT).
bool gnuplot_available();

// "set terminal ... ; set output '...'" for the format, size and file; enhanced text is off, so
// names with _ ^ { } @ print as they are.
std::string gnuplot_terminal(ImageFormat format, const PlotSize& size, const std::filesystem::path& output);

// A gnuplot string literal of any text (single quotes, quote doubled, newlines as spaces).
std::string gnuplot_quote(std::string_view text);

// "$name << EOD\n<rows>\nEOD\n". Cells are numbers (written with full precision) or the missing
// marker "NaN" where a value is absent; rows of different series may differ in length.
struct DataBlock {
    std::string name;                         // without the '$'
    std::vector<std::vector<double>> rows;    // NaN cells are written as NaN (gnuplot skips them)
};
std::string gnuplot_datablock(const DataBlock& block);

// Runs `script` with gnuplot, waits at most timeout_ms. Throws EnvironmentError with gnuplot's own
// message when it is missing or fails; the output file must exist and be non-empty afterwards.
void run_gnuplot(const std::string& script, const std::filesystem::path& expected_output, int timeout_ms = 60'000);
// The same for a script that writes several files (one gnuplot process draws many figures); each must
// exist and be non-empty afterwards.
void run_gnuplot(const std::string& script, const std::vector<std::filesystem::path>& expected_outputs,
                 int timeout_ms = 60'000);

}  // namespace inferbench::report
