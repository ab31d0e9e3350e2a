#include "core/process/process_identity.hpp"

#include <unistd.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

namespace inferbench {
namespace {

std::string first_line(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

std::string host_name() {
    std::array<char, 256> host{};
    gethostname(host.data(), host.size() - 1);
    return host.data();
}

std::string pid_namespace_of(const std::string& proc_dir) {
    std::error_code error;
    const auto target = std::filesystem::read_symlink(proc_dir + "/ns/pid", error);
    return error ? std::string() : target.string();
}

}  // namespace

std::optional<std::int64_t> process_start_ticks(pid_t pid) {
    const std::string stat = first_line("/proc/" + std::to_string(pid) + "/stat");
    // "PID (COMM) STATE ..." where COMM may hold spaces and parentheses: fields count from the last ')'.
    const auto close = stat.rfind(')');
    if (close == std::string::npos) return std::nullopt;
    std::istringstream fields(stat.substr(close + 1));
    std::string state;
    fields >> state;
    if (state == "Z" || state == "X") return std::nullopt;
    std::string skipped;
    for (int field = 4; field < 22; ++field) fields >> skipped;  // fields 4..21
    std::int64_t start = 0;
    if (!(fields >> start)) return std::nullopt;
    return start;
}

ProcessIdentity current_process_identity() {
    ProcessIdentity identity;
    identity.pid = getpid();
    identity.start_ticks = process_start_ticks(getpid()).value_or(0);
    identity.host = host_name();
    identity.boot_id = first_line("/proc/sys/kernel/random/boot_id");
    identity.pid_namespace = pid_namespace_of("/proc/self");
    return identity;
}

ProcessState process_state(const ProcessIdentity& identity) {
    const ProcessIdentity self = current_process_identity();
    if (identity.host != self.host || identity.boot_id.empty()) return ProcessState::unknown;
    if (identity.boot_id != self.boot_id) return ProcessState::gone;  // the machine restarted since
    if (identity.pid_namespace != self.pid_namespace) return ProcessState::unknown;
    const auto start = process_start_ticks(static_cast<pid_t>(identity.pid));
    return start && *start == identity.start_ticks ? ProcessState::alive : ProcessState::gone;
}

}  // namespace inferbench
