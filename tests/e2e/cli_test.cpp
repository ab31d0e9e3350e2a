#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "e2e/cli_harness.hpp"
#include "store/results_store.hpp"
#include "store/sqlite.hpp"

namespace inferbench {
namespace {

using ScratchDir = testing::CliScratch;

TEST(Cli, NullBenchmarkIsStoredAndSummarised) {
    ScratchDir dir;
    const auto r = dir.run("run --backend null --model null --batch 1,4 --duration 100ms --warmup 10ms --db r.db");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // The columns with one value in every row are said once, above the table.
    EXPECT_TRUE(r.out.starts_with("model: null · backend: null · device: cpu")) << r.out;
    EXPECT_NE(r.err.find("[2/2] null null cpu fp32 b4  ok"), std::string::npos) << r.err;
    const auto store = store::ResultsStore::open(dir.file("r.db"));
    const auto runs = store.runs();
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].status, RunStatus::completed);
    const auto env = nlohmann::json::parse(runs[0].environment_json);
    EXPECT_FALSE(env.at("host").get<std::string>().empty());
    EXPECT_GT(env.at("cpu_cores").get<int>(), 0);
    EXPECT_FALSE(env.at("kernel").get<std::string>().empty());
    EXPECT_FALSE(env.at("compiler").get<std::string>().empty());
    EXPECT_NE(runs[0].plan_json.find("\"batch_sizes\":[1,4]"), std::string::npos);
    const auto benchmarks = store.benchmarks();
    ASSERT_EQ(benchmarks.size(), 2u);
    for (const auto& b : benchmarks) {
        EXPECT_EQ(b.status, BenchmarkStatus::ok);
        EXPECT_TRUE(b.load_ns.has_value());
        EXPECT_GE(b.warmup_iterations.value_or(0), 1) << "the worker said when warm-up was done, and how long it ran";
        EXPECT_TRUE(b.measured_wall_ns.has_value());
        const auto iterations = store.iterations(b.benchmark_id);
        EXPECT_GE(iterations.size(), 10u);
        EXPECT_GE(iterations.back().start_ns, iterations.front().start_ns);
    }
    EXPECT_EQ(benchmarks[1].batch_size, 4);

    const auto summary = dir.run("summary --db r.db --json");
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    const auto doc = nlohmann::json::parse(summary.out);
    EXPECT_EQ(doc.at("schema_version"), 2);
    ASSERT_EQ(doc.at("rows").size(), 2u);
    EXPECT_EQ(doc["rows"][1]["batch_size"], 4);
    EXPECT_GT(doc["rows"][1]["throughput_per_s"].get<double>(), 0.0);
    const auto csv = dir.run("summary --db r.db --format csv");
    EXPECT_EQ(csv.out.substr(0, 50), "benchmark_ids,model,backend,device,precision,batch");
    const auto runs_list = dir.run("summary --db r.db --runs --format md");
    EXPECT_NE(runs_list.out.find("| completed |"), std::string::npos) << runs_list.out;
}

TEST(Cli, CellsThatCannotRunAreSkippedWithTheReason) {
    ScratchDir dir;
    const auto r = dir.run("run --backend null,tensorrt --model null --precision fp32 --batch 1 --duration 20ms "
                           "--warmup 0s --db r.db");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto benchmarks = store::ResultsStore::open(dir.file("r.db")).benchmarks();
    ASSERT_EQ(benchmarks.size(), 2u);
    EXPECT_EQ(benchmarks[0].status, BenchmarkStatus::ok);
    EXPECT_EQ(benchmarks[1].status, BenchmarkStatus::skipped);
    EXPECT_NE(benchmarks[1].reason.find("tensorrt is not built"), std::string::npos) << benchmarks[1].reason;
}

TEST(Cli, BadPlanGivesOneLineWithLocationAndExitCodeTwo) {
    ScratchDir dir;
    dir.write("plan.yaml", "models: [null]\nbackends: [null]\nbatch_sizes: [1, -3]\n");
    const auto r = dir.run("run plan.yaml --db r.db");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, "inferbench: error: plan.yaml:3:18: batch size '-3' must be a whole number from 1 to 65536\n");
    EXPECT_FALSE(std::filesystem::exists(dir.file("r.db"))) << "nothing may run for a bad plan";
}

TEST(Cli, BadOverrideGivesOneLineAndExitCodeTwo) {
    ScratchDir dir;
    const auto r = dir.run("run --backend null --model null --set warmup=fast --db r.db");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, "inferbench: error: --set warmup=fast: warmup: 'fast' is not a duration; write e.g. 10s, 500ms or 2m\n");
    const auto unknown_backend_option = [&] {
        dir.write("opts.yaml", "models: [null]\nbackends: [null]\nbackend_options:\n  null: {threads: 2}\n");
        return dir.run("run opts.yaml --db r.db");
    }();
    EXPECT_EQ(unknown_backend_option.exit_code, 2);
    EXPECT_NE(unknown_backend_option.err.find("backend_options.null.threads: unknown option; valid options: none"),
              std::string::npos)
        << unknown_backend_option.err;
}

TEST(Cli, DryRunListsTheMatrix) {
    ScratchDir dir;
    const auto r = dir.run("run --backend null --model null --batch 1,2,8 --dry-run");
    ASSERT_EQ(r.exit_code, 0);
    EXPECT_NE(r.out.find("   3  null null cpu fp32 b8"), std::string::npos) << r.out;
}

TEST(Cli, ListsAndHelp) {
    ScratchDir dir;
    const auto backends = dir.run("list backends --json");
    ASSERT_EQ(backends.exit_code, 0);
    const auto doc = nlohmann::json::parse(backends.out);
    EXPECT_EQ(doc["rows"][0]["name"], "null");
    EXPECT_NE(backends.out.find("\"fault\""), std::string::npos);
    EXPECT_NE(dir.run("list models").out.find("resnet50"), std::string::npos);
    EXPECT_NE(dir.run("list devices").out.find("cpu"), std::string::npos);
    const auto help = dir.run("run --help");
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_NE(help.out.find("duration           duration   5s"), std::string::npos) << help.out;
    EXPECT_EQ(dir.run("--version").exit_code, 0);
    EXPECT_EQ(dir.run("frobnicate").exit_code, 2);
}

TEST(Cli, SummaryWithoutDatabaseSaysWhatToDo) {
    ScratchDir dir;
    const auto r = dir.run("summary --db missing.db");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("missing.db: no results database here; run `inferbench run` first"), std::string::npos);
}

// Only `run`, `import` and `probe` make a store: the commands that read refuse an empty file or another
// program's SQLite database with one line and leave it byte for byte as it was.
TEST(Cli, ReadingCommandsLeaveAFileThatIsNotAStoreUnchanged) {
    ScratchDir dir;
    std::ofstream(dir.file("empty.db")).close();
    {
        store::Database other = store::Database::open(dir.file("other.db"), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
        other.exec("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('mine')");
    }
    for (const std::string file : {"empty.db", "other.db"}) {
        const std::string before = testing::read_file(dir.file(file));
        for (const std::string command : {"summary", "report --out rep", "explain", "roofline", "compare"}) {
            const auto r = dir.run(command + " --db " + file);
            EXPECT_EQ(r.exit_code, 1) << command << " " << file << ": " << r.err;
            EXPECT_NE(r.err.find(file + "' is not an inferbench results store"), std::string::npos) << r.err;
            EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
            EXPECT_EQ(testing::read_file(dir.file(file)), before) << command << " " << file;
            EXPECT_FALSE(std::filesystem::exists(dir.file(file + "-wal"))) << command << " " << file;
        }
    }
}

// max_iterations: 0 on the null backend: far more iterations than the ring the worker writes into, every
// one stored in order (the ring drained as it filled, none overwritten), with flat memory.
TEST(Cli, AnUnlimitedLoopStoresEveryIterationThroughTheRing) {
    ScratchDir dir;
    const auto r = dir.run("run --backend null --model null --batch 1 --duration 1s --warmup 0s --quiet "
                           "--max-iterations 0 --db r.db");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto store = store::ResultsStore::open(dir.file("r.db"), store::ResultsStore::Access::read);
    const auto benchmarks = store.benchmarks();
    ASSERT_EQ(benchmarks.size(), 1u);
    EXPECT_EQ(benchmarks[0].status, BenchmarkStatus::ok);
    const auto iterations = store.iterations(benchmarks[0].benchmark_id);
    EXPECT_GT(iterations.size(), 262'144u) << "the loop must outlast the ring for this test to mean anything";
    for (std::size_t i = 1; i < iterations.size(); ++i)
        ASSERT_GT(iterations[i].start_ns, iterations[i - 1].start_ns) << "iteration " << i;
    ASSERT_TRUE(benchmarks[0].measured_wall_ns.has_value());
    EXPECT_LE(*benchmarks[0].measured_wall_ns,
              iterations.back().start_ns + iterations.back().e2e_ns - iterations.front().start_ns);
}

// A run name that holds a terminal escape sequence is shown escaped in human output, and stored as given.
TEST(Cli, ControlCharactersInNamesArePrintedEscaped) {
    ScratchDir dir;
    const auto r = dir.run("run --backend null --model null --batch 1 --duration 20ms --warmup 0s --quiet --db r.db "
                           "--set name=\"$(printf 'red\\033[31mX\\033[0m\\007')\"");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const std::string format : {"table", "md"}) {
        const auto runs = dir.run("summary --runs --db r.db --format " + format);
        ASSERT_EQ(runs.exit_code, 0) << runs.err;
        EXPECT_NE(runs.out.find("red\\x1B[31mX\\x1B[0m\\x07"), std::string::npos) << runs.out;
        EXPECT_EQ(runs.out.find('\033'), std::string::npos) << format;
        EXPECT_EQ(runs.out.find('\007'), std::string::npos) << format;
    }
    EXPECT_EQ(store::ResultsStore::open(dir.file("r.db")).runs().front().name, "red\033[31mX\033[0m\007");
}

#if INFERBENCH_HAVE_ONNXRUNTIME
TEST(Cli, RealNetworkOnOnnxRuntime) {
    ScratchDir dir;
    const auto r = dir.run("run --model mobilenet --backend onnxruntime --precision fp32,fp16,int8 --batch 1 "
                           "--duration 200ms --warmup 0s --min-iterations 2 --db r.db");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto store = store::ResultsStore::open(dir.file("r.db"));
    const auto benchmarks = store.benchmarks();
    ASSERT_EQ(benchmarks.size(), 3u);
    EXPECT_EQ(benchmarks[0].status, BenchmarkStatus::ok) << benchmarks[0].reason;
    EXPECT_FALSE(benchmarks[0].backend_version.empty());
    EXPECT_GT(benchmarks[0].model_size_bytes.value_or(0), 16'000'000);
    EXPECT_GE(store.iterations(benchmarks[0].benchmark_id).size(), 2u);
    // The model's cost per inference is stored with the benchmark (for the roofline and the summary).
    std::map<std::string, double> metrics;
    for (const auto& m : store.metrics(benchmarks[0].benchmark_id)) metrics[m.name] = m.value;
    EXPECT_NEAR(metrics["model_macs_per_inference"] / 569e6, 1.0, 0.02);
    EXPECT_GT(metrics["model_parameters"], 4.2e6);
    EXPECT_GT(metrics["model_bytes_per_inference"], 0);
    const auto summary = dir.run("summary --db r.db --format csv");
    EXPECT_NE(summary.out.find("parameters_m,gflops_per_inference"), std::string::npos) << summary.out;
    // fp16: converted, but ONNX Runtime's CPU provider has no float16 Conv here: skipped with that reason.
    EXPECT_EQ(benchmarks[1].status, BenchmarkStatus::skipped);
    EXPECT_NE(benchmarks[1].reason.find("fp16 on the CPU"), std::string::npos) << benchmarks[1].reason;
    // int8: calibrated and quantized to QDQ; its agreement with fp32 is stored and shown beside its speed.
    EXPECT_EQ(benchmarks[2].status, BenchmarkStatus::ok) << benchmarks[2].reason;
    std::map<std::string, double> int8;
    for (const auto& m : store.metrics(benchmarks[2].benchmark_id)) int8[m.name] = m.value;
    EXPECT_GE(int8["int8_output_cosine"], 0.99);
    EXPECT_TRUE(int8.contains("int8_top1_agreement"));
    EXPECT_NE(summary.out.find("int8 vs fp32 on the calibration inputs: cosine"), std::string::npos) << summary.out;
    // Which weight range the int8 model has, chosen by this CPU, and why.
    EXPECT_TRUE(int8.contains("int8_weight_max_level"));
    EXPECT_TRUE(int8.contains("int8_weight_range_reason"));
    EXPECT_NE(summary.out.find("int8 weights "), std::string::npos) << summary.out;
}

// On an x86-64 CPU without VNNI (the other kind of CI machine; decided so here through the environment) the int8
// model gets reduced-range weights, agrees with fp32 as well, and its benchmark says which format and why.
TEST(Cli, Int8ModelForACpuWithoutVnniHasReducedRangeWeightsAndSaysWhy) {
    ScratchDir dir;
    const auto r = dir.run("run --model mobilenet --backend onnxruntime --precision int8 --batch 1 --duration 200ms "
                           "--warmup 0s --min-iterations 2 --db r.db",
                           "INFERBENCH_ASSUME_CPU_WITHOUT_VNNI=1");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto store = store::ResultsStore::open(dir.file("r.db"));
    const auto benchmarks = store.benchmarks();
    ASSERT_EQ(benchmarks.size(), 1u);
    EXPECT_EQ(benchmarks[0].status, BenchmarkStatus::ok) << benchmarks[0].reason;
    std::map<std::string, double> int8;
    for (const auto& m : store.metrics(benchmarks[0].benchmark_id)) int8[m.name] = m.value;
    EXPECT_EQ(int8["int8_weight_max_level"], 64);
    EXPECT_EQ(int8["int8_weight_range_reason"], 4);
    EXPECT_GE(int8["int8_output_cosine"], 0.99);
    const auto summary = dir.run("summary --db r.db --format csv");
    EXPECT_NE(summary.out.find("int8 weights in [-64, 64] (reduced range): an x86-64 CPU without VNNI"),
              std::string::npos)
        << summary.out;
}
#endif

}  // namespace
}  // namespace inferbench
