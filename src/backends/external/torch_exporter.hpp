// The C++ side of runners/torch_export.py, the one program that turns a PyTorch model source (a zoo name,
// a torchvision:/timm:/hf: spec, python:FILE.py:FACTORY, a TorchScript or .pt2 file) into the file a C++
// backend loads (an AOTInductor .pt2 package, TorchScript, ONNX), cached by everything that changes it.
// This side builds its command line, runs it under a time limit in its own process group, and reads its
// answer: one JSON line on stdout, exit 0 (made or found in the cache), 1 (failed while exporting), 2 (bad
// input), 3 (this PyTorch cannot: the cell is skipped). docs/architecture.md states the contract.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.hpp"
#include "core/spec.hpp"
#include "core/process/subprocess.hpp"

namespace inferbench::external {

inline constexpr std::string_view kTorchExportScript = "torch_export.py";

// Exit statuses of torch_export.py besides 0.
inline constexpr int kExportFailed = 1;       // a failure while exporting or compiling (factory raised, out of memory)
inline constexpr int kExportBadInput = 2;     // unknown library or model, bad spec, missing file, foreign .pt2
inline constexpr int kExportUnsupported = 3;  // this PyTorch cannot make that format: skip the cell

enum class ExportFormat { pt2, torchscript, onnx };
std::string_view to_string(ExportFormat format);

struct ExportRequest {
    std::string spec;  // the model source, as the plan names it (a file as its path)
    ExportFormat format = ExportFormat::pt2;
    Precision precision = Precision::fp32;
    std::optional<std::int64_t> batch;  // nothing: one file for every batch size (--batch dynamic)
    Device device;
    std::filesystem::path cache_dir;
    std::int64_t seq_len = 0;          // text models' sequence length; 0: the exporter's default
    std::vector<std::string> options;  // KEY=VALUE, one --option each
};

// The arguments after the interpreter and the script's path.
std::vector<std::string> export_arguments(const ExportRequest& request);

// What the exporter made (its success line).
struct ExportedModel {
    std::string path;
    bool cache_hit = false;
    double seconds = 0;  // the export or compile; on a cache hit, the lookup
    std::string torch_version;
    std::vector<TensorInfo> inputs;  // a dimension the file leaves dynamic is -1
};

// The exporter's answer: the file, or why this PyTorch cannot make it (the cell is then skipped).
struct ExportOutcome {
    std::optional<ExportedModel> model;
    std::string skip_reason;
};

// What one finished run of the exporter left behind.
struct ExportRun {
    ExitStatus status;
    bool timed_out = false;
    double wall_seconds = 0;
    std::vector<std::string> stdout_lines;
    std::string stderr_tail;  // its last lines, " | " between them
};

// The answer of a run that ended: exit 0 -> the model; exit 3 -> the skip reason; exit 2 -> UserError; exit 1,
// another status, a signal or the time limit (timeout_ns) -> EnvironmentError. Each says what happened in one
// line, with the exporter's own error line where it gave one. A success line that breaks the contract is an
// EnvironmentError naming the field.
ExportOutcome read_export_outcome(const ExportRun& run, const ExportRequest& request, std::int64_t timeout_ns);

// The last lines of the Python traceback the exporter's failure line carries, for the stored output.
std::vector<std::string> export_traceback_tail(const std::vector<std::string>& stdout_lines);

struct ExportCommand {
    std::string python;           // a backend's `python` option; empty: python3 on PATH, then /usr/bin/python3
    std::int64_t timeout_ns = 0;  // 0: none
    // Where a failure's traceback tail goes; nullptr: our stderr, with the exporter's own stderr forwarded
    // as it comes (a worker's stored output keeps both).
    std::string* traceback = nullptr;
};

// Runs torch_export.py (found as the runners are: $INFERBENCH_RUNNER_DIR, beside the executable, the install
// tree) with each interpreter in turn until one can do it: a Python that cannot start it (127) or whose
// PyTorch cannot (3) hands over to the next; the reasons of all are the skip reason when none can. The
// traceback tail of a failure goes to command.traceback, else to our stderr (in a worker, the benchmark's
// stored output keeps it). Throws as read_export_outcome does, and EnvironmentError when the script is missing.
ExportOutcome run_torch_export(const ExportRequest& request, const ExportCommand& command);

// The release part of a PyTorch version ("2.11.0+cu130" -> "2.11.0", Debian's "1.13.0a0" -> "1.13.0"), to
// compare the exporter's PyTorch with the LibTorch a backend runs its file on.
std::string release_version(std::string_view torch_version);

}  // namespace inferbench::external
