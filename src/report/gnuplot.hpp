// The one way inferbench draws a figure: a gnuplot program (Debian's gnuplot-nox) fed on stdin, data
// inline as datablocks, output PNG (cairo) or SVG, each file complete or absent (core/file_io.hpp). Callers build scripts with the helpers below, so
// quoting and terminal settings are the same in every plot.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/file_io.hpp"

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

// Runs `script` with gnuplot, waits at most timeout_ms. The script draws each output at its
// staging_path() (the path given to gnuplot_terminal); each must then be a complete image (a PNG up to
// its IEND chunk, an SVG up to </svg>) before all are renamed to their final names. Throws
// EnvironmentError naming the final file and the cause: gnuplot missing or failing (its own message),
// nothing written, or an incomplete image (with the free space left, for a full disk).
void run_gnuplot(const std::string& script, std::span<OutputFile> outputs, int timeout_ms = 60'000);
void run_gnuplot(const std::string& script, OutputFile& output, int timeout_ms = 60'000);

}  // namespace inferbench::report
