// The device catalog: the built-in data loads, every entry carries every figure with a known source and
// agrees with itself (FP32 peak = 2 x CUDA cores x boost clock, dense = sparse / 2 where derived so), the
// seed GPUs' headline figures, and every kind of mistake in a catalog file is reported with file:line:column.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/scratch_dir.hpp"
#include "core/error.hpp"
#include "devices/catalog.hpp"

namespace inferbench::devices {
namespace {

const Catalog& builtin() {
    static const Catalog catalog = parse_catalog(builtin_catalog_text(), "built-in");
    return catalog;
}

std::string error_of(const std::string& yaml) {
    try {
        parse_catalog(yaml, "test.yaml");
    } catch (const UserError& e) {
        return e.what();
    }
    return "(no error)";
}

// A valid one-device catalog; tests break one thing in it.
std::string minimal(const std::string& replace_from = "", const std::string& replace_to = "") {
    std::string text = R"(version: 1
sources:
  sheet: {title: A datasheet, url: https://example.com/sheet.pdf}
devices:
  - key: gpu-x
    name: GPU X
    match: {nvml_names: [NVIDIA GPU X], pci_device_ids: [0x1234], source: sheet}
    architecture: {value: Some, compute_capability: "9.0", source: sheet}
    sms: {value: 10, source: sheet}
    cuda_cores: {value: 1280, source: sheet}
    tensor_cores: {value: 40, source: sheet}
    boost_clock_mhz: {value: 1000, source: sheet}
    memory: {size_gb: 16, type: HBM3, source: sheet}
    memory_bandwidth_gbs: {value: 1000, source: sheet}
    tdp_w: {value: 300, source: sheet}
    peaks:
      fp64: {dense: 1.28, unit: TFLOP/s, units: CUDA cores, source: sheet}
      fp32: {dense: 2.56, unit: TFLOP/s, units: CUDA cores, source: sheet}
      tf32: {supported: false, source: sheet}
      fp16: {dense: 100, sparse: 200, unit: TFLOP/s, source: sheet}
      bf16: {dense: 100, unit: TFLOP/s, source: sheet}
      fp8: {dense: 200, unit: TFLOP/s, source: sheet, derived: "half the sparse rate"}
      int8: {dense: 200, unit: TOPS, source: sheet}
      int4: {published: false, source: sheet, note: not quoted}
)";
    if (!replace_from.empty()) {
        const auto at = text.find(replace_from);
        if (at == std::string::npos) throw std::logic_error("test text not found: " + replace_from);
        text.replace(at, replace_from.size(), replace_to);
    }
    return text;
}

TEST(Catalog, BuiltInHasTheSeedGpusAndTheDatacenterOnes) {
    for (const char* key : {"rtx-2080", "t4", "v100-pcie-32gb", "a100-pcie-40gb", "rtx-3080", "jetson-agx-xavier",
                            "a10", "l4", "l40s", "a100-sxm4-80gb", "h100-sxm", "h100-pcie", "h200-sxm"})
        EXPECT_NE(builtin().find(key), nullptr) << key;
}

TEST(Catalog, BuiltInIsTheRepositorysDataFile) {
    std::ifstream in(std::string(INFERBENCH_SOURCE_DIR) + "/data/devices.yaml");
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(builtin_catalog_text(), text.str());
}

TEST(Catalog, EveryFigureOfEveryEntryHasAKnownSource) {
    const auto& catalog = builtin();
    for (const auto& d : catalog.devices) {
        SCOPED_TRACE(d.key);
        for (const auto* f : {&d.sms, &d.cuda_cores, &d.tensor_cores, &d.boost_clock_mhz, &d.memory_size_gb}) {
            EXPECT_GT(f->value, 0);
            EXPECT_NE(catalog.source(f->source), nullptr) << f->source;
        }
        ASSERT_TRUE(d.memory_bandwidth_gbs && d.tdp_w);
        EXPECT_NE(catalog.source(d.memory_bandwidth_gbs->source), nullptr);
        EXPECT_NE(catalog.source(d.tdp_w->source), nullptr);
        EXPECT_NE(catalog.source(d.architecture.source), nullptr);
        EXPECT_NE(catalog.source(d.match_source), nullptr);
        EXPECT_FALSE(d.compute_capability.empty());
        EXPECT_FALSE(d.nvml_names.empty());
        ASSERT_EQ(d.peaks.size(), kPrecisions.size());
        for (const auto& [precision, peak] : d.peaks) {
            SCOPED_TRACE(std::string(precision_name(precision)));
            EXPECT_NE(catalog.source(peak.source), nullptr) << peak.source;
            if (peak.has_rate()) {
                EXPECT_GT(peak.dense, 0);
            }
            if (!peak.published) {
                EXPECT_FALSE(peak.note.empty());
            }
            if (peak.sparse) {
                EXPECT_GE(*peak.sparse, peak.dense);
            }
        }
        for (const auto& [id, source] : catalog.sources) {
            EXPECT_TRUE(source.url.starts_with("https://")) << id;
            EXPECT_FALSE(source.title.empty()) << id;
        }
    }
}

// Guards against typos: the quoted FP32 rate is what the cores and the clock give.
TEST(Catalog, Fp32PeakIsTwiceCudaCoresTimesBoostClock) {
    for (const auto& d : builtin().devices) {
        const double computed_tflops = 2 * d.cuda_cores.value * d.boost_clock_mhz.value * 1e6 / 1e12;
        EXPECT_NEAR(d.peak(Precision::fp32)->dense, computed_tflops, 0.02 * computed_tflops) << d.key;
    }
}

// Where NVIDIA quotes only the sparse rate, the dense one is exactly half, and says so.
TEST(Catalog, DenseFiguresDerivedFromSparseAreHalfOfThem) {
    int derived = 0;
    for (const auto& d : builtin().devices) {
        for (const auto& [precision, peak] : d.peaks) {
            if (!peak.has_rate() || peak.derived.find("sparse") == std::string::npos) continue;
            ASSERT_TRUE(peak.sparse) << d.key;
            EXPECT_DOUBLE_EQ(peak.dense * 2, *peak.sparse) << d.key << " " << precision_name(precision);
            ++derived;
        }
    }
    EXPECT_GE(derived, 20);  // L4, H100 SXM, H100 PCIe, H200: five tensor precisions each
}

TEST(Catalog, HeadlineFiguresOfTheSeedGpus) {
    const auto rate = [](const char* key, Precision p) { return builtin().find(key)->peak(p)->dense; };
    EXPECT_DOUBLE_EQ(rate("t4", Precision::fp16), 65);
    EXPECT_DOUBLE_EQ(rate("t4", Precision::int8), 130);
    EXPECT_DOUBLE_EQ(rate("t4", Precision::int4), 260);
    EXPECT_DOUBLE_EQ(rate("v100-pcie-32gb", Precision::fp16), 112);
    EXPECT_DOUBLE_EQ(rate("v100-pcie-32gb", Precision::fp64), 7);
    EXPECT_DOUBLE_EQ(rate("a100-pcie-40gb", Precision::fp16), 312);
    EXPECT_DOUBLE_EQ(rate("a100-pcie-40gb", Precision::tf32), 156);
    EXPECT_DOUBLE_EQ(rate("rtx-2080", Precision::int8), 161.1);
    EXPECT_DOUBLE_EQ(rate("rtx-3080", Precision::fp16), 59.5);
    EXPECT_DOUBLE_EQ(rate("jetson-agx-xavier", Precision::int8), 22);
    EXPECT_DOUBLE_EQ(rate("h200-sxm", Precision::fp16), 989.5);
    EXPECT_DOUBLE_EQ(*builtin().find("h200-sxm")->peak(Precision::fp16)->sparse, 1979);
    EXPECT_DOUBLE_EQ(rate("h200-sxm", Precision::fp8), 1979);
    EXPECT_DOUBLE_EQ(builtin().find("h200-sxm")->memory_bandwidth_gbs->value, 4800);
    EXPECT_DOUBLE_EQ(builtin().find("a100-pcie-40gb")->memory_bandwidth_gbs->value, 1555);
    EXPECT_FALSE(builtin().find("a100-pcie-40gb")->peak(Precision::fp8)->supported);
    EXPECT_FALSE(builtin().find("h200-sxm")->peak(Precision::int4)->supported);
    EXPECT_FALSE(builtin().find("t4")->peak(Precision::bf16)->supported);
}

TEST(Catalog, UnitsFollowThePrecision) {
    EXPECT_EQ(rate_unit(Precision::int8), "TOPS");
    EXPECT_EQ(rate_unit(Precision::int4), "TOPS");
    EXPECT_EQ(rate_unit(Precision::fp8), "TFLOP/s");
    EXPECT_EQ(parse_precision("bf16"), Precision::bf16);
    EXPECT_EQ(parse_precision("fp6"), std::nullopt);
}

TEST(Catalog, AMinimalCatalogParses) {
    const auto catalog = parse_catalog(minimal(), "test.yaml");
    ASSERT_EQ(catalog.devices.size(), 1u);
    const auto& d = catalog.devices[0];
    EXPECT_EQ(d.pci_device_ids, std::vector<std::uint16_t>{0x1234});
    EXPECT_TRUE(d.peak(Precision::fp32)->cuda_cores);
    EXPECT_FALSE(d.peak(Precision::fp16)->cuda_cores);
    EXPECT_EQ(d.peak(Precision::fp16)->sparse, 200);
    EXPECT_FALSE(d.peak(Precision::int4)->published);
    EXPECT_EQ(d.peak(Precision::fp8)->derived, "half the sparse rate");
}

TEST(Catalog, MistakesNameFileLineAndColumn) {
    EXPECT_EQ(error_of(minimal("    sms: {value: 10, source: sheet}", "    sms: {value: 10}")),
              "test.yaml:9:10: device 'gpu-x' sms has no 'source'");
    EXPECT_EQ(error_of(minimal("int8: {dense: 200, unit: TOPS", "int8: {dense: 200, unit: TFLOP/s")),
              "test.yaml:23:32: device 'gpu-x' peak int8: unit 'TFLOP/s' is wrong; int8 rates are in TOPS");
    EXPECT_NE(
        error_of(minimal("      int4:", "      fp6:")).find("test.yaml:24:7: device 'gpu-x': unknown precision 'fp6'"),
        std::string::npos);
    EXPECT_NE(error_of(minimal("      int4: {published: false, source: sheet, note: not quoted}\n", ""))
                  .find("peaks: int4 is missing"),
              std::string::npos);
    EXPECT_NE(error_of(minimal("source: sheet}\n    architecture", "source: other}\n    architecture"))
                  .find("source 'other' is not under sources:; known sources: sheet"),
              std::string::npos);
    EXPECT_NE(error_of(minimal("0x1234", "1234")).find("PCI device id '1234' must be 16-bit hexadecimal"),
              std::string::npos);
    EXPECT_NE(error_of(minimal("fp16: {dense: 100, sparse: 200", "fp16: {dense: 100, sparse: 50"))
                  .find("sparse rate cannot be below"),
              std::string::npos);
    EXPECT_NE(error_of(minimal("    tdp_w:", "    tdp_watts:")).find("unknown key 'tdp_watts'"), std::string::npos);
    EXPECT_NE(error_of(minimal("sms: {value: 10", "sms: {value: -3")).find("sms value must be a number > 0"),
              std::string::npos);
    EXPECT_NE(error_of("version: 1\nsources: [unclosed").find("test.yaml:2:"), std::string::npos);
    EXPECT_NE(error_of(minimal("version: 1", "version: 2")).find("version 2 is not known"), std::string::npos);
}

TEST(Catalog, TwoEntriesMayNotClaimOnePciIdOrName) {
    std::string text = minimal();
    const auto device = text.substr(text.find("  - key: gpu-x"));
    std::string second = device;
    second.replace(second.find("gpu-x"), 5, "gpu-y");
    second.replace(second.find("NVIDIA GPU X"), 12, "NVIDIA GPU Y");
    EXPECT_NE(error_of(text + second).find("PCI device id 0x1234 is also listed by 'gpu-x'"), std::string::npos);
    second.replace(second.find("0x1234"), 6, "0x1235");
    second.replace(second.find("NVIDIA GPU Y"), 12, "nvidia gpu x");
    EXPECT_NE(error_of(text + second).find("name 'nvidia gpu x' is also listed by 'gpu-x'"), std::string::npos);
    EXPECT_NE(error_of(text + device).find("device 'gpu-x' is listed twice"), std::string::npos);
}

class CatalogFile : public ::testing::Test {
protected:
    void TearDown() override { unsetenv("INFERBENCH_DEVICES_FILE"); }
    testing::ScratchDir scratch_;
};

TEST_F(CatalogFile, EnvironmentVariableReplacesTheBuiltInCatalog) {
    scratch_.write("mine.yaml", minimal());
    setenv("INFERBENCH_DEVICES_FILE", scratch_.file("mine.yaml").c_str(), 1);
    const auto catalog = load_catalog();
    EXPECT_EQ(catalog.origin, scratch_.file("mine.yaml"));
    ASSERT_EQ(catalog.devices.size(), 1u);
    EXPECT_EQ(catalog.devices[0].key, "gpu-x");
}

TEST_F(CatalogFile, AMissingOrBrokenFileIsAUserError) {
    setenv("INFERBENCH_DEVICES_FILE", scratch_.file("none.yaml").c_str(), 1);
    EXPECT_THROW(load_catalog(), UserError);
    scratch_.write("bad.yaml", minimal("    tdp_w:", "    tdp:"));
    setenv("INFERBENCH_DEVICES_FILE", scratch_.file("bad.yaml").c_str(), 1);
    try {
        load_catalog();
        FAIL();
    } catch (const UserError& e) {
        EXPECT_TRUE(std::string(e.what()).starts_with(scratch_.file("bad.yaml") + ":15:5:")) << e.what();
    }
}

}  // namespace
}  // namespace inferbench::devices
