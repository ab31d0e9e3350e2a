#include "report/table_text.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "core/units.hpp"

namespace inferbench::report::detail {
namespace {

// The narrowest a wrapped column gets before columns are left out, and once none is left to leave out.
constexpr std::size_t kMinWrapWidth = 20;
constexpr std::size_t kNarrowestWrap = 8;
constexpr std::string_view kSeparator = "  ";

// Bytes of the first `count` code points of `text`.
std::size_t utf8_bytes(std::string_view text, std::size_t count) {
    std::size_t bytes = 0;
    for (std::size_t seen = 0; bytes < text.size(); ++bytes) {
        const auto byte = static_cast<unsigned char>(text[bytes]);
        if ((byte & 0xC0) != 0x80 && seen++ == count) break;
    }
    return bytes;
}

std::string pad(const std::string& text, std::size_t width, bool right) {
    const std::size_t shown = display_width(text);
    const std::string fill(shown < width ? width - shown : 0, ' ');
    return right ? fill + text : text + fill;
}

struct Layout {
    std::vector<std::size_t> widths;
    std::vector<std::string> footnotes;  // texts moved below the table, numbered from 1
    std::vector<const Column*> left_out;  // columns left out for width
};

std::size_t natural_width(const TextGrid& grid, std::size_t c) {
    std::size_t width = display_width(grid.titles[c]);
    for (const auto& row : grid.cells) width = std::max(width, display_width(row[c]));
    return width;
}

std::size_t total_width(const std::vector<std::size_t>& widths) {
    std::size_t total = 0;
    for (const auto w : widths) total += w;
    return total + kSeparator.size() * (widths.empty() ? 0 : widths.size() - 1);
}

void erase_column(TextGrid& grid, Layout& layout, std::size_t c) {
    layout.left_out.push_back(grid.columns[c]);
    grid.columns.erase(grid.columns.begin() + static_cast<std::ptrdiff_t>(c));
    grid.titles.erase(grid.titles.begin() + static_cast<std::ptrdiff_t>(c));
    grid.right.erase(grid.right.begin() + static_cast<std::ptrdiff_t>(c));
    layout.widths.erase(layout.widths.begin() + static_cast<std::ptrdiff_t>(c));
    for (auto& row : grid.cells) row.erase(row.begin() + static_cast<std::ptrdiff_t>(c));
}

// Identical texts share one number: a note repeated on every row is printed once.
void move_to_footnotes(TextGrid& grid, Layout& layout, std::size_t c) {
    std::map<std::string, std::size_t> numbers;
    for (auto& row : grid.cells) {
        if (row[c].empty()) continue;
        auto [it, added] = numbers.try_emplace(row[c], layout.footnotes.size() + 1);
        if (added) layout.footnotes.push_back(row[c]);
        row[c] = fmt::format("[{}]", it->second);
    }
    layout.widths[c] = natural_width(grid, c);
}

// The column to leave out next: the highest `shed`, the rightmost of equals; none when all are 0.
std::optional<std::size_t> next_to_shed(const TextGrid& grid) {
    std::optional<std::size_t> pick;
    for (std::size_t c = 0; c < grid.columns.size(); ++c) {
        const int shed = grid.columns[c]->shed;
        if (shed > 0 && (!pick || shed >= grid.columns[*pick]->shed)) pick = c;
    }
    return pick;
}

// The narrowest a wrapped column may get: its longest word, so that no name is cut, unless a word
// is longer than kMinWrapWidth (then cut anyway): kNarrowestWrap.
std::size_t longest_word(std::string_view text) {
    std::size_t longest = 0;
    for (std::size_t start = 0; start <= text.size();) {
        const std::size_t end = std::min(text.find(' ', start), text.size());
        longest = std::max(longest, display_width(text.substr(start, end - start)));
        start = end + 1;
    }
    return longest;
}

std::size_t narrowest(const TextGrid& grid, std::size_t c) {
    std::size_t longest = longest_word(grid.titles[c]);
    for (const auto& row : grid.cells) longest = std::max(longest, longest_word(row[c]));
    return longest > kMinWrapWidth ? kNarrowestWrap : std::max(longest, kNarrowestWrap);
}

// Nothing left to leave out and still too wide: the widest wrapped column gives up a character, until
// the table fits or every wrapped column is as narrow as its words allow.
void narrow_wrapped(const TextGrid& grid, Layout& layout, std::size_t width) {
    std::vector<std::size_t> floor;
    for (std::size_t c = 0; c < grid.columns.size(); ++c) floor.push_back(narrowest(grid, c));
    while (total_width(layout.widths) > width) {
        std::optional<std::size_t> widest;
        for (std::size_t c = 0; c < grid.columns.size(); ++c)
            if (grid.columns[c]->fit == Fit::wrap && layout.widths[c] > floor[c] &&
                (!widest || layout.widths[c] > layout.widths[*widest]))
                widest = c;
        if (!widest) return;
        --layout.widths[*widest];
    }
}

Layout fit(TextGrid& grid, std::size_t width, bool may_shed) {
    Layout layout;
    for (std::size_t c = 0; c < grid.columns.size(); ++c) layout.widths.push_back(natural_width(grid, c));
    if (width == 0 || total_width(layout.widths) <= width) return layout;
    const std::vector<std::size_t> natural = layout.widths;
    for (std::size_t c = 0; c < grid.columns.size(); ++c) {
        if (grid.columns[c]->fit == Fit::footnote) move_to_footnotes(grid, layout, c);
        if (grid.columns[c]->fit == Fit::wrap) layout.widths[c] = std::min(natural[c], kMinWrapWidth);
    }
    std::vector<std::size_t> wanted = layout.widths;
    for (std::size_t c = 0; c < grid.columns.size(); ++c)
        if (grid.columns[c]->fit == Fit::wrap) wanted[c] = natural[c];
    while (may_shed && total_width(layout.widths) > width) {
        const auto shed = next_to_shed(grid);
        if (!shed) break;
        erase_column(grid, layout, *shed);
        wanted.erase(wanted.begin() + static_cast<std::ptrdiff_t>(*shed));
    }
    narrow_wrapped(grid, layout, width);
    std::size_t spare = width > total_width(layout.widths) ? width - total_width(layout.widths) : 0;
    for (std::size_t c = 0; c < grid.columns.size() && spare > 0; ++c) {
        const std::size_t more = std::min(spare, wanted[c] - layout.widths[c]);
        layout.widths[c] += more;
        spare -= more;
    }
    return layout;
}

std::string emit_row(const std::vector<std::string>& cells, const Layout& layout, const std::vector<bool>& right,
                     bool markdown) {
    const std::size_t n = cells.size();
    std::vector<std::vector<std::string>> lines(n);
    std::size_t height = 1;
    for (std::size_t c = 0; c < n; ++c) {
        lines[c] = markdown || display_width(cells[c]) <= layout.widths[c] ? std::vector<std::string>{cells[c]}
                                                                          : wrap_text(cells[c], layout.widths[c]);
        height = std::max(height, lines[c].size());
    }
    std::string out;
    for (std::size_t l = 0; l < height; ++l) {
        std::string line = markdown ? "| " : "";
        for (std::size_t c = 0; c < n; ++c) {
            if (c) line += markdown ? " | " : kSeparator;
            const std::string& text = l < lines[c].size() ? lines[c][l] : std::string();
            line += !markdown && c + 1 == n && !right[c] ? text : pad(text, layout.widths[c], right[c]);
        }
        if (!markdown) line.erase(line.find_last_not_of(' ') + 1);
        out += line + (markdown ? " |\n" : "\n");
    }
    return out;
}

// A line below the table, wrapped to the width with a hanging indent.
std::string trailer(const std::string& lead, const std::string& text, std::size_t width) {
    const std::size_t indent = display_width(lead);
    const std::size_t room = width > indent + kMinWrapWidth ? width - indent : kMinWrapWidth;
    std::string out;
    const auto lines = wrap_text(text, room);
    for (std::size_t i = 0; i < lines.size(); ++i) out += (i ? std::string(indent, ' ') : lead) + lines[i] + "\n";
    return out;
}

}  // namespace

std::vector<std::string> wrap_text(const std::string& text, std::size_t width) {
    std::vector<std::string> lines;
    std::string line;
    std::size_t start = 0;
    width = std::max<std::size_t>(width, 1);
    while (start < text.size()) {
        std::size_t end = text.find(' ', start);
        if (end == std::string::npos) end = text.size();
        std::string word = text.substr(start, end - start);
        start = end + 1;
        while (display_width(word) > width) {  // a word longer than a line is cut
            if (!line.empty()) lines.push_back(std::exchange(line, {}));
            const std::size_t cut = utf8_bytes(word, width);
            lines.push_back(word.substr(0, cut));
            word.erase(0, cut);
        }
        if (word.empty()) continue;
        if (!line.empty() && display_width(line) + 1 + display_width(word) > width) lines.push_back(std::exchange(line, {}));
        line += (line.empty() ? "" : " ") + word;
    }
    if (!line.empty() || lines.empty()) lines.push_back(line);
    return lines;
}

std::string render_grid(TextGrid grid, bool markdown, std::size_t width, bool may_shed) {
    const Layout layout = fit(grid, markdown ? 0 : width, may_shed);
    std::string out = emit_row(grid.titles, layout, std::vector<bool>(grid.titles.size(), false), markdown);
    std::vector<std::string> rule;
    for (std::size_t c = 0; c < layout.widths.size(); ++c) {
        std::string dashes(layout.widths[c], '-');
        if (markdown && grid.right[c] && !dashes.empty()) dashes.back() = ':';
        rule.push_back(dashes);
    }
    out += emit_row(rule, layout, std::vector<bool>(rule.size(), false), markdown);
    for (const auto& row : grid.cells) out += emit_row(row, layout, grid.right, markdown);
    for (std::size_t i = 0; i < layout.footnotes.size(); ++i)
        out += trailer(fmt::format("[{}] ", i + 1), layout.footnotes[i], width);
    if (!layout.left_out.empty()) {
        std::vector<const Column*> left_out = layout.left_out;
        std::sort(left_out.begin(), left_out.end(), std::less<const Column*>());  // in the table's order
        std::vector<std::string> keys;
        for (const auto* column : left_out) keys.push_back(column->key);
        out += trailer("", fmt::format("({} column{} left out to fit {} characters: {}; --columns KEY,KEY chooses, "
                                       "--columns all shows all)",
                                       keys.size(), keys.size() == 1 ? "" : "s", width, join(keys, ", ")),
                       width);
    }
    return out;
}

}  // namespace inferbench::report::detail
