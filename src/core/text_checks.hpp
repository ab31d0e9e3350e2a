// Checks on the text users type: is it UTF-8 (names and paths end up in JSON, which must be), and
// which known name did a misspelt one mean.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace inferbench {

// The offset of the first byte that does not belong to a well-formed UTF-8 sequence, or nothing.
std::optional<std::size_t> invalid_utf8_offset(std::string_view text);

// "not valid UTF-8 (byte 0xE9 at offset 3)" for messages, or nothing when the text is valid.
std::optional<std::string> utf8_problem(std::string_view text);

// The text with every byte that is not part of valid UTF-8 written as \xHH, fit to print.
std::string escape_invalid_utf8(std::string_view text);

// The text as a terminal may show it: control characters (C0, DEL, C1: what starts an escape sequence,
// moves the cursor or rings the bell) written as \xHH or \uHHHH, bytes that are not valid UTF-8 as \xHH,
// everything else as it is. For names and other stored text in human output.
std::string printable_text(std::string_view text);

// Levenshtein distance (insert, delete, substitute: 1 each).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `value`, when it is close enough to be a likely typo (at most 2 edits, and
// fewer than half the value's length); the first of equally near ones.
std::optional<std::string> closest_name(std::string_view value, const std::vector<std::string>& candidates);

// "; did you mean NAME?" or "".
std::string did_you_mean(std::string_view value, const std::vector<std::string>& candidates);

}  // namespace inferbench
