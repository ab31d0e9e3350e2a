// Which nvidia-smi format a file is, told from its content, and the one-line refusal of anything else.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "telemetry/nvidia_smi.hpp"
#include "telemetry/nvidia_smi_fixtures.hpp"

namespace inferbench::telemetry {
namespace {

using ::testing::HasSubstr;
using testing::smi_fixture;

TEST(NvidiaSmiLog, EachFixtureIsToldApartByItsContent) {
    const std::pair<const char*, const char*> files[] = {{"h200-idle-q.txt", "q-text"},
                                                         {"h200-load-q-5x1s.txt", "q-text"},
                                                         {"h200-idle-q.xml", "q-xml"},
                                                         {"h200-idle-query.csv", "query-csv"},
                                                         {"h200-load-query-200ms.csv", "query-csv"},
                                                         {"h200-idle-dmon.txt", "dmon"},
                                                         {"h200-load-dmon.txt", "dmon"}};
    for (const auto& [file, format] : files) {
        EXPECT_EQ(parse_nvidia_smi_log(smi_fixture(file), file).format, format) << file;
    }
}

TEST(NvidiaSmiLog, WindowsLineEndingsAndAByteOrderMark) {
    std::string text = smi_fixture("h200-load-q-5x1s.txt");
    std::string crlf = "\xEF\xBB\xBF";
    for (const char c : text) {
        if (c == '\n') crlf += '\r';
        crlf += c;
    }
    const auto log = parse_nvidia_smi_log(crlf, "crlf.txt");
    ASSERT_EQ(log.samples.size(), 5u);
    EXPECT_EQ(log.samples[3].power_w, 734.25);
    EXPECT_EQ(log.samples[3].clock_event_reasons, clock_event::kSwPowerCap);
    EXPECT_EQ(log.driver_version, "580.159.04");
}

std::string refusal(const std::string& text, const std::string& file) {
    try {
        parse_nvidia_smi_log(text, file);
    } catch (const UserError& e) {
        return e.what();
    }
    return "accepted";
}

TEST(NvidiaSmiLog, AnythingElseIsRefusedWithOneLine) {
    const std::string expected = "not an nvidia-smi log (expected -q, -q -x, --query-gpu CSV or dmon output)";
    EXPECT_EQ(refusal("nothing to see here\n", "notes.txt"), "notes.txt: " + expected);
    EXPECT_EQ(refusal(std::string("\x7f"
                                  "ELF\x02\x01\x01\0\0\0",
                                  10),
                      "a.out"),
              "a.out: " + expected);
    EXPECT_EQ(refusal("[04/01/2024-10:00:00] [I] === Performance summary ===\n", "trtexec.log"),
              "trtexec.log: " + expected);
    EXPECT_EQ(refusal("", "empty.txt"),
              "empty.txt: the file is empty; expected nvidia-smi -q, -q -x, --query-gpu CSV or dmon output");
    EXPECT_EQ(refusal(" \n\n", "blank.txt"),
              "blank.txt: the file is empty; expected nvidia-smi -q, -q -x, --query-gpu CSV or dmon output");
    EXPECT_EQ(refusal("0, 691.39, 53\n", "three.csv"),
              "three.csv: " + expected +
                  "; a --query-gpu CSV without header line needs the fields it was queried with: its first line has "
                  "3 columns, the field list 15");
    // A dmon header and nothing after it.
    EXPECT_THAT(refusal("# gpu    pwr  gtemp\n# Idx      W      C\n", "dmon.txt"),
                HasSubstr("dmon.txt: nvidia-smi dmon output without a single GPU reading in it (cut short?)"));
    // Every line broken: the first problem is named.
    EXPECT_EQ(refusal("# gpu    pwr  gtemp\n    0     x     34\n", "bad-dmon.txt"),
              "bad-dmon.txt: nvidia-smi dmon output without a single GPU reading in it (cut short?); first problem: "
              "line 2: 'x' is not a reading of pwr; skipped");
}

}  // namespace
}  // namespace inferbench::telemetry
