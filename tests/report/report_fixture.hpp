// A group of two benchmarks (batch 1 and 8) with known iterations and telemetry, for the workbook and
// figure tests, and readers of what was written (xlsx members through Debian's unzip).
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "core/process/subprocess.hpp"
#include "report/report_data.hpp"

namespace inferbench::report::testing {

inline constexpr std::int64_t kT0 = 5'000'000'000;  // CLOCK_MONOTONIC of the first measured iteration

inline ReportBenchmark benchmark(std::int64_t id, std::int64_t batch, int iterations) {
    ReportBenchmark b;
    b.summary.benchmark.benchmark_id = id;
    b.summary.benchmark.run_id = 1;
    b.summary.benchmark.model = "resnet50";
    b.summary.benchmark.backend = "torch";
    b.summary.benchmark.device = "cuda:0";
    b.summary.benchmark.precision = "fp16";
    b.summary.benchmark.batch_size = batch;
    b.summary.benchmark.status = BenchmarkStatus::ok;
    b.label = "batch " + std::to_string(batch);
    // One iteration every 40 ms, e2e 1.5 ms x batch; device times on every other iteration only.
    for (int i = 0; i < iterations; ++i) {
        IterationRecord it;
        it.start_ns = kT0 + i * 40'000'000LL;
        it.e2e_ns = 1'500'000 * batch;
        if (i % 2 == 0) {
            it.h2d_ns = 100'000;
            it.compute_ns = 1'000'000 * batch;
            it.d2h_ns = 50'000;
        }
        b.iterations.push_back(it);
    }
    b.summary.e2e.count = iterations;
    b.summary.e2e.mean = b.summary.e2e.p50 = b.summary.e2e.p99 = 1'500'000.0 * static_cast<double>(batch);
    b.summary.throughput_per_s = static_cast<double>(batch) / 0.04;
    b.origin_ns = kT0;
    return b;
}

inline GpuSample gpu_sample(std::int64_t t_ns, SamplePhase phase, double power_w) {
    GpuSample s;
    s.t_ns = t_ns;
    s.phase = phase;
    s.power_w = power_w;
    s.temperature_c = 60;
    s.sm_clock_mhz = 1980;
    s.gpu_util_pct = 97;
    s.fb_used_mib = 4096;
    s.clock_event_reasons = clock_event::kSwPowerCap;
    return s;
}

// batch 1: iterations and CPU samples; batch 8: also GPU samples (one in the warm-up, before time zero).
inline ReportGroup sample_group() {
    ReportGroup group;
    group.key = "cuda_0-resnet50-torch-fp16";
    group.title = "resnet50 / torch / fp16 / cuda:0";
    group.benchmarks.push_back(benchmark(1, 1, 10));
    group.benchmarks.push_back(benchmark(2, 8, 6));
    for (auto& b : group.benchmarks) {
        for (int i = 0; i < 3; ++i) {
            CpuSample c;
            c.t_ns = kT0 + i * 100'000'000LL;
            c.process_cpu_pct = 100.0 + i;
            c.process_rss_mib = 512;
            c.host_cpu_pct = 50;
            b.cpu.push_back(c);
        }
        b.summary.telemetry.mean_process_cpu_pct = 101;
    }
    auto& b8 = group.benchmarks[1];
    b8.gpu.push_back(gpu_sample(kT0 - 500'000'000, SamplePhase::warmup, 100));
    b8.gpu.push_back(gpu_sample(kT0 + 20'000'000, SamplePhase::measure, 300));
    b8.gpu.push_back(gpu_sample(kT0 + 70'000'000, SamplePhase::measure, 310));
    b8.gpu.push_back(gpu_sample(kT0 + 150'000'000, SamplePhase::measure, 320));
    b8.summary.telemetry.mean_power_w = 310;
    b8.summary.telemetry.joules_per_inference = 0.0155;
    b8.summary.telemetry.inferences_per_joule = 64.5;
    return group;
}

inline std::string read_binary(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// One member of a zip file (an xlsx), through Debian's unzip (scripts/setup.sh installs it).
inline std::string zip_member(const std::filesystem::path& zip, const std::string& member) {
    const auto run = run_captured({"unzip", "-p", zip.string(), member}, std::nullopt, 30'000);
    EXPECT_TRUE(run.status.success()) << "unzip -p " << zip << " " << member << ": " << run.err;
    return run.out;
}

inline std::vector<std::string> zip_members(const std::filesystem::path& zip) {
    const auto run = run_captured({"unzip", "-Z1", zip.string()}, std::nullopt, 30'000);
    EXPECT_TRUE(run.status.success()) << "unzip -Z1 " << zip << ": " << run.err;
    std::vector<std::string> members;
    std::size_t begin = 0;
    while (begin < run.out.size()) {
        const auto end = run.out.find('\n', begin);
        members.push_back(run.out.substr(begin, end - begin));
        if (end == std::string::npos) break;
        begin = end + 1;
    }
    return members;
}

// The value of an attribute in the element's opening tag `tag` ("<c r=\"B2\" t=\"inlineStr\">"), or "".
inline std::string attribute(std::string_view tag, std::string_view name) {
    const std::string key = " " + std::string(name) + "=\"";
    const auto at = tag.find(key);
    if (at == std::string_view::npos) return {};
    const auto from = at + key.size();
    return std::string(tag.substr(from, tag.find('"', from) - from));
}

// Calls visit(ref, at) for each cell of a sheet's XML ("B2", the offset of its "<c"): rows and cells
// without a reference follow the one before.
template <typename Visit>
void for_each_cell(const std::string& xml, Visit visit) {
    long row = 0;
    for (auto at = xml.find("<row"); at != std::string::npos; at = xml.find("<row", at + 1)) {
        const auto row_end = xml.find("</row>", at);
        const auto open_end = xml.find('>', at);
        const std::string r = attribute(std::string_view(xml).substr(at, open_end - at), "r");
        row = r.empty() ? row + 1 : std::stol(r);
        int col = 0;  // 1-based, of the cell before
        for (auto c = xml.find("<c", open_end); c < row_end; c = xml.find("<c", c + 1)) {
            if (xml.compare(c, 3, "<c ") != 0 && xml.compare(c, 3, "<c>") != 0) continue;
            const auto c_open_end = xml.find('>', c);
            const std::string ref = attribute(std::string_view(xml).substr(c, c_open_end - c), "r");
            std::string column;
            if (ref.empty()) {
                for (int n = ++col; n > 0; n = (n - 1) / 26) column.insert(column.begin(), static_cast<char>('A' + (n - 1) % 26));
            } else {
                column = ref.substr(0, ref.find_first_of("0123456789"));
                col = 0;
                for (const char letter : column) col = col * 26 + (letter - 'A' + 1);
            }
            visit(column + std::to_string(row), c);
        }
    }
}

// A sheet's cells as written (numbers as their text, inline strings as their text with XML escapes left
// as they are), by reference ("B2").
inline std::map<std::string, std::string> sheet_cells(const std::string& xml) {
    std::map<std::string, std::string> cells;
    for_each_cell(xml, [&](const std::string& ref, std::size_t c) {
        const auto end = xml.find("</c>", c);
        const auto value = xml.find("<v>", c) < end ? xml.find("<v>", c) + 3 : xml.find(">", xml.find("<t", c)) + 1;
        const auto value_end = xml.find('<', value);
        cells[ref] = xml.substr(value, value_end - value);
    });
    return cells;
}

// Each cell's style ("4"), by reference; "" where the cell has none (the default).
inline std::map<std::string, std::string> sheet_styles(const std::string& xml) {
    std::map<std::string, std::string> styles;
    for_each_cell(xml, [&](const std::string& ref, std::size_t c) {
        styles[ref] = attribute(std::string_view(xml).substr(c, xml.find('>', c) - c), "s");
    });
    return styles;
}

// The number format of cell style `style` in styles.xml: "General", Excel's built-in "0", or the code
// the styles part defines.
inline std::string format_code(const std::string& styles, const std::string& style) {
    if (style.empty()) return "General";
    std::size_t xf = styles.find("<xf ", styles.find("<cellXfs"));
    for (int i = 0; i < std::stoi(style); ++i) xf = styles.find("<xf ", xf + 1);
    const std::string id = attribute(std::string_view(styles).substr(xf, styles.find('>', xf) - xf), "numFmtId");
    if (id == "0") return "General";
    if (id == "1") return "0";
    const auto at = styles.find("<numFmt numFmtId=\"" + id + "\"");
    if (at == std::string::npos) return "undefined format " + id;
    return attribute(std::string_view(styles).substr(at, styles.find('>', at) - at), "formatCode");
}

inline std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
    return n;
}

}  // namespace inferbench::report::testing
