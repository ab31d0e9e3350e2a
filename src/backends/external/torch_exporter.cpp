#include "backends/external/torch_exporter.hpp"

#include <signal.h>

#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backends/external/child_process.hpp"
#include "backends/external/external_variants.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/time_units.hpp"
#include "core/units.hpp"

namespace inferbench::external {
namespace {

using json = nlohmann::json;

constexpr std::size_t kStderrTailLines = 8;
constexpr std::size_t kQuotedBytes = 300;
// "No limit" for the supervisor, which takes a duration: about 31 years.
constexpr std::int64_t kNoLimitNs = 1'000'000'000'000'000'000;

std::string what_was_asked(const ExportRequest& request) {
    return fmt::format("{} to {} ({}, batch {}, {})", request.spec, to_string(request.format),
                       to_string(request.precision), request.batch ? std::to_string(*request.batch) : "dynamic",
                       to_string(request.device));
}

// The last line of stdout that is not blank: the contract's JSON line.
std::string last_line(const std::vector<std::string>& lines) {
    for (auto it = lines.rbegin(); it != lines.rend(); ++it)
        if (!trim(*it).empty()) return std::string(trim(*it));
    return "";
}

std::optional<json> last_json(const std::vector<std::string>& lines) {
    const std::string line = last_line(lines);
    if (line.empty() || line.front() != '{') return std::nullopt;
    json parsed = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!parsed.is_object()) return std::nullopt;
    return parsed;
}

[[noreturn]] void broke_contract(std::string_view what, const std::vector<std::string>& lines) {
    throw EnvironmentError(fmt::format("{} broke its contract: {}; its last line: '{}'", kTorchExportScript, what,
                                       last_line(lines).substr(0, kQuotedBytes)));
}

template <typename T>
T field(const json& object, std::string_view key, std::string_view where, const std::vector<std::string>& lines) {
    const auto it = object.find(key);
    if (it == object.end()) broke_contract(fmt::format("{} has no '{}'", where, key), lines);
    try {
        return it->get<T>();
    } catch (const json::exception&) {
        broke_contract(fmt::format("{} '{}' is {}", where, key, it->dump()), lines);
    }
}

TensorInfo read_input(const json& input, const std::vector<std::string>& lines) {
    if (!input.is_object()) broke_contract("an entry of 'inputs' is not an object", lines);
    TensorInfo info;
    info.name = field<std::string>(input, "name", "an input", lines);
    const auto dtype_name = field<std::string>(input, "dtype", "input " + info.name, lines);
    const auto dtype = parse_dtype(dtype_name);
    if (!dtype) broke_contract(fmt::format("input {} has dtype '{}', which inferbench does not know", info.name, dtype_name), lines);
    info.dtype = *dtype;
    const auto shape = field<json>(input, "shape", "input " + info.name, lines);
    if (!shape.is_array()) broke_contract(fmt::format("input {}'s shape is not a list", info.name), lines);
    // A dimension the file leaves open (null, or the exporter's symbol for it) is dynamic.
    for (const auto& dim : shape) info.shape.push_back(dim.is_number_integer() ? dim.get<std::int64_t>() : -1);
    return info;
}

ExportedModel read_exported_model(const std::vector<std::string>& lines) {
    const auto answer = last_json(lines);
    if (!answer) broke_contract("it exited 0 without a JSON line at the end of its output", lines);
    ExportedModel model;
    model.path = field<std::string>(*answer, "path", "the answer", lines);
    if (!std::filesystem::path(model.path).is_absolute()) broke_contract("'path' is not an absolute path", lines);
    model.cache_hit = field<bool>(*answer, "cache_hit", "the answer", lines);
    model.seconds = field<double>(*answer, "seconds", "the answer", lines);
    if (!(model.seconds >= 0)) broke_contract("'seconds' is negative", lines);
    model.torch_version = field<std::string>(*answer, "torch_version", "the answer", lines);
    const auto inputs = field<json>(*answer, "inputs", "the answer", lines);
    if (!inputs.is_array()) broke_contract("'inputs' is not a list", lines);
    for (const auto& input : inputs) model.inputs.push_back(read_input(input, lines));
    return model;
}

// The exporter's own error line, else what it left on stderr.
std::string error_line(const ExportRun& run) {
    if (const auto failure = last_json(run.stdout_lines)) {
        const auto it = failure->find("error");
        if (it != failure->end() && it->is_string() && !it->get<std::string>().empty()) return it->get<std::string>();
    }
    return fmt::format("{} gave no error line{}", kTorchExportScript,
                       run.stderr_tail.empty() ? "" : "; its last output: " + run.stderr_tail);
}

std::string signal_message(const ExportRun& run, const ExportRequest& request) {
    std::string message = fmt::format("{} was {} after {:.1f} s while exporting {}", kTorchExportScript,
                                      run.status.describe(), run.wall_seconds, what_was_asked(request));
    if (run.status.signal == SIGKILL)
        message += ": the kernel's out-of-memory killer sends this signal when memory runs out (dmesg says so); "
                   "free memory, or export a smaller batch or model";
    else if (!run.stderr_tail.empty())
        message += "; its last output: " + run.stderr_tail;
    return message;
}

ExportRun run_once(const std::vector<std::string>& argv, std::int64_t deadline_ns, bool forward_stderr) {
    ExportRun run;
    const std::int64_t begin = monotonic_ns();
    ChildProcess child(argv, "", forward_stderr);
    const std::int64_t limit_ns = deadline_ns > 0 ? std::max<std::int64_t>(deadline_ns - begin, 1) : kNoLimitNs;
    run.status = child.wait(limit_ns, &run.timed_out);
    child.read_lines(0, run.stdout_lines);  // what stdout gave while waiting
    run.wall_seconds = ns_to_s(monotonic_ns() - begin);
    run.stderr_tail = child.stderr_tail(kStderrTailLines);
    return run;
}

// The traceback of a failure, for the worker's stored output (the error line itself becomes the reason).
void keep_traceback(const ExportRun& run, std::string* output) {
    const auto tail = export_traceback_tail(run.stdout_lines);
    if (tail.empty()) return;
    std::string text = fmt::format("{} traceback (last lines):\n", kTorchExportScript);
    for (const auto& line : tail) text += fmt::format("  {}\n", line);
    if (output)
        *output += text;
    else
        std::fputs(text.c_str(), stderr);
}

}  // namespace

std::string_view to_string(ExportFormat format) {
    switch (format) {
        case ExportFormat::pt2:
            return "pt2";
        case ExportFormat::torchscript:
            return "torchscript";
        case ExportFormat::onnx:
            return "onnx";
    }
    return "?";
}

std::vector<std::string> export_arguments(const ExportRequest& request) {
    std::vector<std::string> args = {"--spec",      request.spec,
                                     "--format",    std::string(to_string(request.format)),
                                     "--precision", std::string(to_string(request.precision)),
                                     "--batch",     request.batch ? std::to_string(*request.batch) : "dynamic",
                                     "--device",    to_string(request.device),
                                     "--cache-dir", request.cache_dir.string()};
    if (request.seq_len > 0) args.insert(args.end(), {"--seq-len", std::to_string(request.seq_len)});
    for (const auto& option : request.options) args.insert(args.end(), {"--option", option});
    return args;
}

std::vector<std::string> export_traceback_tail(const std::vector<std::string>& stdout_lines) {
    std::vector<std::string> tail;
    const auto failure = last_json(stdout_lines);
    if (!failure) return tail;
    const auto it = failure->find("traceback_tail");
    if (it == failure->end() || !it->is_array()) return tail;
    for (const auto& line : *it)
        if (line.is_string()) tail.push_back(line.get<std::string>());
    return tail;
}

ExportOutcome read_export_outcome(const ExportRun& run, const ExportRequest& request, std::int64_t timeout_ns) {
    if (run.timed_out)
        throw EnvironmentError(fmt::format(
            "{} did not finish exporting {} within {} (the benchmark's timeout, less a margin to report it); "
            "raise the plan's timeout (an AOTInductor compile can take minutes), or export a smaller model or batch",
            kTorchExportScript, what_was_asked(request), format_duration(timeout_ns)));
    if (!run.status.exited) throw EnvironmentError(signal_message(run, request));
    switch (run.status.code) {
        case 0:
            return {read_exported_model(run.stdout_lines), ""};
        case kExportUnsupported:
            return {std::nullopt, error_line(run)};
        case kExportBadInput:
            throw UserError(error_line(run));
        case kExportFailed:
            throw EnvironmentError(error_line(run));
        default:
            throw EnvironmentError(fmt::format("{} ended with {} while exporting {}{}", kTorchExportScript,
                                               run.status.describe(), what_was_asked(request),
                                               run.stderr_tail.empty() ? "" : "; its last output: " + run.stderr_tail));
    }
}

ExportOutcome run_torch_export(const ExportRequest& request, const ExportCommand& command) {
    const auto script = find_runner(kTorchExportScript);
    if (!script) {
        std::vector<std::string> dirs;
        for (const auto& dir : runner_search_dirs()) dirs.push_back(dir.string());
        throw EnvironmentError(fmt::format("{} not found in {}; rebuild or reinstall inferbench, or set INFERBENCH_RUNNER_DIR",
                                           kTorchExportScript, join(dirs, ", ")));
    }
    const std::int64_t deadline_ns = command.timeout_ns > 0 ? monotonic_ns() + command.timeout_ns : 0;
    const auto arguments = export_arguments(request);
    std::vector<std::string> unable;  // "python3: why it could not"
    std::size_t not_started = 0;
    const auto interpreters = interpreter_candidates(command.python);
    for (const auto& interpreter : interpreters) {
        std::vector<std::string> argv = {interpreter, script->string()};
        argv.insert(argv.end(), arguments.begin(), arguments.end());
        const ExportRun run = run_once(argv, deadline_ns, command.traceback == nullptr);
        if (run.status.exited && run.status.code == 127) {
            ++not_started;
            unable.push_back(fmt::format("{}: cannot start it ({})", interpreter, run.stderr_tail));
            continue;
        }
        keep_traceback(run, command.traceback);
        ExportOutcome outcome = read_export_outcome(run, request, command.timeout_ns);
        if (outcome.model) return outcome;
        unable.push_back(fmt::format("{}: {}", interpreter, outcome.skip_reason));
    }
    if (not_started == interpreters.size())
        throw EnvironmentError(fmt::format("no Python could start {}: {}; install python3 or set the backend's python option",
                                           kTorchExportScript, join(unable, "; ")));
    return {std::nullopt, join(unable, "; ")};
}

std::string release_version(std::string_view torch_version) {
    const auto end = torch_version.find_first_not_of("0123456789.");
    std::string_view release = torch_version.substr(0, end);
    while (!release.empty() && release.back() == '.') release.remove_suffix(1);
    return std::string(release);
}

}  // namespace inferbench::external
