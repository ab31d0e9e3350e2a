// `inferbench models inspect` on every model of the exported corpus (manifest.json beside the files):
// no node left without a cost, and 2 x MACs within 3% of the reference count made on the same
// module in PyTorch (flop_counter's convention: 2 x multiply-adds of convolutions and matrix
// products, nothing else; cost_model.hpp says why totals.macs is the figure to compare).
// INFERBENCH_CORPUS_DIR in the environment points the test at another export.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e/cli_harness.hpp"

namespace inferbench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr double kTolerance = 0.03;

fs::path corpus_dir() {
    const char* dir = std::getenv("INFERBENCH_CORPUS_DIR");
    return dir != nullptr && *dir != '\0' ? fs::path(dir) : fs::path(INFERBENCH_CORPUS_DIR);
}

json read_json(const fs::path& path) {
    std::ifstream in(path);
    return json::parse(in);
}

// The totals `models inspect FILE --batch N --json` reports.
json inspect_totals(const testing::CliScratch& dir, const fs::path& file, int batch, std::string& bound) {
    const auto r = dir.run(fmt::format("models inspect '{}' --batch {} --json", file.string(), batch));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const json doc = json::parse(r.out, nullptr, false);
    if (doc.is_discarded() || !doc.contains("totals")) {
        ADD_FAILURE() << "no JSON from inspect: " << r.err;
        return json::object();
    }
    bound = doc.value("cost_bound", "?");
    return doc["totals"];
}

TEST(CorpusCosts, EveryExportedModelIsCostedWithinThreePercentOfItsReference) {
    const fs::path dir = corpus_dir();
    ASSERT_TRUE(fs::exists(dir / "manifest.json")) << dir << ": no manifest.json (the corpus_export test writes it)";
    const json manifest = read_json(dir / "manifest.json");
    const testing::CliScratch scratch;
    int checked = 0;
    std::string table = fmt::format("{:44} {:>8} {:>8} {:>12} {:>12} {:>7}\n", "model", "unknown", "data-dep",
                                    "2xMACs G", "reference G", "ratio");
    for (const auto& entry : manifest["models"]) {
        const std::string name = entry.value("name", "?");
        if (entry.value("status", "") == "failed") ADD_FAILURE() << name << ": export failed: " << entry.value("reason", "");
        if (entry.value("status", "") != "ok") continue;
        SCOPED_TRACE(name);
        std::string bound;
        const json totals = inspect_totals(scratch, dir / entry["file"].get<std::string>(), 1, bound);
        if (!totals.contains("macs")) continue;
        const auto unknown = totals["unknown_nodes"].get<std::int64_t>();
        const auto data_dependent = totals["data_dependent_nodes"].get<std::int64_t>();
        const double ours = 2.0 * totals["macs"].get<double>();
        const double reference = entry["reference"]["flops_per_inference"].get<double>();
        const double ratio = ours / reference;
        table += fmt::format("{:44} {:8} {:8} {:12.3f} {:12.3f} {:7.4f}\n", name, unknown, data_dependent, ours / 1e9,
                             reference / 1e9, ratio);
        EXPECT_EQ(unknown, 0);
        EXPECT_EQ(bound, data_dependent > 0 ? "upper" : "total");
        EXPECT_NEAR(ratio, 1.0, kTolerance) << "2 x MACs " << ours << " against " << reference;
        if (entry.value("dynamic_batch", false)) {  // the batch reaches every shape computation
            std::string bound3;
            const json batch3 = inspect_totals(scratch, dir / entry["file"].get<std::string>(), 3, bound3);
            EXPECT_EQ(batch3.value("unknown_nodes", std::int64_t{-1}), 0);
            EXPECT_EQ(batch3.value("macs", std::int64_t{0}), 3 * totals["macs"].get<std::int64_t>());
        }
        ++checked;
    }
    std::cout << table;
    EXPECT_GT(checked, 0) << "no model of " << dir << " was exported";
}

}  // namespace
}  // namespace inferbench
