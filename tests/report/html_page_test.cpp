// The HTML machinery: escaping, the data block, downsampling, the page's frame.
#include "report/html_page.hpp"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "common/scratch_dir.hpp"
#include "core/error.hpp"
#include "report/html_assets.hpp"
#include "report/html_fixture.hpp"

namespace inferbench::report {
namespace {

using testing::occurrences;

TEST(HtmlEscape, EscapesEveryMarkupCharacter) {
    EXPECT_EQ(html_escape("<script>alert('x') & \"y\"</script>"),
              "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;");
    EXPECT_EQ(html_escape("plain µs text"), "plain µs text");
}

TEST(ScriptJson, NoStringCanCloseTheScriptElement) {
    const nlohmann::json value = {{"name", "</script><script>alert(1)</script>"}, {"amp", "a & b <!-- c"}};
    const std::string text = script_json(value);
    EXPECT_EQ(text.find('<'), std::string::npos) << text;
    EXPECT_EQ(text.find('>'), std::string::npos) << text;
    EXPECT_EQ(text.find('&'), std::string::npos) << text;
    EXPECT_EQ(nlohmann::json::parse(text), value);  // \u003c is plain JSON: the page reads the same strings
}

TEST(ScriptJson, ReplacesInvalidUtf8InsteadOfThrowing) {
    const nlohmann::json value = {{"name", std::string("bad \xff byte")}};
    EXPECT_EQ(nlohmann::json::parse(script_json(value))["name"], "bad \xEF\xBF\xBD byte");
}

TEST(Downsample, ShortSeriesStayAsTheyAre) {
    std::vector<double> x = {0, 1, 2}, y = {5, 6, 7};
    downsample_min_max(x, y, 10);
    EXPECT_EQ(x, (std::vector<double>{0, 1, 2}));
    EXPECT_EQ(y, (std::vector<double>{5, 6, 7}));
}

TEST(Downsample, KeepsEveryBucketsExtremesInOrder) {
    std::vector<double> x, y;
    for (int i = 0; i < 100'000; ++i) {
        x.push_back(i);
        y.push_back(i % 10);  // 0..9 in every bucket of 1000
    }
    y[54'321] = 1000;  // a spike
    y[77'777] = -5;    // a dip
    downsample_min_max(x, y, 5000);
    ASSERT_EQ(x.size(), 5000u);
    ASSERT_EQ(y.size(), 5000u);
    EXPECT_TRUE(std::is_sorted(x.begin(), x.end()));
    EXPECT_EQ(*std::max_element(y.begin(), y.end()), 1000);
    EXPECT_EQ(*std::min_element(y.begin(), y.end()), -5);
    EXPECT_NE(std::find(x.begin(), x.end(), 54'321), x.end());
    // Every bucket but the dip's still shows the full 0..9 range.
    EXPECT_EQ(std::count(y.begin(), y.end(), 9.0), 2499);
}

TEST(Downsample, GapsStayGaps) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    std::vector<double> x, y;
    for (int i = 0; i < 40; ++i) {
        x.push_back(i);
        y.push_back(i >= 10 && i < 20 ? nan : i);
    }
    downsample_min_max(x, y, 8);  // 4 buckets of 10: the second has only gaps
    ASSERT_EQ(x.size(), 7u);
    EXPECT_EQ(x[2], 10);
    EXPECT_TRUE(std::isnan(y[2]));
    EXPECT_EQ(y.front(), 0);
    EXPECT_EQ(y.back(), 39);
}

TEST(ChartValue, KeepsSixSignificantDigits) {
    EXPECT_EQ(chart_value(1.234567891), 1.23457);
    EXPECT_EQ(chart_value(123456789.0), 123457000.0);
    EXPECT_EQ(chart_value(0.0000412345678), 0.0000412346);
    EXPECT_EQ(chart_value(0), 0);
}

TEST(JsonEntries, FlattensObjectsAndArrays) {
    const auto entries = json_entries(nlohmann::json::parse(R"({"host":"vm","libraries":{"fmt":"9.1.0"},
        "gpus":{"devices":[{"name":"NVIDIA H200"}]},"cores":2,"empty":{}})"));
    const std::vector<std::pair<std::string, std::string>> expected = {{"cores", "2"},
                                                                       {"empty", "{}"},
                                                                       {"gpus.devices[0].name", "NVIDIA H200"},
                                                                       {"host", "vm"},
                                                                       {"libraries.fmt", "9.1.0"}};
    EXPECT_EQ(entries, expected);
}

TEST(FormatUtc, IsoLikeText) { EXPECT_EQ(format_utc(1'700'000'003'999), "2023-11-14 22:13:23 UTC"); }

TEST(EmbeddedAssets, AreWholeAndCannotEndTheirScriptElement) {
    EXPECT_GT(html_assets::uplot_js().size(), 30'000u);
    EXPECT_NE(html_assets::uplot_js().find("uPlot"), std::string_view::npos);
    EXPECT_NE(html_assets::uplot_css().find(".uplot"), std::string_view::npos);
    EXPECT_NE(html_assets::uplot_license().find("MIT"), std::string_view::npos);
    EXPECT_NE(html_assets::uplot_version().find("uplot 1.6."), std::string_view::npos);
    for (const auto script : {html_assets::uplot_js(), html_assets::page_js()}) {
        std::string lower(script);
        for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        EXPECT_EQ(lower.find("</script"), std::string::npos);
        EXPECT_EQ(lower.find("<!--"), std::string::npos);
    }
    EXPECT_EQ(html_assets::page_js().find("innerHTML"), std::string_view::npos);
}

TEST(HtmlPage, FrameCarriesLicensePolicyAndScripts) {
    HtmlPage page("a <title> & more");
    page.open_section("Section \"one\"", "one");
    page.definition_list({{"key <k>", "value & v"}});
    page.list({"item <i>"});
    page.close_section();
    const std::string html = page.finish();
    EXPECT_TRUE(html.starts_with("<!DOCTYPE html>\n"));
    EXPECT_NE(html.find("<title>a &lt;title&gt; &amp; more</title>"), std::string::npos);
    EXPECT_NE(html.find("<dt>key &lt;k&gt;</dt><dd>value &amp; v</dd>"), std::string::npos);
    EXPECT_NE(html.find("<li>item &lt;i&gt;</li>"), std::string::npos);
    EXPECT_NE(html.find("<h2>Section &quot;one&quot;</h2>"), std::string::npos);
    // The license of the embedded library, inside a comment.
    const auto comment = html.find("<!-- Charts: uPlot");
    ASSERT_NE(comment, std::string::npos);
    const auto license = html.find("Permission is hereby granted, free of charge");
    ASSERT_NE(license, std::string::npos);
    EXPECT_GT(license, comment);
    EXPECT_LT(license, html.find("-->", comment));
    // Only the page's own scripts may run: both carry the policy's nonce.
    const auto policy = html.find("script-src 'nonce-");
    ASSERT_NE(policy, std::string::npos);
    const std::string nonce = html.substr(policy + 18, 32);
    EXPECT_EQ(occurrences(html, "<script nonce=\"" + nonce + "\">"), 2u);
    EXPECT_EQ(occurrences(html, "<script"), 3u);  // and the data block
    EXPECT_NE(html.find("default-src 'none'"), std::string::npos);
    // A second page gets another nonce.
    EXPECT_EQ(HtmlPage("x").finish().find(nonce), std::string::npos);
}

TEST(HtmlPage, TablesCarrySortValuesAndTypes) {
    Table table;
    table.name = "t<1>";
    table.columns = {{"name", "name"}, {"mean_ms", "mean"}, {"rate", "rate", 1}, {"n", "n"}};
    table.rows = {{std::string("a<b"), Duration{1'500'000}, 12.345, std::int64_t{7}},
                  {std::string("c"), Null{}, Null{}, Null{}}};
    HtmlPage page("t");
    page.table(table);
    const std::string html = page.finish();
    EXPECT_NE(html.find("data-table=\"t&lt;1&gt;\""), std::string::npos);
    EXPECT_NE(html.find("<th data-type=\"text\" data-key=\"name\" scope=\"col\">name</th>"), std::string::npos);
    EXPECT_NE(html.find("<th data-type=\"num\" data-key=\"mean_ms\" scope=\"col\">mean</th>"), std::string::npos);
    EXPECT_NE(html.find("<tr><td>a&lt;b</td><td class=\"num\" data-v=\"1500000.0\">1.50 ms</td>"
                        "<td class=\"num\" data-v=\"12.345\">12.3</td><td class=\"num\" data-v=\"7\">7</td></tr>"),
              std::string::npos);
    EXPECT_NE(html.find("<tr><td>c</td><td></td><td></td><td></td></tr>"), std::string::npos);
}

TEST(HtmlPage, ChartsGoIntoTheDataBlock) {
    HtmlPage page("t");
    Chart chart{.title = "latency <ms>", .x_label = "iteration", .y_label = "ms"};
    chart.series.push_back({.label = "</script>", .x = {0, 1, 2}, .y = {1.0, std::nan(""), 3.0000001}});
    page.chart(chart);
    EXPECT_EQ(page.chart_count(), 1u);
    const std::string html = page.finish();
    EXPECT_NE(html.find("<figure class=\"chart\" data-chart=\"0\"><figcaption>latency &lt;ms&gt;</figcaption>"),
              std::string::npos);
    const auto data = testing::page_data(html);
    ASSERT_TRUE(data.is_object());
    const auto& spec = data["charts"][0];
    EXPECT_EQ(spec["type"], "line");
    EXPECT_EQ(spec["series"][0]["label"], "</script>");
    EXPECT_EQ(spec["series"][0]["y"], nlohmann::json::parse("[1.0, null, 3.0]"));
}

TEST(WriteTextFile, CreatesFoldersAndSaysWhyItFails) {
    inferbench::testing::ScratchDir dir;
    write_text_file(dir.path() / "a" / "b" / "page.html", "hello");
    EXPECT_EQ(testing::read_text(dir.path() / "a" / "b" / "page.html"), "hello");
    dir.write("file", "x");
    EXPECT_THROW(write_text_file(dir.path() / "file" / "page.html", "x"), EnvironmentError);
}

}  // namespace
}  // namespace inferbench::report
