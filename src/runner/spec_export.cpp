#include "runner/spec_export.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backends/python_scripts.hpp"
#include "core/subprocess.hpp"

namespace inferbench {
namespace {

constexpr int kExitUnsupported = 3;   // torch_export.py: this PyTorch cannot do it
constexpr std::string_view kNoTorch = "PyTorch not importable";
constexpr std::int64_t kNsPerMs = 1'000'000;

std::vector<std::string> export_command(const std::string& python, const std::filesystem::path& script,
                                        const BenchmarkSpec& spec, const std::string& format) {
    return {python, script.string(), "--spec", spec.model, "--format", format, "--precision", "fp32",
            "--batch", format == "onnx" ? std::string("dynamic") : std::to_string(spec.batch_size),
            "--device", "cpu", "--cache-dir", (std::filesystem::path(spec.model_cache_dir) / "torch_export").string(),
            "--option", fmt::format("seed={}", spec.seed)};
}

// The last line of stdout as JSON, or null where there is none (the interpreter could not start the script).
nlohmann::json answer(const CapturedRun& run) {
    std::string out = run.out;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    const auto newline = out.rfind('\n');
    const std::string last = newline == std::string::npos ? out : out.substr(newline + 1);
    return nlohmann::json::parse(last, nullptr, /*allow_exceptions=*/false);
}

std::string traceback_tail(const nlohmann::json& json, const CapturedRun& run) {
    std::string tail;
    if (json.is_object() && json.contains("traceback_tail"))
        for (const auto& line : json["traceback_tail"]) tail += line.get<std::string>() + "\n";
    if (tail.empty()) {
        TailBuffer buffer(4096);
        buffer.append(run.err);
        tail = buffer.text();
    }
    return tail;
}

}  // namespace

SpecExport export_model_spec(const BenchmarkSpec& spec, const std::string& format) {
    const auto script = find_runner("torch_export.py");
    if (!script)
        return {"", std::nullopt, "runners/torch_export.py not found; rebuild or reinstall inferbench, or set "
                                  "INFERBENCH_RUNNER_DIR", ""};
    const int timeout_ms = spec.timeout_ns > 0 ? static_cast<int>(std::min<std::int64_t>(
                                                     spec.timeout_ns / kNsPerMs, std::numeric_limits<int>::max()))
                                               : 0;
    SpecExport result;
    for (const auto& python : interpreter_candidates("")) {
        const CapturedRun run = run_captured(export_command(python, *script, spec, format), std::nullopt, timeout_ms);
        const nlohmann::json json = answer(run);
        const std::string error = json.is_object() ? json.value("error", "") : "";
        if (run.timed_out)
            return {"", std::nullopt, fmt::format("exporting {} as {} took longer than the cell's timeout; raise "
                                                  "`timeout` in the plan", spec.model, format), traceback_tail(json, run)};
        if (run.status.success() && json.is_object() && json.contains("path"))
            return {json["path"].get<std::string>(), std::nullopt, std::nullopt, ""};
        const bool no_torch = error.find(kNoTorch) != std::string::npos || run.status.code == 127;
        result = {"", std::nullopt, std::nullopt, traceback_tail(json, run)};
        const std::string what = error.empty() ? fmt::format("torch_export.py {}", run.status.describe()) : error;
        if (run.status.exited && run.status.code == kExitUnsupported && !no_torch) {
            result.skip_reason = fmt::format("{} (making the {} file for backend {})", what, format, spec.backend);
            return result;
        }
        result.failure = fmt::format("model export for backend {} failed: {}", spec.backend, what);
        if (!no_torch) return result;
        result.skip_reason = fmt::format("PyTorch, which turns {} into the {} file backend {} reads, is not importable "
                                         "by python3 or /usr/bin/python3; install it (python3-torch)",
                                         spec.model, format, spec.backend);
        result.failure.reset();
    }
    return result;
}

}  // namespace inferbench
