// Which benchmarks a report covers (runs, filters, one-line errors that list what the database has),
// how they group, and the time axes and grids the workbooks and figures share.
#include "report/selection.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "common/scratch_dir.hpp"
#include "core/error.hpp"
#include "report/report_data.hpp"

namespace inferbench::report {
namespace {

class Selection : public ::testing::Test {
protected:
    void SetUp() override {
        store_.emplace(store::ResultsStore::open(scratch_.file("r.db")));
        // run 1: resnet50 on cpu, batch 1 and 8; run 2: resnet50 and bert on cuda:0, fp16 and int8.
        add_run(1'700'000'000'000, {{"cpu", "resnet50", "fp32", 1}, {"cpu", "resnet50", "fp32", 8}});
        add_run(1'700'000'100'000, {{"cuda:0", "resnet50", "fp16", 8},
                                    {"cuda:0", "resnet50", "fp16", 1},
                                    {"cuda:0", "resnet50", "int8", 1},
                                    {"cuda:0", "bert", "fp16", 1}});
    }

    struct Cell {
        const char* device;
        const char* model;
        const char* precision;
        std::int64_t batch;
    };
    void add_run(std::int64_t started, std::vector<Cell> cells) {
        store::RunRecord run;
        run.name = "t";
        run.started_unix_ms = started;
        const auto id = store_->begin_run(run);
        std::int64_t ordinal = 0;
        for (const auto& c : cells) {
            store::BenchmarkRecord b;
            b.run_id = id;
            b.ordinal = ordinal++;
            b.model = c.model;
            b.backend = "torch";
            b.device = c.device;
            b.precision = c.precision;
            b.batch_size = c.batch;
            b.status = BenchmarkStatus::ok;
            b.settings_json = "{}";
            store_->add_benchmark(b);
        }
        store_->end_run(id, started + 1000, RunStatus::completed);
    }

    std::string error_of(const ReportFilter& filter) const {
        try {
            select_benchmarks(*store_, filter);
        } catch (const UserError& e) {
            return e.what();
        }
        return "no error";
    }

    inferbench::testing::ScratchDir scratch_;
    std::optional<store::ResultsStore> store_;
};

TEST_F(Selection, LatestRunByDefaultThenIdsOrAll) {
    EXPECT_EQ(select_benchmarks(*store_, {}).size(), 4u);
    ReportFilter filter;
    filter.runs = "1";
    EXPECT_EQ(select_benchmarks(*store_, filter).size(), 2u);
    filter.runs = "all";
    EXPECT_EQ(select_benchmarks(*store_, filter).size(), 6u);
    filter.runs = "2,1";
    EXPECT_EQ(select_benchmarks(*store_, filter).size(), 6u);
}

TEST_F(Selection, FiltersCombine) {
    ReportFilter filter;
    filter.models = {"resnet50"};
    filter.precisions = {"fp16"};
    const auto selected = select_benchmarks(*store_, filter);
    ASSERT_EQ(selected.size(), 2u);
    EXPECT_EQ(selected[0].batch_size, 8) << "store (plan) order";
    filter.batch_sizes = {1};
    EXPECT_EQ(select_benchmarks(*store_, filter).size(), 1u);
}

TEST_F(Selection, UnknownValuesSayWhatTheDatabaseHas) {
    ReportFilter filter;
    filter.devices = {"cuda:1"};
    EXPECT_EQ(error_of(filter), "--device cuda:1: not found in run 2 of " + scratch_.file("r.db") + "; it has: cuda:0");
    filter = {};
    filter.runs = "all";
    filter.batch_sizes = {1, 16};
    EXPECT_EQ(error_of(filter), "--batch 16: not found in any run of " + scratch_.file("r.db") + "; it has: 1, 8");
    filter = {};
    filter.runs = "7";
    EXPECT_EQ(error_of(filter), "--run 7: " + scratch_.file("r.db") +
                                    " has no run 7; it has runs 1-2 (`inferbench summary --runs` lists them)");
    filter.runs = "x";
    EXPECT_NE(error_of(filter).find("'x' is not a run id"), std::string::npos);
    filter = {};
    filter.models = {"bert"};
    filter.precisions = {"int8"};
    EXPECT_EQ(error_of(filter), "no benchmark of run 2 of " + scratch_.file("r.db") +
                                    " matches all the filters together; drop one of them");
}

TEST_F(Selection, AnEmptyDatabaseSaysToRunFirst) {
    const auto empty = store::ResultsStore::open(scratch_.file("empty.db"));
    EXPECT_THROW(select_benchmarks(empty, {}), UserError);
}

TEST_F(Selection, GroupsDifferOnlyInBatchSizeAndCarryTheRunWhenSeveral) {
    const auto groups = group_benchmarks(select_benchmarks(*store_, {}));
    ASSERT_EQ(groups.size(), 3u);
    EXPECT_EQ(groups[0].key, "cuda_0-resnet50-torch-fp16");
    EXPECT_EQ(groups[0].title, "resnet50 / torch / fp16 / cuda:0");
    EXPECT_EQ(groups[0].family_key, "cuda_0-resnet50");
    EXPECT_EQ(groups[0].series_title, "torch fp16");
    ASSERT_EQ(groups[0].benchmarks.size(), 2u);
    EXPECT_EQ(groups[0].benchmarks[0].batch_size, 1) << "by batch size";
    EXPECT_EQ(groups[0].labels, (std::vector<std::string>{"batch 1", "batch 8"}));
    EXPECT_EQ(groups[1].family_key, groups[0].family_key);

    ReportFilter all;
    all.runs = "all";
    const auto across = group_benchmarks(select_benchmarks(*store_, all));
    ASSERT_EQ(across.size(), 4u);
    EXPECT_EQ(across[0].key, "run1-cpu-resnet50-torch-fp32");
    EXPECT_EQ(across[0].title, "resnet50 / torch / fp32 / cpu, run 1");
}

TEST(Grouping, GenerativeBenchmarksAreNamedByTheirLengthsAsWellAsTheirBatch) {
    store::BenchmarkRecord a;
    a.device = "cpu";
    a.model = "llama-tiny";
    a.backend = "llamacpp";
    a.precision = "fp32";
    a.input_tokens = 128;
    a.output_tokens = 16;
    store::BenchmarkRecord longer = a;
    longer.input_tokens = 1024;
    store::BenchmarkRecord again = a;
    again.repeat = 1;
    const auto groups = group_benchmarks({a, longer, again});
    ASSERT_EQ(groups.size(), 1u);
    EXPECT_EQ(groups[0].labels, (std::vector<std::string>{"batch 1 in 128 out 16", "batch 1 in 1024 out 16",
                                                          "batch 1 in 128 out 16 repeat 2"}));
}

TEST(Grouping, RepeatedBatchSizesAndLookalikeNamesStayApart) {
    store::BenchmarkRecord a;
    a.device = "cuda:0";
    a.model = "m";
    a.backend = "b";
    a.precision = "fp32";
    a.variant = "cuda_graph=true";
    store::BenchmarkRecord b = a;
    b.benchmark_id = 2;
    store::BenchmarkRecord c = a;
    c.device = "cuda_0";
    const auto groups = group_benchmarks({a, b, c});
    ASSERT_EQ(groups.size(), 2u);
    EXPECT_EQ(groups[0].labels, (std::vector<std::string>{"batch 1", "batch 1 #2"}));
    EXPECT_EQ(groups[0].key, "cuda_0-m-b-fp32-cuda_graph=true");
    EXPECT_EQ(groups[1].key, "cuda_0-m-b-fp32-cuda_graph=true-2");
    EXPECT_EQ(sanitize_file_part("a/b c:\"d\"<e>"), "a_b_c__d__e_");

    store::BenchmarkRecord wide = a;
    wide.variant = std::string(300, 'x');
    const auto long_key = group_benchmarks({wide}).front().key;
    EXPECT_EQ(long_key.size(), 160u) << "file names stay short";
    EXPECT_EQ(long_key.substr(0, 20), "cuda_0-m-b-fp32-xxxx");

    // A model file's name near the 255-byte limit: the family's figures are named after its key too.
    store::BenchmarkRecord long_model = a;
    long_model.model = std::string(245, 'm') + ".onnx";
    store::BenchmarkRecord other_model = long_model;
    other_model.model = std::string(245, 'm') + ".pt";
    const auto long_groups = group_benchmarks({long_model, other_model});
    ASSERT_EQ(long_groups.size(), 2u);
    for (const auto& group : long_groups) {
        EXPECT_LE(group.family_key.size(), 160u) << "family figures' file names stay short";
        EXPECT_LE(group.key.size(), 160u);
    }
    EXPECT_NE(long_groups[0].family_key, long_groups[1].family_key) << "models that differ at the end stay apart";
}

// An imported nvidia-smi log has no precision: its titles and file names leave the field out rather
// than showing it blank ("nvidia-smi-log /  / cuda:0") or as "_".
TEST(Grouping, AnEmptyPrecisionIsLeftOutOfTitlesAndFileNames) {
    store::BenchmarkRecord log;
    log.device = "cuda:0";
    log.model = "h200-load-q-5x1s";
    log.backend = "nvidia-smi-log";
    const auto groups = group_benchmarks({log});
    ASSERT_EQ(groups.size(), 1u);
    EXPECT_EQ(groups[0].title, "h200-load-q-5x1s / nvidia-smi-log / cuda:0");
    EXPECT_EQ(groups[0].series_title, "nvidia-smi-log");
    EXPECT_EQ(groups[0].key, "cuda_0-h200-load-q-5x1s-nvidia-smi-log");
}

TEST(TimeAxis, ZeroIsTheFirstMeasuredIterationElseTheFirstMeasuredSample) {
    ReportBenchmark b;
    b.gpu.push_back({});
    b.gpu[0].t_ns = 100;
    b.gpu[0].phase = SamplePhase::warmup;
    b.cpu.push_back({});
    b.cpu[0].t_ns = 300;
    set_time_origin(b, true);
    EXPECT_EQ(b.origin_ns, 300);
    IterationRecord it;
    it.start_ns = 250;
    b.iterations.push_back(it);
    set_time_origin(b, true);
    EXPECT_EQ(b.origin_ns, 250);
    EXPECT_DOUBLE_EQ(b.seconds(1'000'000'250), 1.0);
    set_time_origin(b, false);
    EXPECT_EQ(b.origin_ns, 0);
}

TEST(TimeAxis, PrimaryGpuIsTheDevicesIndexWhereSampled) {
    ReportBenchmark b;
    EXPECT_FALSE(primary_gpu(b));
    b.summary.benchmark.device = "cuda:1";
    for (const int gpu : {0, 1}) {
        b.gpu.push_back({});
        b.gpu.back().gpu_index = gpu;
    }
    EXPECT_EQ(primary_gpu(b), 1);
    b.summary.benchmark.device = "cuda:5";
    EXPECT_EQ(primary_gpu(b), 0);
}

TEST(Grid, MeansPerBucketAndEmptyWhereASeriesHasNone) {
    const std::vector<std::vector<Point>> series = {{{0.0, 1}, {0.05, 3}, {0.3, 5}}, {{0.12, 10}, {0.19, 20}}};
    const Grid grid = align_on_grid(series, 0.1);
    EXPECT_EQ(grid.t_s, (std::vector<double>{0.0, 0.1, 0.3}));
    EXPECT_EQ(grid.columns[0][0], 2.0);
    EXPECT_TRUE(std::isnan(grid.columns[0][1]));
    EXPECT_EQ(grid.columns[0][2], 5.0) << "0.3 / 0.1 is just below 3; it still falls in [0.3, 0.4)";
    EXPECT_EQ(grid.columns[1][1], 15.0);
    EXPECT_TRUE(std::isnan(grid.columns[1][0]));
    const auto thinned = resample(series[0], 1.0);
    ASSERT_EQ(thinned.size(), 1u);
    EXPECT_DOUBLE_EQ(thinned[0].value, 3.0);
    EXPECT_EQ(resample(series[0], 0).size(), 3u);
}

}  // namespace
}  // namespace inferbench::report
