#include "backends/trtexec/trtexec_log_settings.hpp"

#include <string>

#include "core/units.hpp"

namespace inferbench::trtexec::detail {
namespace {

constexpr auto npos = std::string_view::npos;

// "Enabled" / "Disabled", as trtexec prints a switch.
std::optional<bool> switch_state(std::string_view text) {
    text = trim(text);
    if (text == "Enabled") return true;
    if (text == "Disabled") return false;
    return std::nullopt;
}

// The text after `prefix`, when `message` starts with it.
std::optional<std::string_view> after(std::string_view message, std::string_view prefix) {
    if (!message.starts_with(prefix)) return std::nullopt;
    return message.substr(prefix.size());
}

LogTuning& tuning(TrtexecLog& log) {
    if (!log.tuning) log.tuning.emplace();
    return *log.tuning;
}

// "&&&& TASK_BEGIN [iter=0] BuildRoute = '-knob=on'" and its TASK_END and TASK_ABORT.
bool read_task_banner(std::string_view message, TrtexecLog& log) {
    const auto rest = after(message, "&&&& TASK_");
    if (!rest) return false;
    if (rest->starts_with("BEGIN")) ++tuning(log).iterations_begun;
    else if (rest->starts_with("END")) ++tuning(log).iterations_ended;
    else if (rest->starts_with("ABORT")) ++tuning(log).iterations_aborted;
    else return false;
    return true;
}

// "Best iteration: -knob=on -other=off (gpu_time_ms=1.25)".
void read_best_iteration(std::string_view text, TrtexecLog& log) {
    constexpr std::string_view kTime = " (gpu_time_ms=";
    const auto time = text.rfind(kTime);
    LogTuning& facts = tuning(log);
    facts.best_route = std::string(trim(text.substr(0, time)));
    if (time == npos) return;
    const std::string_view value = text.substr(time + kTime.size());
    facts.best_gpu_time_ms = parse_double(value.substr(0, value.find(')')));
}

}  // namespace

bool read_setting_line(std::string_view message, char severity, TrtexecLog& log) {
    if (trim(message) == "=== Performance summary ===") {
        ++log.performance_summaries;
    } else if (const auto precision = after(message, "Precision: ")) {
        if (log.build_precision.empty()) log.build_precision = std::string(trim(*precision));
    } else if (const auto transfers = after(message, "Data transfers: ")) {
        log.data_transfers = switch_state(*transfers);
    } else if (const auto graph = after(message, "CUDA Graph: ")) {
        log.cuda_graph = switch_state(*graph);
    } else if (const auto spin = after(message, "Spin-wait: ")) {
        log.spin_wait = switch_state(*spin);
    } else if (const auto unknown = after(message, "Unknown option: "); unknown && severity == 'E') {
        const std::string_view option = trim(*unknown);
        log.unknown_options.emplace_back(option.substr(0, option.find(' ')));
    } else if (const auto best = after(message, "Best iteration: ")) {
        read_best_iteration(*best, log);
    } else if (message.starts_with("Expanded to ") && message.ends_with(" build route configurations")) {
        tuning(log);
    } else {
        return read_task_banner(message, log);
    }
    return true;
}

}  // namespace inferbench::trtexec::detail
