// How long a plan of 10,000 cells (the most a plan may expand to) takes to read, expand, split into shards and
// list: a plan of 10 zoo models x 5 precisions x 200 batch sizes on the null backend (which skips zoo models: the
// listing still decides each cell's skip, as for any plan) is written to a temporary folder, then each step is timed in
// this process (best of 5) and `inferbench run --dry-run` (the whole plan, and one shard of 100) is timed as the
// command a user runs, from start to exit (best of 3). The target: each under 2 s.
//   build/release/bench/plan_scale [INFERBENCH]
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "backends/registry.hpp"
#include "core/plan/matrix.hpp"
#include "core/plan/plan.hpp"
#include "models/decoder_models.hpp"
#include "models/zoo.hpp"
#include "runner/orchestrator/orchestrator.hpp"
#include "runner/orchestrator/shard_order.hpp"

namespace {

using namespace inferbench;

// The best of `times` runs of `step`, in seconds.
double best_seconds(int times, const std::function<void()>& step) {
    double best = 1e300;
    for (int i = 0; i < times; ++i) {
        const auto start = std::chrono::steady_clock::now();
        step();
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return best;
}

std::string ten_thousand_cells(const std::vector<std::string>& models) {
    std::string plan = "models: [";
    for (std::size_t i = 0; i < 10; ++i) plan += (i ? ", " : "") + models.at(i);
    plan += "]\nbackends: [null]\ndevices: [cpu]\nprecisions: [fp32, fp16, bf16, int8, fp8]\nbatch_sizes: [";
    for (int batch = 1; batch <= 200; ++batch) plan += (batch > 1 ? ", " : "") + std::to_string(batch);
    return plan + "]\nduration: 1s\ntelemetry_enabled: false\n";
}

void row(const std::string& step, double seconds) { fmt::print("{:<58} {:>9.2f} ms\n", step, seconds * 1e3); }

}  // namespace

int main(int argc, char** argv) {
    const std::string inferbench = argc > 1 ? argv[1] : INFERBENCH_EXE;
    const auto folder = std::filesystem::temp_directory_path() / fmt::format("plan-scale-{}", getpid());
    std::filesystem::create_directories(folder);
    const auto plan_file = (folder / "plan.yaml").string();
    std::vector<std::string> zoo = models::zoo_names();
    std::ofstream(plan_file) << ten_thousand_cells(zoo);

    const auto registry = BackendRegistry::discover(BackendRegistry::default_search_dirs());
    std::vector<std::string> vocabulary_models = zoo;
    for (auto& name : models::decoder_model_names()) vocabulary_models.push_back(name);
    const PlanVocabulary vocabulary{vocabulary_models, registry.names()};

    Plan plan;
    row("read and check the plan file", best_seconds(5, [&] {
            plan = load_plan_file(plan_file, vocabulary);
            check_plan(plan);
        }));
    std::vector<BenchmarkSpec> cells;
    row("expand to cells", best_seconds(5, [&] { cells = expand_matrix(plan, models::is_decoder_model); }));
    fmt::print("{:<58} {:>9}\n", "cells", cells.size());
    for (const std::int64_t shards : {10, 100, 1000, 10000})
        row(fmt::format("split into {} shards", shards), best_seconds(5, [&] { runner::plan_shards(cells, shards); }));
    row("planned skips (what --dry-run marks)", best_seconds(5, [&] { runner::planned_skips(cells, registry); }));

    for (const std::string& extra : {std::string(), std::string(" --shard 7/100")}) {
        const std::string command =
            fmt::format("'{}' run '{}' --dry-run{} >/dev/null 2>&1", inferbench, plan_file, extra);
        int status = 0;
        const double seconds = best_seconds(3, [&] { status = std::system(command.c_str()); });
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fmt::print(stderr, "plan_scale: `{}` failed (status {})\n", command, status);
            return 1;
        }
        row(fmt::format("inferbench run --dry-run{} (the whole command)", extra), seconds);
    }
    std::filesystem::remove_all(folder);
    return 0;
}
