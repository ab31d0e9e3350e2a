// `inferbench report` as a whole: every output (summary, workbooks, figures, the HTML page with its
// roofline) drawn from one pass over the store, each benchmark's rows read once.
#include "report/report_writer.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "common/generation_fixture.hpp"
#include "common/scratch_dir.hpp"
#include "devices/cpu_peaks.hpp"
#include "report/gnuplot.hpp"
#include "report/html_fixture.hpp"

namespace inferbench::report {
namespace {

TEST(ReportWriter, EveryOutputFromOneReadOfEachBenchmarksRows) {
    inferbench::testing::ScratchDir dir;
    testing::write_html_fixture(dir.path() / "r.db");
    const auto results = store::ResultsStore::open(dir.path() / "r.db", store::ResultsStore::Access::read);
    const auto benchmarks = static_cast<std::int64_t>(results.benchmarks().size());
    ASSERT_EQ(benchmarks, 6);
    ReportOptions options;
    options.out_dir = dir.path() / "report";
    options.plots = gnuplot_available();
    options.plot.formats = {ImageFormat::svg};
    const auto before = results.read_counts();
    const ReportResult report = write_report(results, options);
    const auto reads = results.read_counts();
    EXPECT_EQ(reads.iterations - before.iterations, benchmarks);
    EXPECT_EQ(reads.gpu_samples - before.gpu_samples, benchmarks);
    EXPECT_EQ(reads.cpu_samples - before.cpu_samples, benchmarks);
    EXPECT_EQ(reads.series - before.series, benchmarks);

    EXPECT_EQ(report.summary.rows.size(), 6u);
    const auto wrote = [&](const std::string& name) {
        return std::find(report.files.written.begin(), report.files.written.end(), options.out_dir / name) !=
               report.files.written.end();
    };
    EXPECT_TRUE(wrote("summary.md"));
    EXPECT_TRUE(wrote("report.html"));
    const auto workbooks = std::count_if(report.files.written.begin(), report.files.written.end(),
                                         [](const auto& f) { return f.extension() == ".xlsx"; });
    EXPECT_GE(workbooks, 4);
    const std::string page = testing::read_text(options.out_dir / "report.html");
    EXPECT_NE(page.find("id=\"roofline\""), std::string::npos) << "the roofline section from the same summaries";
    EXPECT_NE(page.find("End-to-end latency per iteration"), std::string::npos);
}

// The report's findings see a generative benchmark's bounds and its group's cells that ran out of memory.
TEST(ReportWriter, GenerativeFindingsReachThePage) {
    inferbench::testing::ScratchDir dir;
    {
        auto results = store::ResultsStore::open(dir.path() / "r.db");
        store::RunRecord run;
        run.name = "generation";
        run.plan_json = "{}";
        run.environment_json = R"({"cpu_model": "Test CPU"})";
        const auto run_id = results.begin_run(run);
        auto ok = inferbench::testing::generative_benchmark({});
        ok.record.run_id = run_id;
        ok.record.settings_json = "{}";
        ok.metrics = inferbench::testing::decoder_metric_rows(inferbench::testing::small_decoder_shape(), 4.0, 1024);
        results.add_benchmark(ok.record, ok.data());
        store::BenchmarkRecord failed = ok.record;
        failed.ordinal = 1;
        failed.batch_size = 64;
        failed.status = BenchmarkStatus::failed;
        failed.reason = "out of memory: the KV cache does not fit";
        results.add_benchmark(failed);
        store::ProbeRecord probe;
        probe.device_key = devices::cpu_device_key("Test CPU");
        probe.name = "dram_copy";
        probe.value = 20;
        probe.unit = "GB/s";
        results.add_probe(probe);
        results.end_run(run_id, 1, RunStatus::completed);
    }
    const auto results = store::ResultsStore::open(dir.path() / "r.db", store::ResultsStore::Access::read);
    ReportOptions options;
    options.out_dir = dir.path() / "report";
    options.plots = false;
    options.excel = false;
    write_report(results, options);
    const std::string page = testing::read_text(options.out_dir / "report.html");
    // A CPU decode far below its bound (launch-bound is a GPU's finding).
    EXPECT_NE(page.find("generation.decode_below_bound"), std::string::npos);
    EXPECT_NE(page.find("generation.out_of_memory"), std::string::npos);
}

}  // namespace
}  // namespace inferbench::report
