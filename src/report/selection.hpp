// Which stored benchmarks a report covers, and how they fall into groups. One filter for every command
// that reads results back (report, compare, ...): runs, then device / model / backend / precision /
// batch size lists; a value the selected runs do not have is a UserError that lists what they have.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "store/results_store.hpp"

namespace inferbench::report {

struct ReportFilter {
    std::string runs = "latest";                                     // "latest", "all", or run ids: "3", "3,5"
    std::vector<std::string> devices, models, backends, precisions;  // empty: all
    std::vector<std::int64_t> batch_sizes;                           // empty: all
};

// The matching benchmarks in store order (run, then plan order), whatever their status. Throws
// UserError for an unknown run id or filter value, or when nothing matches.
std::vector<store::BenchmarkRecord> select_benchmarks(const store::ResultsStore& results, const ReportFilter& filter);

// Benchmarks that differ only in batch size: one workbook set and one set of figures each. When the
// selection spans several runs, the run is part of the group.
struct BenchmarkGroup {
    std::string key;           // file-name part: "cpu-resnet50-onnxruntime-fp32" (+ "-<options>", "run3-" first)
    std::string title;         // for people: "resnet50 / onnxruntime / fp32 / cpu"
    std::string family_key;    // the same for (run,) device and model alone: "cpu-resnet50"
    std::string family_title;  // "resnet50 on cpu"
    std::string series_title;  // what tells the group apart within its family: "onnxruntime fp32"
    std::vector<store::BenchmarkRecord> benchmarks;  // by batch size, then run, then plan order
    // per benchmark: "batch 8"; a repeated batch size: "batch 8 #2"; a generative one: "batch 8 in 128 out 16"
    std::vector<std::string> labels;
};
std::vector<BenchmarkGroup> group_benchmarks(const std::vector<store::BenchmarkRecord>& benchmarks);

// Any text as part of a file name: letters, digits and . _ - + = stay, spaces and all else become '_'.
std::string sanitize_file_part(std::string_view text);

// A file name's part cut to 160 bytes, so that with a prefix and an extension it stays well under the
// 255 that file systems allow whatever the model's name or the swept options; a hash of the whole keeps
// two long parts with the same beginning apart.
std::string bounded_file_part(const std::string& part);

}  // namespace inferbench::report
