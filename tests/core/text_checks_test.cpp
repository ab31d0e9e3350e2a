#include "core/text_checks.hpp"

#include <gtest/gtest.h>

namespace inferbench {
namespace {

TEST(Utf8, FindsTheFirstBadByte) {
    EXPECT_EQ(invalid_utf8_offset(""), std::nullopt);
    EXPECT_EQ(invalid_utf8_offset("resnet50"), std::nullopt);
    EXPECT_EQ(invalid_utf8_offset("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), std::nullopt);  // é € 😀
    EXPECT_EQ(invalid_utf8_offset("caf\xe9"), 3u);            // Latin-1 é
    EXPECT_EQ(invalid_utf8_offset("ab\xc3"), 2u);             // cut short
    EXPECT_EQ(invalid_utf8_offset("\xc0\xaf"), 0u);           // overlong '/'
    EXPECT_EQ(invalid_utf8_offset("\xed\xa0\x80"), 0u);       // a surrogate
    EXPECT_EQ(invalid_utf8_offset("\xf4\x90\x80\x80"), 0u);   // above U+10FFFF
    EXPECT_EQ(invalid_utf8_offset("a\x80"), 1u);              // a lone continuation byte
}

TEST(Utf8, ProblemAndEscapedText) {
    EXPECT_EQ(utf8_problem("ok"), std::nullopt);
    EXPECT_EQ(utf8_problem("caf\xe9"), "not valid UTF-8 (byte 0xE9 at offset 3)");
    EXPECT_EQ(escape_invalid_utf8("caf\xe9/\xc3\xa9\xff"), "caf\\xE9/\xc3\xa9\\xFF");
}

// A name holding an escape sequence is shown, not obeyed: ESC, BEL, CR, DEL and C1's CSI are written out.
TEST(Utf8, PrintableTextEscapesControlCharacters) {
    EXPECT_EQ(printable_text("resnet50 caf\xc3\xa9 \xe2\x9c\x93"), "resnet50 caf\xc3\xa9 \xe2\x9c\x93");
    EXPECT_EQ(printable_text("\x1b[31mred\x1b[0m"), "\\x1B[31mred\\x1B[0m");
    EXPECT_EQ(printable_text("a\tb\nc\rd\x07\x7f"), "a\\x09b\\x0Ac\\x0Dd\\x07\\x7F");
    EXPECT_EQ(printable_text("\xc2\x9b" "2J \xc2\xa0"), "\\u009B2J \xc2\xa0");
    EXPECT_EQ(printable_text("caf\xe9"), "caf\\xE9");
    EXPECT_EQ(printable_text(std::string_view("a\0b", 3)), "a\\x00b");
}

TEST(Suggestions, EditDistance) {
    EXPECT_EQ(edit_distance("", ""), 0u);
    EXPECT_EQ(edit_distance("duration", "durration"), 1u);
    EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
    EXPECT_EQ(edit_distance("", "abc"), 3u);
}

TEST(Suggestions, OnlyLikelyTyposAreSuggested) {
    const std::vector<std::string> flags = {"--duration", "--warmup", "--db", "--dry-run"};
    EXPECT_EQ(closest_name("--durration", flags), "--duration");
    EXPECT_EQ(closest_name("--dryrun", flags), "--dry-run");
    EXPECT_EQ(closest_name("--colour", flags), std::nullopt);
    EXPECT_EQ(closest_name("", flags), std::nullopt);
    EXPECT_EQ(closest_name("x", {"y"}), std::nullopt);  // one letter of one: no guess
    EXPECT_EQ(did_you_mean("runn", {"run", "report"}), "; did you mean run?");
    EXPECT_EQ(did_you_mean("zzzz", {"run", "report"}), "");
}

}  // namespace
}  // namespace inferbench
