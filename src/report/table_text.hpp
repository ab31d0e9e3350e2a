// Terminal and Markdown rendering of a report::Table (table.hpp): aligned columns and, for a terminal
// with a width, the fitting (wrap, footnotes, columns left out) described there.
#pragma once

#include <string>
#include <vector>

#include "report/table.hpp"

namespace inferbench::report::detail {

// The displayed texts of a table's chosen columns, before any fitting.
struct TextGrid {
    std::vector<const Column*> columns;
    std::vector<std::string> titles;
    std::vector<std::vector<std::string>> cells;  // [row][column]
    std::vector<bool> right;                       // numbers are right-aligned
};

// `may_shed`: columns may be left out for width (not when --columns chose them).
std::string render_grid(TextGrid grid, bool markdown, std::size_t width, bool may_shed);

// `text` split into lines of at most `width` display columns, at spaces where possible.
std::vector<std::string> wrap_text(const std::string& text, std::size_t width);

}  // namespace inferbench::report::detail
