#include "report/table_text.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
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
    std::vector<std::string> constants;  // "device: cpu": columns with one value in every row, said above the table
    std::vector<std::string> footnotes;  // texts moved below the table, numbered from 1
    std::vector<const Column*> left_out;  // columns left out for width
    std::vector<std::vector<std::size_t>> parts;  // the columns of each part, when the table continues below
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

void remove_column(TextGrid& grid, Layout& layout, std::size_t c) {
    grid.columns.erase(grid.columns.begin() + static_cast<std::ptrdiff_t>(c));
    grid.titles.erase(grid.titles.begin() + static_cast<std::ptrdiff_t>(c));
    grid.right.erase(grid.right.begin() + static_cast<std::ptrdiff_t>(c));
    layout.widths.erase(layout.widths.begin() + static_cast<std::ptrdiff_t>(c));
    for (auto& row : grid.cells) row.erase(row.begin() + static_cast<std::ptrdiff_t>(c));
}

void erase_column(TextGrid& grid, Layout& layout, std::size_t c) {
    layout.left_out.push_back(grid.columns[c]);
    remove_column(grid, layout, c);
}

// The one value every row has in column c, if they all have the same one (two rows or more).
std::optional<std::string> constant_value(const TextGrid& grid, std::size_t c) {
    if (grid.cells.size() < 2 || grid.cells.front()[c].empty()) return std::nullopt;
    const std::string& first = grid.cells.front()[c];
    for (const auto& row : grid.cells)
        if (row[c] != first) return std::nullopt;
    return first;
}

// The first measure for width: a column that names what rows measured (identity), or a text column
// that may be left out, whose value is the same in every row, says it once, above the table ("device:
// cpu"), so that the columns telling rows apart keep their room. Figures and notes stay in the table.
void collapse_constant_columns(TextGrid& grid, Layout& layout) {
    std::vector<std::string> said;
    for (std::size_t c = 0; c < grid.columns.size() && grid.columns.size() > 1;) {
        const Column& column = *grid.columns[c];
        const bool may_move = column.identity || (column.shed > 0 && column.fit != Fit::footnote && !grid.right[c]);
        const auto value = may_move ? constant_value(grid, c) : std::nullopt;
        if (!value) {
            ++c;
            continue;
        }
        said.push_back(fmt::format("{}: {}", grid.titles[c], *value));
        remove_column(grid, layout, c);
    }
    layout.constants = std::move(said);
}

// Whether a column may be left out for width: neither a headline figure (shed 0) nor one that tells
// rows apart (identity: those with one value were said above the table by now).
bool sheddable(const Column& column) { return column.shed > 0 && !column.identity; }

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

// The column to leave out next: the highest `shed`, the rightmost of equals; none when none may go.
std::optional<std::size_t> next_to_shed(const TextGrid& grid) {
    std::optional<std::size_t> pick;
    for (std::size_t c = 0; c < grid.columns.size(); ++c) {
        if (!sheddable(*grid.columns[c])) continue;
        if (!pick || grid.columns[c]->shed >= grid.columns[*pick]->shed) pick = c;
    }
    return pick;
}

// The longest run of `text` between `separators`, each but a space kept with the run it ends.
std::size_t longest_run(std::string_view text, std::string_view separators) {
    std::size_t longest = 0;
    for (std::size_t start = 0; start <= text.size();) {
        const std::size_t end = std::min(text.find_first_of(separators, start), text.size());
        const std::size_t kept = end < text.size() && text[end] != ' ' ? end + 1 : end;
        longest = std::max(longest, display_width(text.substr(start, kept - start)));
        start = end + 1;
    }
    return longest;
}

std::size_t longest_in_column(const TextGrid& grid, std::size_t c, std::string_view separators) {
    std::size_t longest = longest_run(grid.titles[c], separators);
    for (const auto& row : grid.cells) longest = std::max(longest, longest_run(row[c], separators));
    return longest;
}

// The narrowest a wrapped column may get: its longest word, so that no name is cut; where a word is
// longer than kMinWrapWidth (a path), its longest piece between the characters a long name breaks
// after (wrap_text), so that a path breaks at its '/' and not inside a name; only a piece longer than
// twice that is cut anyway, at kNarrowestWrap.
std::size_t narrowest(const TextGrid& grid, std::size_t c) {
    const std::size_t word = longest_in_column(grid, c, " ");
    if (word <= kMinWrapWidth) return std::max(word, kNarrowestWrap);
    const std::size_t piece = longest_in_column(grid, c, " /-_");
    return piece > 2 * kMinWrapWidth ? kNarrowestWrap : std::max(piece, kNarrowestWrap);
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

bool values_distinct(const TextGrid& grid, std::size_t c) {
    std::set<std::string> seen;
    for (const auto& row : grid.cells)
        if (row[c].empty() || !seen.insert(row[c]).second) return false;
    return true;
}

// The columns that head every part of a table continued below: those that tell rows apart (else the
// first), or, where they take more than half the width, the first of them that alone tells every row
// apart (the benchmark id).
std::vector<std::size_t> heading_columns(const TextGrid& grid, const Layout& layout, std::size_t width) {
    std::vector<std::size_t> heads;
    std::vector<std::size_t> widths;
    for (std::size_t c = 0; c < grid.columns.size(); ++c) {
        if (!grid.columns[c]->identity) continue;
        heads.push_back(c);
        widths.push_back(layout.widths[c]);
    }
    if (heads.empty()) return grid.columns.empty() ? heads : std::vector<std::size_t>{0};
    if (total_width(widths) <= width / 2) return heads;
    for (const auto c : heads)
        if (values_distinct(grid, c)) return {c};
    return heads;
}

// The columns that may not go still do not fit: the table continues below, in parts that each fit (a
// column wider than the room left beside the heading columns gets a part of its own), every part
// headed by the columns that tell its rows apart.
void split_into_parts(const TextGrid& grid, Layout& layout, std::size_t width) {
    const auto heads = heading_columns(grid, layout, width);
    std::vector<std::size_t> head_widths;
    for (const auto c : heads) head_widths.push_back(layout.widths[c]);
    std::vector<std::size_t> part = heads, part_widths = head_widths;
    for (std::size_t c = 0; c < grid.columns.size(); ++c) {
        if (std::find(heads.begin(), heads.end(), c) != heads.end()) continue;
        part_widths.push_back(layout.widths[c]);
        if (part.size() > heads.size() && total_width(part_widths) > width) {
            layout.parts.push_back(std::exchange(part, heads));
            part_widths = head_widths;
            part_widths.push_back(layout.widths[c]);
        }
        part.push_back(c);
    }
    layout.parts.push_back(std::move(part));
}

Layout fit(TextGrid& grid, std::size_t width, bool may_shed) {
    Layout layout;
    for (std::size_t c = 0; c < grid.columns.size(); ++c) layout.widths.push_back(natural_width(grid, c));
    if (width == 0 || total_width(layout.widths) <= width) return layout;
    if (may_shed) collapse_constant_columns(grid, layout);
    if (total_width(layout.widths) <= width) return layout;
    const std::vector<std::size_t> natural = layout.widths;
    for (std::size_t c = 0; c < grid.columns.size(); ++c) {
        if (grid.columns[c]->fit == Fit::footnote) move_to_footnotes(grid, layout, c);
        if (grid.columns[c]->fit == Fit::wrap)
            layout.widths[c] = std::min(natural[c], std::max(kMinWrapWidth, narrowest(grid, c)));
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
    if (may_shed && total_width(layout.widths) > width) {
        split_into_parts(grid, layout, width);
        return layout;
    }
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
        while (display_width(word) > width) {  // a word longer than a line is cut, after a '/', '-' or '_' if it has one
            if (!line.empty()) lines.push_back(std::exchange(line, {}));
            std::size_t cut = utf8_bytes(word, width);
            if (const auto at = word.find_last_of("/-_", cut - 1); at != std::string::npos && at > 0) cut = at + 1;
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

namespace {

// The heading, rule and rows of the columns `part` of the fitted grid.
std::string emit_part(const TextGrid& grid, const Layout& layout, const std::vector<std::size_t>& part, bool markdown) {
    Layout slice;
    std::vector<std::string> titles, rule;
    std::vector<bool> right;
    for (const auto c : part) {
        slice.widths.push_back(layout.widths[c]);
        titles.push_back(grid.titles[c]);
        right.push_back(grid.right[c]);
        std::string dashes(layout.widths[c], '-');
        if (markdown && grid.right[c] && !dashes.empty()) dashes.back() = ':';
        rule.push_back(std::move(dashes));
    }
    std::string out = emit_row(titles, slice, std::vector<bool>(part.size(), false), markdown);
    out += emit_row(rule, slice, std::vector<bool>(part.size(), false), markdown);
    for (const auto& row : grid.cells) {
        std::vector<std::string> cells;
        for (const auto c : part) cells.push_back(row[c]);
        out += emit_row(cells, slice, right, markdown);
    }
    return out;
}

}  // namespace

std::string render_grid(TextGrid grid, bool markdown, std::size_t width, bool may_shed) {
    Layout layout = fit(grid, markdown ? 0 : width, may_shed);
    std::string out;
    if (!layout.constants.empty()) out += trailer("", join(layout.constants, " · "), width);
    if (layout.parts.empty()) {
        std::vector<std::size_t> all(grid.columns.size());
        for (std::size_t c = 0; c < all.size(); ++c) all[c] = c;
        layout.parts.push_back(std::move(all));
    }
    for (std::size_t p = 0; p < layout.parts.size(); ++p) {
        if (p) out += "\n";
        out += emit_part(grid, layout, layout.parts[p], markdown);
    }
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
