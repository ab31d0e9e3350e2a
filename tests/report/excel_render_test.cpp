// The summary workbook as a real spreadsheet program draws it: LibreOffice (headless) prints it to PDF,
// pdftoppm renders the pages, and the charts must have drawn their lines, not only axes, a legend and
// markers (issue: every series without line properties drew nothing in LibreOffice). scripts/setup.sh
// installs LibreOffice Calc and poppler-utils for this test; without them it is skipped and says so.
// INFERBENCH_KEEP_SCREENSHOTS=DIR keeps the workbook and its PDF there.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/scratch_dir.hpp"
#include "core/process/subprocess.hpp"
#include "report/excel_report.hpp"
#include "report/report_fixture.hpp"

namespace inferbench::report {
namespace {

// Three batch sizes, 60 iterations 181 ms apart (longer than the workbook's 100 ms buckets) whose
// latency varies, and CPU samples every 100 ms: lines over time and against batch size.
ReportGroup drawn_group() {
    ReportGroup group;
    group.key = "cpu-tiny-null-fp32";
    group.title = "tiny / null / fp32 / cpu";
    std::int64_t id = 1;
    for (const std::int64_t batch : {1, 4, 16}) {
        ReportBenchmark b = testing::benchmark(id++, batch, 60);
        for (std::size_t i = 0; i < b.iterations.size(); ++i) {
            auto& it = b.iterations[i];
            it.start_ns = testing::kT0 + static_cast<std::int64_t>(i) * 181'000'000LL;
            const double wave = 1.0 + 0.3 * std::sin(static_cast<double>(i) / 5.0);
            it.e2e_ns = static_cast<std::int64_t>(1.5e6 * static_cast<double>(batch) * wave);
        }
        for (int i = 0; i < 110; ++i) {
            CpuSample c;
            c.t_ns = testing::kT0 + i * 100'000'000LL;
            c.process_cpu_pct = 80.0 + 20.0 * std::sin(i / 7.0) + static_cast<double>(batch);
            c.process_rss_mib = 500.0 + static_cast<double>(i);
            b.cpu.push_back(c);
        }
        b.summary.telemetry.mean_process_cpu_pct = 80.0 + static_cast<double>(batch);
        b.summary.telemetry.peak_rss_mib = 610;
        group.benchmarks.push_back(std::move(b));
    }
    return group;
}

struct Image {
    int width = 0, height = 0;
    std::string rgb;  // 3 bytes a pixel, row by row
};

// A binary PPM (P6, maxval 255) as pdftoppm writes it.
Image read_ppm(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::string magic;
    int maxval = 0;
    Image image;
    in >> magic >> image.width >> image.height >> maxval;
    in.get();  // the one whitespace before the pixels
    if (magic != "P6" || maxval != 255 || image.width <= 0 || image.height <= 0) return {};
    image.rgb.resize(static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.height) * 3);
    in.read(image.rgb.data(), static_cast<std::streamsize>(image.rgb.size()));
    return in ? image : Image{};
}

// Pixels of a clear colour: text, axes, gridlines and the page are black, grey or white; the series'
// lines and markers are the only coloured things a chart draws (besides its legend's short keys).
std::size_t coloured_pixels(const Image& image) {
    std::size_t n = 0;
    for (std::size_t i = 0; i + 2 < image.rgb.size(); i += 3) {
        const int r = static_cast<unsigned char>(image.rgb[i]);
        const int g = static_cast<unsigned char>(image.rgb[i + 1]);
        const int b = static_cast<unsigned char>(image.rgb[i + 2]);
        n += std::max({r, g, b}) - std::min({r, g, b}) > 60;
    }
    return n;
}

class ExcelRender : public ::testing::Test {
protected:
    void SetUp() override {
        for (const char* program : {"soffice", "pdftoppm"})
            if (!find_program(program))
                GTEST_SKIP() << program << " is not installed (scripts/setup.sh installs libreoffice-calc-nogui and "
                             << "poppler-utils): the workbook is not checked in a spreadsheet program";
    }

    // The workbook's pages as LibreOffice prints them, at 40 pixels per inch.
    std::vector<Image> render(const std::filesystem::path& workbook) {
        const auto profile = scratch_.path() / "lo-profile";  // a fresh one: no other instance's lock
        const auto pdf_dir = scratch_.path() / "pdf";
        const auto converted =
            run_captured({"soffice", "-env:UserInstallation=file://" + profile.string(), "--headless", "--norestore",
                          "--convert-to", "pdf", "--outdir", pdf_dir.string(), workbook.string()},
                         std::nullopt, 180'000);
        const auto pdf = pdf_dir / (workbook.stem().string() + ".pdf");
        EXPECT_TRUE(converted.status.success() && !converted.timed_out && std::filesystem::exists(pdf))
            << "soffice --convert-to pdf: " << converted.out << converted.err;
        if (const char* keep = std::getenv("INFERBENCH_KEEP_SCREENSHOTS"); keep && *keep)  // to look at
            for (const auto& kept : {workbook, pdf})
                std::filesystem::copy_file(kept, std::filesystem::path(keep) / kept.filename(),
                                           std::filesystem::copy_options::overwrite_existing);
        const auto pages = scratch_.path() / "page";
        const auto rendered =
            run_captured({"pdftoppm", "-r", "40", pdf.string(), pages.string()}, std::nullopt, 120'000);
        EXPECT_TRUE(rendered.status.success()) << "pdftoppm: " << rendered.err;
        std::vector<std::filesystem::path> files;
        for (const auto& entry : std::filesystem::directory_iterator(scratch_.path()))
            if (entry.path().extension() == ".ppm") files.push_back(entry.path());
        std::sort(files.begin(), files.end());
        std::vector<Image> images;
        for (const auto& file : files) images.push_back(read_ppm(file));
        return images;
    }

    inferbench::testing::ScratchDir scratch_;
};

TEST_F(ExcelRender, LibreOfficeDrawsTheSummaryWorkbooksLines) {
    const auto workbook = scratch_.path() / "summary.xlsx";
    ASSERT_TRUE(write_summary_workbook(drawn_group(), workbook));
    const auto pages = render(workbook);
    ASSERT_FALSE(pages.empty()) << "no page rendered";
    // Charts: 3 against batch size (3 points each, marked and joined), 2 over time (3 lines of about 50
    // buckets each), cut across pages. Measured at 40 dpi: about 3,500 coloured pixels in all, 900 on the
    // best page; with the lines missing (the old XML) 227 in all, the legends' keys and the markers.
    std::size_t total = 0, best_page = 0;
    for (const auto& page : pages) {
        ASSERT_GT(page.width, 0) << "a page that is no PPM";
        const std::size_t n = coloured_pixels(page);
        total += n;
        best_page = std::max(best_page, n);
    }
    EXPECT_GT(total, 2000u) << pages.size() << " pages";
    EXPECT_GT(best_page, 600u) << "no page with a chart whose lines are drawn";
}

}  // namespace
}  // namespace inferbench::report
