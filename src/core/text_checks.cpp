#include "core/text_checks.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>

#include <fmt/format.h>

namespace inferbench {
namespace {

// The length of the well-formed sequence starting at text[i], or 0 (RFC 3629: no overlong forms,
// no surrogates, nothing above U+10FFFF).
std::size_t sequence_length(std::string_view text, std::size_t i) {
    const auto byte = [&](std::size_t k) { return static_cast<std::uint8_t>(text[k]); };
    const std::uint8_t lead = byte(i);
    if (lead < 0x80) return 1;
    std::size_t length = 0;
    std::uint8_t low = 0x80, high = 0xBF;  // the allowed range of the second byte
    if (lead >= 0xC2 && lead <= 0xDF) length = 2;
    else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        if (lead == 0xE0) low = 0xA0;
        if (lead == 0xED) high = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        if (lead == 0xF0) low = 0x90;
        if (lead == 0xF4) high = 0x8F;
    } else {
        return 0;
    }
    if (i + length > text.size()) return 0;
    if (byte(i + 1) < low || byte(i + 1) > high) return 0;
    for (std::size_t k = 2; k < length; ++k)
        if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
    return length;
}

}  // namespace

std::optional<std::size_t> invalid_utf8_offset(std::string_view text) {
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t length = sequence_length(text, i);
        if (length == 0) return i;
        i += length;
    }
    return std::nullopt;
}

std::optional<std::string> utf8_problem(std::string_view text) {
    const auto offset = invalid_utf8_offset(text);
    if (!offset) return std::nullopt;
    return fmt::format("not valid UTF-8 (byte 0x{:02X} at offset {})", static_cast<std::uint8_t>(text[*offset]),
                       *offset);
}

std::string escape_invalid_utf8(std::string_view text) {
    std::string out;
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t length = sequence_length(text, i);
        if (length == 0) {
            out += fmt::format("\\x{:02X}", static_cast<std::uint8_t>(text[i]));
            ++i;
        } else {
            out.append(text.substr(i, length));
            i += length;
        }
    }
    return out;
}

std::string printable_text(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t length = sequence_length(text, i);
        const auto lead = static_cast<std::uint8_t>(text[i]);
        if (length == 0 || (length == 1 && (lead < 0x20 || lead == 0x7F))) {
            out += fmt::format("\\x{:02X}", lead);
        } else if (length == 2 && lead == 0xC2 && static_cast<std::uint8_t>(text[i + 1]) < 0xA0) {
            out += fmt::format("\\u{:04X}", static_cast<std::uint8_t>(text[i + 1]));  // U+0080 to U+009F
        } else {
            out.append(text.substr(i, length));
        }
        i += std::max<std::size_t>(length, 1);
    }
    return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    std::iota(row.begin(), row.end(), std::size_t{0});
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

std::optional<std::string> closest_name(std::string_view value, const std::vector<std::string>& candidates) {
    std::optional<std::string> best;
    if (value.empty()) return best;
    const std::size_t limit = std::min<std::size_t>(2, (value.size() - 1) / 2);
    std::size_t best_distance = limit + 1;
    for (const auto& candidate : candidates) {
        const std::size_t distance = edit_distance(value, candidate);
        if (distance < best_distance) {
            best = candidate;
            best_distance = distance;
        }
    }
    return best;
}

std::string did_you_mean(std::string_view value, const std::vector<std::string>& candidates) {
    const auto name = closest_name(value, candidates);
    return name ? fmt::format("; did you mean {}?", *name) : "";
}

}  // namespace inferbench
