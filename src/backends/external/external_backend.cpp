#include "backends/external/external_backend.hpp"

#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include "backends/model_spec_support.hpp"
#include "backends/options.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/metrics/harness_metrics.hpp"
#include "core/plan/model_spec.hpp"
#include "core/units.hpp"
#include "models/decoder_models.hpp"
#include "models/hf_folder.hpp"

namespace inferbench::external {
namespace {

constexpr int kReadPollMs = 100;  // how often a stop request is noticed while the runner is quiet
constexpr std::size_t kStderrLines = 3;
constexpr std::size_t kQuotedLineBytes = 200;

std::string option_value(const OptionMap& options, std::string_view key) {
    const auto it = options.find(key);
    return it == options.end() ? std::string() : it->second;
}

bool is_true(std::string_view value) { return value == "true" || value == "yes" || value == "on" || value == "1"; }

// The model's format as the orchestrator reads it: the extension without its dot ("" for zoo names).
std::string model_format(const std::string& model) {
    if (is_model_spec(model)) return {};
    const std::string extension = std::filesystem::path(model).extension().string();
    return extension.empty() ? std::string() : extension.substr(1);
}

void print_runner_text(const std::string& text) { std::fprintf(stderr, "%s\n", text.c_str()); }

// What a generating variant can be given: a zoo decoder (written as a folder for it) or a folder with config.json.
bool reads_hf_folder(const std::string& model) {
    std::error_code ec;
    return models::find_decoder_model(model) ||
           std::filesystem::is_regular_file(std::filesystem::path(model) / models::kHfConfigFile, ec);
}

// A Hugging Face model folder's decoder, held at `precision` (fp32, fp16 or bf16: the runner converts).
DecoderInfo read_decoder(const std::string& model_path, Precision precision) {
    DecoderInfo info;
    info.shape = models::read_hf_decoder_shape(model_path);
    info.kv_dtype = precision == Precision::fp16 ? DType::f16 : precision == Precision::bf16 ? DType::bf16 : DType::f32;
    info.weight_bytes = parameter_count(info.shape) * static_cast<std::int64_t>(size_of(info.kv_dtype));
    return info;
}

}  // namespace

struct ExternalBackend::LoopState {
    std::int64_t received = 0;  // iteration lines, stored or not
    std::int64_t dropped = 0;   // arrived after the sink was full
    bool full = false;
    bool done = false;
    std::int64_t done_iterations = 0;
    std::int64_t warmup_iterations = kNotMeasured;
    std::int64_t warmup_ns = kNotMeasured;
    bool term_sent = false;
    bool killed = false;
    std::int64_t kill_at_ns = 0;
};

ExternalBackend::ExternalBackend(const ExternalVariant& variant, ExternalTimeouts timeouts)
    : variant_(variant), timeouts_(timeouts) {}

std::string ExternalBackend::version() const {
    if (header_) return header_->version;
    if (!variant_.uses_python()) return "unknown";
    const Described& described = describe({});
    return described.header ? described.header->version : "unknown";
}

Capabilities ExternalBackend::capabilities() const {
    Capabilities caps;
    caps.runs_own_loop = !variant_.generates;
    caps.generates = variant_.generates;
    caps.builds_zoo_models = variant_.builds_zoo_models;
    caps.model_formats = variant_.model_formats;
    caps.cuda_graphs = !variant_.cuda_only_flags.empty();
    caps.device_timing = caps.cuda_graphs;  // the runner that has CUDA graphs times with CUDA events too
    caps.devices = {DeviceKind::cpu, DeviceKind::cuda};
    caps.precisions = variant_.precisions;
    // Narrowed by the default interpreter's answer, but never in a worker that already runs one.
    if (header_ || child_ || !variant_.uses_python()) return caps;
    const Described& described = describe({});
    if (!described.header) return caps;
    caps.devices.clear();
    for (const auto& device : described.header->devices)
        caps.devices.push_back(device == "cuda" ? DeviceKind::cuda : DeviceKind::cpu);
    std::erase_if(caps.precisions, [&](Precision p) {
        const auto& lists = described.header->precisions;
        return std::none_of(lists.begin(), lists.end(), [&](const auto& entry) {
            return std::find(entry.second.begin(), entry.second.end(), to_string(p)) != entry.second.end();
        });
    });
    return caps;
}

std::optional<std::string> ExternalBackend::unsupported_reason(const BenchmarkSpec& spec) const {
    if (!variant_.uses_python() && option_value(spec.backend_options, "command").empty()) {
        return fmt::format(
            "backend {} needs backend_options.{}.command: the runner's command line "
            "(docs/external-runner-protocol.md)",
            name(), name());
    }
    for (const auto& flag : variant_.cuda_only_flags) {
        if (spec.device.kind != DeviceKind::cuda && is_true(option_value(spec.backend_options, flag)))
            return fmt::format("option {}=true needs a cuda device", flag);
    }
    if (variant_.generates && !spec.generation.active())
        return fmt::format("backend {} runs decoder generation only: give the cell input_tokens and output_tokens",
                           name());
    if (variant_.generates && !reads_hf_folder(spec.model))
        return fmt::format("backend {} reads a Hugging Face model folder (config.json + model.safetensors) or a zoo "
                           "decoder; {} is neither",
                           name(), spec.model);
    if (!variant_.generates && spec.generation.active()) return Backend::unsupported_reason(spec);
    if (auto refusal = model_spec_refusal(name(), capabilities(), spec)) return refusal;
    if (!spec.inputs.empty() && !variant_.takes_input_files)
        return fmt::format("the {} runner makes inputs of its own and cannot read the plan's inputs; leave inputs "
                           "unset for it",
                           name());
    const Described& described = describe(spec.backend_options);
    if (!described.header) return described.problem;
    std::string refusal = described.header->refusal(spec.device, spec.precision, model_format(spec.model));
    if (refusal.empty() && variant_.builds_zoo_models) refusal = described.header->model_refusal(spec.model);
    if (refusal.empty()) return std::nullopt;
    return refusal;
}

const ExternalBackend::Described& ExternalBackend::describe(const OptionMap& options) const {
    const std::string key = variant_.uses_python() ? "python=" + option_value(options, "python")
                                                   : "command=" + option_value(options, "command");
    std::lock_guard lock(describe_mutex_);
    auto it = described_.find(key);
    if (it == described_.end()) it = described_.emplace(key, describe_uncached(options)).first;
    return it->second;
}

ExternalBackend::Described ExternalBackend::describe_uncached(const OptionMap& options) const {
    std::vector<std::vector<std::string>> commands;
    try {
        commands = launch_commands(options);
    } catch (const EnvironmentError& e) {
        return {std::nullopt, e.what()};
    }
    const std::string python = option_value(options, "python");
    std::vector<std::string> tried;
    for (auto command : commands) {
        command.emplace_back("--describe");
        Described described = describe_with(command);
        if (described.header) return described;
        if (!variant_.uses_python() || !described.framework_missing) {
            return {std::nullopt, fmt::format("{} runner --describe failed{}: {}", name(),
                                              variant_.uses_python() ? " under " + command[0] : "", described.problem)};
        }
        tried.push_back(command[0]);
    }
    return {std::nullopt, fmt::format("{} not importable by {}; {} or set backend_options.{}.python",
                                      variant_.framework, join(tried, " or "), variant_.install_hint, name())};
}

// Exit code 3 (the framework cannot be imported) or 127 (the interpreter cannot be started) mark the
// answer framework_missing: the caller then tries the next interpreter.
ExternalBackend::Described ExternalBackend::describe_with(const std::vector<std::string>& command) const {
    ChildProcess child(command, "", /*forward_stderr=*/false);
    const std::int64_t deadline = monotonic_ns() + timeouts_.describe_ns;
    std::optional<RunnerHeader> header;
    std::string error;
    std::vector<std::string> lines;
    bool open = true;
    bool timed_out = false;
    while (open && !timed_out) {
        lines.clear();
        open = child.read_lines(kReadPollMs, lines);
        for (const auto& text : lines) {
            try {
                const RunnerLine line = parse_runner_line(text);
                if (line.kind == RunnerLine::Kind::header) header = line.header;
                if (line.kind == RunnerLine::Kind::error) error = line.text;
            } catch (const ProtocolError& e) {
                error = fmt::format("broke the protocol: {}", e.what());
            }
        }
        timed_out = monotonic_ns() >= deadline;
    }
    if (timed_out) child.kill_group();
    const ExitStatus status = child.wait(timeouts_.stop_grace_ns);
    if (header && status.success()) return {header, {}};
    if (timed_out) return {std::nullopt, fmt::format("no answer within {}", format_duration(timeouts_.describe_ns))};
    std::string problem = error.empty() ? status.describe() : fmt::format("{} ({})", error, status.describe());
    if (const auto tail = child.stderr_tail(kStderrLines); !tail.empty()) problem += "; last stderr: " + tail;
    const bool missing = status.exited && (status.code == kExitFrameworkMissing || status.code == 127);
    return {std::nullopt, problem, missing};
}

std::vector<std::vector<std::string>> ExternalBackend::launch_commands(const OptionMap& options) const {
    if (!variant_.uses_python()) {
        const std::string command = option_value(options, "command");
        if (command.empty()) throw EnvironmentError(fmt::format("backend {} needs the option command", name()));
        // exec: the shell becomes the runner, so SIGTERM reaches the runner itself.
        return {{"/bin/sh", "-c", "exec " + command + " \"$@\"", "inferbench-runner"}};
    }
    const auto script = find_runner(variant_.runner);
    if (!script) {
        std::vector<std::string> dirs;
        for (const auto& dir : runner_search_dirs()) dirs.push_back(dir.string());
        throw EnvironmentError(
            fmt::format("runner {} not found in {}; rebuild or reinstall inferbench, or set "
                        "INFERBENCH_RUNNER_DIR",
                        variant_.runner, join(dirs, ", ")));
    }
    std::vector<std::vector<std::string>> commands;
    for (const auto& interpreter : interpreter_candidates(option_value(options, "python"))) {
        std::vector<std::string> command = {interpreter, script->string()};
        command.insert(command.end(), variant_.runner_arguments.begin(), variant_.runner_arguments.end());
        commands.push_back(std::move(command));
    }
    return commands;
}

void ExternalBackend::load(const std::string& model_path, const BenchmarkSpec& spec) {
    child_.reset();
    header_.reset();
    pending_lines_.clear();
    error_message_.clear();
    const OptionReader reader(name(), spec.backend_options, variant_.options);
    for (const auto& flag : variant_.cuda_only_flags) reader.flag(flag);  // a bad value is a UserError now
    decoder_.reset();
    generation_.reset();
    if (variant_.generates) decoder_ = read_decoder(model_path, spec.precision);  // a bad folder fails here, at once
    const std::string request = make_request(model_path, spec).dump() + "\n";
    const auto commands = launch_commands(spec.backend_options);
    const int command_fd = variant_.generates ? kGenerationCommandFd : -1;
    for (std::size_t i = 0; i < commands.size(); ++i) {
        child_ = std::make_unique<ChildProcess>(commands[i], request, /*forward_stderr=*/true, command_fd);
        if (await_header()) return check_inputs_taken(spec);
        const ExitStatus status = child_->wait(timeouts_.stop_grace_ns);
        const bool missing = status.exited && (status.code == kExitFrameworkMissing || status.code == 127);
        if (missing && i + 1 < commands.size()) {
            error_message_.clear();
            continue;
        }
        throw EnvironmentError(failure(status, "before it was ready"));
    }
}

// A runner that does not say it fed the plan's input files (one older than them, a program of the user's that
// ignores the request's "inputs") measured inputs of its own: failed, never stored as if it had taken them.
void ExternalBackend::check_inputs_taken(const BenchmarkSpec& spec) {
    if (spec.inputs.empty() || header_->inputs) return;
    child_->kill_group();
    throw EnvironmentError(fmt::format("the {} runner did not say that it fed the plan's inputs ({}): its header has "
                                       "no \"inputs\", so it ran on inputs of its own; leave inputs unset for it, or "
                                       "make it read the request's \"inputs\" (docs/external-runner-protocol.md)",
                                       name(), spec.inputs));
}

std::vector<BackendMetric> ExternalBackend::prepared_metrics() const {
    if (!header_ || !header_->inputs) return {};
    return {{std::string(harness_metrics::kInputSamples), static_cast<double>(header_->inputs->samples), "count"},
            {std::string(harness_metrics::kInputsCycled), header_->inputs->cycled ? 1.0 : 0.0, "flag"}};
}

bool ExternalBackend::await_header() {
    std::vector<std::string> lines;
    bool open = true;
    while (open) {
        lines.clear();
        open = child_->read_lines(kReadPollMs, lines);
        for (std::size_t k = 0; k < lines.size(); ++k) {
            RunnerLine line;
            try {
                line = parse_runner_line(lines[k]);
            } catch (const ProtocolError& e) {
                throw EnvironmentError(fmt::format("{} runner broke the protocol: {}; line: {}", name(), e.what(),
                                                   lines[k].substr(0, kQuotedLineBytes)));
            }
            switch (line.kind) {
                case RunnerLine::Kind::header:
                    header_ = std::move(line.header);
                    pending_lines_.assign(lines.begin() + static_cast<std::ptrdiff_t>(k) + 1, lines.end());
                    return true;
                case RunnerLine::Kind::error:
                    error_message_ = line.text;
                    break;
                case RunnerLine::Kind::text:
                    print_runner_text(line.text);
                    break;
                case RunnerLine::Kind::iteration:
                case RunnerLine::Kind::done:
                case RunnerLine::Kind::step:
                case RunnerLine::Kind::prepared:
                case RunnerLine::Kind::generated:
                    throw EnvironmentError(fmt::format("{} runner broke the protocol: it sent '{}' before its header",
                                                       name(), lines[k].substr(0, kQuotedLineBytes)));
            }
        }
    }
    return false;
}

void ExternalBackend::infer(DeviceTimes& /*times*/) {
    throw std::logic_error(fmt::format("backend {} runs its own loop; the harness must call run_own_loop", name()));
}

std::vector<BackendMetric> ExternalBackend::measured_metrics() const {
    std::vector<BackendMetric> metrics = header_ ? header_->metrics : std::vector<BackendMetric>{};
    for (BackendMetric& m : stages_.metrics()) metrics.push_back(std::move(m));
    return metrics;
}

OwnLoopReport ExternalBackend::run_own_loop(const LoopSettings& /*settings*/, IterationSink& sink) {
    // The settings went out with the request in load(); the sink's capacity is enforced below.
    if (!child_ || !header_) throw std::logic_error("run_own_loop before load");
    LoopState state;
    stages_ = {};
    std::vector<std::string> lines = std::exchange(pending_lines_, {});
    bool open = true;
    while (true) {
        for (const auto& line : lines) handle_line(line, sink, state);
        if (!open) break;
        request_stop_if_needed(sink, state);
        lines.clear();
        open = child_->read_lines(kReadPollMs, lines);
    }
    finish(state, child_->wait(timeouts_.stop_grace_ns));
    return {state.warmup_iterations, state.warmup_ns};
}

void ExternalBackend::handle_line(const std::string& text, IterationSink& sink, LoopState& state) {
    RunnerLine line;
    try {
        line = parse_runner_line(text);
        // A runner that reads another clock (time.time_ns()) gives starts outside its own lifetime.
        const bool on_our_clock =
            line.record.start_ns >= child_->started_ns() && line.record.start_ns + line.record.e2e_ns <= monotonic_ns();
        if (line.kind == RunnerLine::Kind::iteration && !on_our_clock)
            throw ProtocolError("start_ns is not on CLOCK_MONOTONIC (time.monotonic_ns() in Python)");
        if (line.kind == RunnerLine::Kind::header) throw ProtocolError("a second header");
        if (line.kind == RunnerLine::Kind::step || line.kind == RunnerLine::Kind::prepared ||
            line.kind == RunnerLine::Kind::generated)
            throw ProtocolError("a generation's line in a cell that is not generative");
    } catch (const ProtocolError& e) {
        child_->kill_group();
        throw EnvironmentError(fmt::format("{} runner broke the protocol: {}; line: {}", name(), e.what(),
                                           text.substr(0, kQuotedLineBytes)));
    }
    switch (line.kind) {
        case RunnerLine::Kind::iteration:
            ++state.received;
            if (state.full) {
                ++state.dropped;
            } else {
                stages_.add(line);
                state.full = !sink.add(line.record);
            }
            break;
        case RunnerLine::Kind::done:
            state.done = true;
            state.done_iterations = line.done_iterations;
            state.warmup_iterations = line.done_warmup_iterations;
            state.warmup_ns = line.done_warmup_ns;
            break;
        case RunnerLine::Kind::error:
            error_message_ = line.text;
            break;
        case RunnerLine::Kind::text:
            print_runner_text(line.text);
            break;
        case RunnerLine::Kind::header:
        case RunnerLine::Kind::step:
        case RunnerLine::Kind::prepared:
        case RunnerLine::Kind::generated:
            break;  // refused above
    }
}

// Ctrl-C, or more iterations than the harness can store: SIGTERM, then SIGKILL after the grace time.
void ExternalBackend::request_stop_if_needed(const IterationSink& sink, LoopState& state) {
    const std::int64_t now = monotonic_ns();
    if (!state.term_sent && (state.dropped > 0 || sink.stop_requested())) {
        child_->send_signal(SIGTERM);
        state.term_sent = true;
        state.kill_at_ns = now + timeouts_.stop_grace_ns;
    }
    if (state.term_sent && !state.killed && now >= state.kill_at_ns) {
        std::fprintf(stderr, "inferbench: the %s runner ignored SIGTERM for %s; killed it, keeping what it sent\n",
                     name().c_str(), format_duration(timeouts_.stop_grace_ns).c_str());
        child_->kill_group();
        state.killed = true;
    }
}

void ExternalBackend::finish(const LoopState& state, const ExitStatus& status) const {
    if (!error_message_.empty()) throw EnvironmentError(failure(status, "while measuring"));
    // Stopped by us: what arrived is kept, whether the runner reported or just died of the signal.
    if (state.killed || (state.term_sent && status.signal == SIGTERM)) return;
    if (!status.success()) {
        throw EnvironmentError(failure(status, fmt::format("after {} measured iterations", state.received)));
    }
    if (!state.done) {
        throw EnvironmentError(fmt::format(
            "{} runner broke the protocol: it exited without a done line after {} iterations", name(), state.received));
    }
    if (state.done_iterations != state.received) {
        throw EnvironmentError(
            fmt::format("{} runner broke the protocol: its done line counts {} iterations, it sent {}", name(),
                        state.done_iterations, state.received));
    }
}

std::string ExternalBackend::failure(const ExitStatus& status, std::string_view when) const {
    std::string text = fmt::format("{} runner failed", name());
    if (!error_message_.empty()) text += ": " + error_message_;
    text += fmt::format(" ({} {})", status.describe(), when);
    if (const auto tail = child_->stderr_tail(kStderrLines); !tail.empty()) text += "; last stderr: " + tail;
    return text;
}

DecoderInfo ExternalBackend::decoder_info() const {
    if (!decoder_) return Backend::decoder_info();
    return *decoder_;
}

void ExternalBackend::prepare_generation(const GenerationRequest& request) {
    if (!child_ || !header_ || !decoder_) throw std::logic_error("prepare_generation before a generating load");
    if (static_cast<std::int64_t>(request.prompts.size()) != request.batch * request.input_tokens)
        throw std::logic_error("prepare_generation: prompts are not batch x input_tokens");
    child_->send_command(make_prepare_command(request).dump());
    while (const auto line = next_generation_line([] {})) {
        if (line->kind == RunnerLine::Kind::prepared) {
            generation_ = request;
            return;
        }
        if (line->kind != RunnerLine::Kind::error)
            throw EnvironmentError(fmt::format("{} runner broke the protocol: it answered the prompts with a line "
                                               "other than prepared",
                                               name()));
    }
    fail_generation("while preparing the generation");
}

// Steps are timed by the runner (CUDA-synchronised time.monotonic_ns() when each step's tokens are on its host);
// their lines come once the generation is over, so that no printing is timed.
void ExternalBackend::generate(TokenSink& sink) {
    if (!generation_) throw std::logic_error("generate before prepare_generation");
    const std::int64_t called_ns = monotonic_ns();
    child_->send_command(make_generate_command().dump());
    std::int64_t steps = 0;
    bool stop_sent = false;
    const auto stop_if_asked = [&] {
        if (stop_sent || !sink.stop_requested()) return;
        child_->send_signal(SIGTERM);  // the runner ends this generation after its current step
        stop_sent = true;
    };
    while (const auto line = next_generation_line(stop_if_asked)) {
        if (line->kind == RunnerLine::Kind::step) {
            if (static_cast<std::int64_t>(line->step_tokens.size()) != generation_->batch)
                throw EnvironmentError(fmt::format("{} runner broke the protocol: a step of {} tokens for a batch of {}",
                                                   name(), line->step_tokens.size(), generation_->batch));
            if (line->step_end_ns < called_ns || line->step_end_ns > monotonic_ns())
                throw EnvironmentError(fmt::format("{} runner broke the protocol: a step's end_ns is not on "
                                                   "CLOCK_MONOTONIC (time.monotonic_ns() in Python)",
                                                   name()));
            sink.step_ended_at(line->step_end_ns, line->step_tokens);
            ++steps;
        } else if (line->kind == RunnerLine::Kind::generated) {
            const bool whole = line->generated_steps == generation_->output_tokens;
            if (line->generated_steps != steps || (!whole && !stop_sent && !sink.stop_requested()))
                throw EnvironmentError(fmt::format("{} runner broke the protocol: {} steps sent, its generated line "
                                                   "says {}, the cell asked for {}",
                                                   name(), steps, line->generated_steps, generation_->output_tokens));
            return;
        } else if (line->kind != RunnerLine::Kind::error) {
            throw EnvironmentError(fmt::format("{} runner broke the protocol: a line other than step or generated "
                                               "during a generation",
                                               name()));
        }
    }
    fail_generation(fmt::format("after {} of {} steps", steps, generation_->output_tokens));
}

std::optional<RunnerLine> ExternalBackend::next_generation_line(const std::function<void()>& between_reads) {
    while (true) {
        while (!pending_lines_.empty()) {
            const std::string text = pending_lines_.front();
            pending_lines_.erase(pending_lines_.begin());
            RunnerLine line;
            try {
                line = parse_runner_line(text);
            } catch (const ProtocolError& e) {
                child_->kill_group();
                throw EnvironmentError(fmt::format("{} runner broke the protocol: {}; line: {}", name(), e.what(),
                                                   text.substr(0, kQuotedLineBytes)));
            }
            if (line.kind == RunnerLine::Kind::text) {
                print_runner_text(line.text);
                continue;
            }
            if (line.kind == RunnerLine::Kind::error) error_message_ = line.text;
            return line;
        }
        between_reads();
        if (!child_->read_lines(kReadPollMs, pending_lines_) && pending_lines_.empty()) return std::nullopt;
    }
}

void ExternalBackend::fail_generation(std::string_view when) {
    const ExitStatus status = child_->wait(timeouts_.stop_grace_ns);
    throw EnvironmentError(failure(status, when));
}

std::unique_ptr<Backend> make_external_backend(std::string_view name) {
    return std::make_unique<ExternalBackend>(find_variant(name));
}

}  // namespace inferbench::external
