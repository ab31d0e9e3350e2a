// The HTML pages in a real browser: Debian's Chromium, headless (scripts/setup.sh installs it). The
// page renders, its script runs without a console message, every chart draws series pixels, the
// tables sort on a click, hostile names stay text, the results come before the findings and compare's
// verdicts are on screen, and the screenshot is not blank (INFERBENCH_KEEP_SCREENSHOTS=DIR keeps two).
#include <algorithm>
#include <cstdlib>
#include <map>
#include <regex>

#include <gtest/gtest.h>

#include "common/pipeline_store.hpp"
#include "common/scratch_dir.hpp"
#include "core/process/subprocess.hpp"
#include "findings/findings.hpp"
#include "report/comparison.hpp"
#include "report/html_fixture.hpp"
#include "report/html_page.hpp"
#include "report/html_report.hpp"

namespace inferbench::report {
namespace {

using namespace testing;

// INFERBENCH_CHROMIUM, else chromium on PATH; empty when there is none.
std::string chromium() {
    if (const char* path = std::getenv("INFERBENCH_CHROMIUM"); path && *path) return path;
    const auto found = run_captured({"sh", "-c", "command -v chromium"}, std::nullopt, 10'000);
    std::string path = found.out.substr(0, found.out.find('\n'));
    return found.status.success() ? path : "";
}

class Browser : public ::testing::Test {
protected:
    void SetUp() override {
        exe = chromium();
        if (exe.empty()) GTEST_SKIP() << "chromium is not installed (scripts/setup.sh installs Debian's chromium)";
    }

    // Chromium on `page` with `mode` ("--dump-dom" or "--screenshot=FILE"); its own profile folder,
    // timers run until the page is idle (virtual time), console messages logged to stderr.
    CapturedRun open(const std::filesystem::path& page, const std::string& mode) const {
        const auto run =
            run_captured({exe, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                          "--disable-extensions", "--hide-scrollbars", "--mute-audio",
                          "--user-data-dir=" + (dir.path() / "profile").string(), "--enable-logging=stderr", "--v=0",
                          "--virtual-time-budget=10000", "--window-size=1280,2000", mode, "file://" + page.string()},
                         std::nullopt, 60'000);
        EXPECT_FALSE(run.timed_out) << "chromium did not finish within 60 s";
        EXPECT_TRUE(run.status.success()) << run.status.describe() << "\n" << run.err;
        return run;
    }

    // Console messages (errors, warnings, logs, refused scripts) of a run: the pages write none.
    static std::vector<std::string> console_lines(const CapturedRun& run) {
        std::vector<std::string> lines;
        std::size_t begin = 0;
        while (begin < run.err.size()) {
            const auto end = std::min(run.err.find('\n', begin), run.err.size());
            const std::string line = run.err.substr(begin, end - begin);
            if (line.find(":CONSOLE") != std::string::npos || line.find("Uncaught") != std::string::npos)
                lines.push_back(line);
            begin = end + 1;
        }
        return lines;
    }

    // The text of an attribute value as the DOM serializer escaped it.
    static std::string decode(std::string text) {
        for (const auto& [entity, ch] :
             {std::pair{"&quot;", "\""}, {"&lt;", "<"}, {"&gt;", ">"}, {"&#39;", "'"}, {"&amp;", "&"}}) {
            for (auto at = text.find(entity); at != std::string::npos; at = text.find(entity, at + 1))
                text.replace(at, std::string_view(entity).size(), ch);
        }
        return text;
    }

    // Adds `script` to the end of `page`'s body with the page's nonce (without it the script cannot run):
    // a probe that writes what it measures into <body data-...>.
    static void add_probe(const std::filesystem::path& page, const std::string& script) {
        std::string html = read_text(page);
        const auto at = html.find("script-src 'nonce-") + 18;
        const std::string nonce = html.substr(at, html.find('\'', at) - at);
        html.insert(html.rfind("</body>"), "<script nonce=\"" + nonce + "\">" + script + "</script>");
        write_text_file(page, html);
    }

    static std::string body_attribute(const std::string& dom, const std::string& name) {
        std::smatch match;
        const std::regex pattern("<body[^>]*\\s" + name + "=\"([^\"]*)\"");
        return std::regex_search(dom, match, pattern) ? match[1].str() : "";
    }

    // Renders `page` and checks what every page must do; returns the DOM.
    std::string check_rendered(const std::filesystem::path& page) const {
        const auto run = open(page, "--dump-dom");
        const std::string& dom = run.out;
        EXPECT_EQ(console_lines(run), std::vector<std::string>{});
        EXPECT_EQ(body_attribute(dom, "data-rendered"), "ok");
        const std::string html = read_text(page);
        const auto figures = occurrences(html, "<figure class=\"chart\"");
        EXPECT_GT(figures, 0u);
        EXPECT_EQ(body_attribute(dom, "data-charts"), std::to_string(figures));
        EXPECT_EQ(body_attribute(dom, "data-charts-drawn"), std::to_string(figures));
        EXPECT_EQ(occurrences(dom, "<canvas"), figures);
        // Every chart drew pixels in its series' colours.
        const std::regex ink("data-ink=\"([0-9]+)\"");
        std::size_t inked = 0;
        for (auto it = std::sregex_iterator(dom.begin(), dom.end(), ink); it != std::sregex_iterator(); ++it) {
            EXPECT_GT(std::stol((*it)[1].str()), 50) << "a chart without series pixels";
            ++inked;
        }
        EXPECT_EQ(inked, figures);
        // No element was made from data: as many scripts as written, no image.
        EXPECT_EQ(occurrences(dom, "<script"), 3u);
        EXPECT_EQ(dom.find("<img"), std::string::npos);
        return dom;
    }

    std::string exe;
    inferbench::testing::ScratchDir dir;
};

TEST_F(Browser, ReportRendersDrawsAndKeepsHostileNamesAsText) {
    write_html_fixture(dir.path() / "r.db");
    const auto results = store::ResultsStore::open(dir.path() / "r.db");
    const auto page = dir.path() / "report.html";
    write_html_report(results, results.benchmarks(), page);
    const std::string dom = check_rendered(page);
    EXPECT_NE(dom.find("<td>&lt;script&gt;alert(1)&lt;/script&gt;</td>"), std::string::npos);
    EXPECT_NE(dom.find("<td>\"quotes' &amp; ampersands</td>"), std::string::npos);
    EXPECT_NE(dom.find("&lt;img src=x onerror=alert(2)&gt;"), std::string::npos);
    // uPlot's legends hold the series names as text.
    EXPECT_NE(dom.find(">batch 8<"), std::string::npos);

    // The screenshot shows more than an empty page of the same size does.
    write_text_file(dir.path() / "blank.html", "<!DOCTYPE html><html><body></body></html>");
    open(dir.path() / "blank.html", "--screenshot=" + (dir.path() / "blank.png").string());
    open(page, "--screenshot=" + (dir.path() / "shot.png").string());
    const auto blank = std::filesystem::file_size(dir.path() / "blank.png");
    const auto shot = std::filesystem::file_size(dir.path() / "shot.png");
    EXPECT_GT(shot, 20'000u);
    EXPECT_GT(shot, 5 * blank) << "report " << shot << " B, blank page " << blank << " B";
}

TEST_F(Browser, FindingsFollowTheResultsGroupedByRuleAndKeepHostileNamesAsText) {
    write_html_fixture(dir.path() / "r.db");
    const auto results = store::ResultsStore::open(dir.path() / "r.db");
    const auto page = dir.path() / "report.html";
    const auto selected = results.benchmarks();
    const auto found = findings::explain(results, selected);
    ASSERT_FALSE(found.empty());
    write_html_report(results, selected, page, found);
    const std::string dom = check_rendered(page);
    const auto findings_at = dom.find("id=\"findings\"");
    ASSERT_NE(findings_at, std::string::npos);
    EXPECT_GT(findings_at, dom.find("id=\"benchmarks\"")) << "the results come first";
    // One closed <details> per rule, its summary line counting the rule's findings; inside, one row per
    // finding, its id and severity as text.
    const std::string section = dom.substr(findings_at, dom.find("</section>", findings_at) - findings_at);
    std::map<std::string, std::size_t> per_rule;
    for (const auto& f : found) ++per_rule[f.id];
    EXPECT_EQ(occurrences(section, "<details>"), per_rule.size()) << section;
    EXPECT_EQ(occurrences(section, "<tr>") + occurrences(section, "<tr "), found.size() + per_rule.size()) << section;
    for (const auto& [id, n] : per_rule) {
        const std::string line = " · " + id + ": " + std::to_string(n) + (n == 1 ? " finding," : " findings,");
        EXPECT_NE(section.find(line), std::string::npos) << line << "\n" << section;
        EXPECT_NE(section.find(">" + id + "<"), std::string::npos) << id;
    }
    // Statements quote model names: the hostile ones stay text.
    EXPECT_EQ(section.find("<script>alert"), std::string::npos);
    EXPECT_EQ(section.find("<img"), std::string::npos);

    // In the browser: the results table starts on the first screen (900 px), the findings below it.
    add_probe(page, R"(
      (function () {
        var topOf = function (id) { return Math.round(document.getElementById(id).getBoundingClientRect().top); };
        document.body.dataset.benchmarksTop = topOf("benchmarks");
        document.body.dataset.findingsTop = topOf("findings");
      })();)");
    const auto run = open(page, "--dump-dom");
    const long benchmarks_top = std::stol("0" + body_attribute(run.out, "data-benchmarks-top"));
    EXPECT_GT(benchmarks_top, 0);
    EXPECT_LT(benchmarks_top, 900) << "the results are pushed below the first screen";
    EXPECT_GT(std::stol("0" + body_attribute(run.out, "data-findings-top")), benchmarks_top);
    open(page, "--screenshot=" + (dir.path() / "report.png").string());
    if (const char* keep = std::getenv("INFERBENCH_KEEP_SCREENSHOTS"); keep && *keep)
        std::filesystem::copy_file(dir.path() / "report.png", std::filesystem::path(keep) / "report.png",
                                   std::filesystem::copy_options::overwrite_existing);
}

TEST_F(Browser, HeadingsSortTheTable) {
    write_html_fixture(dir.path() / "r.db");
    const auto results = store::ResultsStore::open(dir.path() / "r.db");
    const auto page = dir.path() / "report.html";
    write_html_report(results, results.benchmarks(), page);
    // Click "batch" twice (descending), then "model" once; the row order is written into <body>. The
    // script needs the page's nonce to run at all.
    add_probe(page, R"(
      (function () {
        var table = document.querySelector("table.sortable");
        var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
        var column = function (name) { return heads.findIndex(function (th) { return th.textContent === name; }); };
        var order = function (c) {
          return Array.prototype.map.call(table.tBodies[0].rows, function (r) { return r.cells[c].textContent; }).join("|");
        };
        heads[column("batch")].click();
        heads[column("batch")].click();
        document.body.dataset.batchDesc = order(column("batch"));
        heads[column("model")].click();
        document.body.dataset.modelAsc = order(column("model"));
        heads[column("mean")].click();
        document.body.dataset.meanAsc = order(column("mean"));
      })();)");
    const auto run = open(page, "--dump-dom");
    EXPECT_EQ(console_lines(run), std::vector<std::string>{});
    EXPECT_EQ(body_attribute(run.out, "data-batch-desc"), "32|8|4|1|1|1");
    const std::string script = kScriptModel, quotes = kQuotesModel, img = kImgModel;
    EXPECT_EQ(decode(body_attribute(run.out, "data-model-asc")),
              quotes + "|" + quotes + "|" + img + "|" + script + "|" + script + "|" + script);
    // Numerically, not as text ("10 ms" after "9 ms"), empty cells (the failed benchmark) last.
    const std::string means = decode(body_attribute(run.out, "data-mean-asc"));
    ASSERT_TRUE(means.ends_with("|")) << means;
    std::vector<double> ms;
    for (std::size_t begin = 0, end; (end = means.find('|', begin)) != std::string::npos; begin = end + 1) {
        if (end == begin) continue;
        ASSERT_EQ(means.substr(end - 3, 3), " ms") << means;
        ms.push_back(std::stod(means.substr(begin, end - begin)));
    }
    EXPECT_EQ(ms.size(), 5u) << means;
    EXPECT_TRUE(std::is_sorted(ms.begin(), ms.end())) << means;
    EXPECT_GT(ms.back(), 10 * ms.front()) << means;
}

TEST_F(Browser, PipelineSectionDrawsItsStackedBars) {
    {
        auto results = store::ResultsStore::open(dir.path() / "p.db");
        const auto run = inferbench::testing::add_run(results);
        inferbench::testing::add_pipeline_cell(results, run, inferbench::testing::decode_bound_cell(), 0, true);
    }
    const auto results = store::ResultsStore::open(dir.path() / "p.db");
    const auto page = dir.path() / "report.html";
    write_html_report(results, results.benchmarks(), page);
    const std::string dom = check_rendered(page);
    EXPECT_NE(dom.find("id=\"pipeline\""), std::string::npos);
    EXPECT_NE(dom.find(">up to decode<"), std::string::npos);  // the stacked bar's legend
}

TEST_F(Browser, ComparisonPageDrawsBars) {
    ComparisonSource a{.db = "<a>.db", .runs = {store::RunRecord{}}, .summaries = {}}, b{.db = "b.db", .runs = {store::RunRecord{}}, .summaries = {}};
    a.runs[0].run_id = 1;
    a.runs[0].host = "gpu01";
    a.runs[0].environment_json = R"({"gpus":{"devices":[{"index":0,"name":"NVIDIA <H200>"}]}})";
    b.runs[0].run_id = 4;
    b.runs[0].host = "gpu02";
    b.runs[0].environment_json = R"({"gpus":{"devices":[{"index":0,"name":"NVIDIA A100"}]}})";
    for (auto* source : {&a, &b}) {
        for (const std::int64_t batch : {1, 8}) {
            for (const char* model : {kScriptModel, kQuotesModel}) {
                analysis::BenchmarkSummary s;
                s.benchmark = fixture_record(source->runs[0].run_id, model, "torch", "cuda:0", "fp16", batch);
                s.e2e.count = 100;
                s.e2e.mean = 1e6 * static_cast<double>(batch) * (source == &a ? 1.0 : 2.0);
                s.throughput_per_s = 1e9 / s.e2e.mean * static_cast<double>(batch);
                s.telemetry.inferences_per_joule = source == &a ? 3.0 : 2.0;
                source->summaries.push_back(s);
            }
        }
    }
    const auto comparison = build_comparison({a, b}, "");
    const auto page = dir.path() / "compare.html";
    write_text_file(page, render_comparison_html(comparison));
    const std::string dom = check_rendered(page);
    EXPECT_NE(dom.find("[1] NVIDIA &lt;H200&gt;"), std::string::npos);
    EXPECT_NE(dom.find("[2] NVIDIA A100"), std::string::npos);  // a legend entry per device

    // The other side's verdict is on screen (1280 px wide) without scrolling sideways.
    add_probe(page, R"(
      (function () {
        var right = [];
        document.querySelectorAll("#comparison th").forEach(function (th) {
          if (/ verdict$/.test(th.textContent)) right.push(Math.round(th.getBoundingClientRect().right));
        });
        document.body.dataset.verdictRight = right.join(",");
      })();)");
    const auto run = open(page, "--dump-dom");
    const std::string rights = body_attribute(run.out, "data-verdict-right");
    ASSERT_FALSE(rights.empty()) << "no verdict column";
    EXPECT_EQ(std::count(rights.begin(), rights.end(), ','), 0) << "one verdict: the baseline has none: " << rights;
    for (std::size_t begin = 0, end = 0; end != std::string::npos; begin = end + 1) {
        end = rights.find(',', begin);
        EXPECT_LE(std::stol(rights.substr(begin, end - begin)), 1280) << "a verdict column off screen: " << rights;
    }
    open(page, "--screenshot=" + (dir.path() / "compare.png").string());
    if (const char* keep = std::getenv("INFERBENCH_KEEP_SCREENSHOTS"); keep && *keep)
        std::filesystem::copy_file(dir.path() / "compare.png", std::filesystem::path(keep) / "compare.png",
                                   std::filesystem::copy_options::overwrite_existing);
}

}  // namespace
}  // namespace inferbench::report
