#include "core/process/subprocess.hpp"

#include <fcntl.h>
#include <linux/mempolicy.h>
#include <sched.h>
#include <sys/syscall.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/process/supervise.hpp"

extern char** environ;

namespace inferbench {
namespace {

using FdMapping = SpawnOptions::FdMapping;

// After the child ended: how long run_captured still reads what its pipes hold (they end at once,
// unless something that left the child's group keeps them open).
constexpr std::int64_t kFinalReadNs = 1'000'000'000;
constexpr int kFinalReadPollMs = 20;

// The memory nodes a child's preference can name (Linux's default MAX_NUMNODES on x86-64 is 1024).
constexpr int kMaxMemoryNodes = 1024;

// Everything the child needs, prepared before fork: between fork and exec only async-signal-safe
// calls are allowed, so nothing there allocates.
struct ChildPlan {
    const char* program = nullptr;
    char* const* argv = nullptr;
    char* const* envp = nullptr;
    const char* cwd = nullptr;  // nullptr: ours
    std::vector<FdMapping> fds;
    std::vector<int> moved;  // scratch, sized like fds
    int first_free = 3;      // above every target descriptor
    bool new_group = false;
    bool kill_with_parent = false;
    pid_t parent = 0;
    bool pin = false;
    cpu_set_t cpus{};
    bool prefer_node = false;
    std::array<unsigned long, kMaxMemoryNodes / (8 * sizeof(unsigned long))> node_mask{};
};

[[noreturn]] void say_and_exit(const char* what, const char* program) {
    const char prefix[] = "inferbench: cannot ";
    ssize_t ignored = write(2, prefix, sizeof(prefix) - 1);
    ignored = write(2, what, std::strlen(what));
    ignored = write(2, program, std::strlen(program));
    ignored = write(2, "\n", 1);
    (void)ignored;
    _exit(127);
}

// SpawnOptions' CPUs and memory node, applied in the child before exec (async-signal-safe system calls only).
void place_child(const ChildPlan& plan) {
    if (plan.pin && sched_setaffinity(0, sizeof(plan.cpus), &plan.cpus) != 0)
        say_and_exit("pin to the CPUs asked for (sched_setaffinity) ", plan.program);
    if (plan.prefer_node &&
        syscall(SYS_set_mempolicy, MPOL_PREFERRED, plan.node_mask.data(), plan.node_mask.size() * 8 * sizeof(unsigned long)) != 0) {
        const char note[] = "inferbench: the memory node asked for could not be preferred (set_mempolicy); running on\n";
        const ssize_t ignored = write(2, note, sizeof(note) - 1);
        (void)ignored;
    }
}

bool is_target(const ChildPlan& plan, int fd) {
    for (const auto& mapping : plan.fds) {
        if (mapping.child == fd) return true;
    }
    return false;
}

[[noreturn]] void exec_child(ChildPlan& plan) {
    if (plan.new_group) setpgid(0, 0);
    if (plan.kill_with_parent) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != plan.parent) _exit(127);  // the parent died before prctl took effect
    }
    signal(SIGPIPE, SIG_DFL);  // we may ignore it; the child should not inherit that
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    // Move every source above the targets first, so that no dup2 overwrites a source still needed.
    for (std::size_t i = 0; i < plan.fds.size(); ++i) {
        plan.moved[i] = fcntl(plan.fds[i].parent, F_DUPFD_CLOEXEC, plan.first_free);
        if (plan.moved[i] < 0) say_and_exit("map a descriptor for ", plan.program);
    }
    for (std::size_t i = 0; i < plan.fds.size(); ++i) dup2(plan.moved[i], plan.fds[i].child);
    for (int fd = 3; fd < plan.first_free; ++fd) {
        if (!is_target(plan, fd)) close(fd);
    }
    close_range(static_cast<unsigned>(plan.first_free), ~0U, 0);
    if (plan.cwd && chdir(plan.cwd) != 0) say_and_exit("change to the working directory of ", plan.program);
    place_child(plan);
    execve(plan.program, plan.argv, plan.envp);
    say_and_exit("start ", plan.program);
}

std::vector<char*> c_strings(std::vector<std::string>& storage) {
    std::vector<char*> pointers;
    pointers.reserve(storage.size() + 1);
    for (auto& text : storage) pointers.push_back(text.data());
    pointers.push_back(nullptr);
    return pointers;
}

// Our environment with `additions` replacing variables of the same name.
std::vector<std::string> environment_with(const std::vector<std::string>& additions) {
    const auto name_of = [](std::string_view entry) { return entry.substr(0, entry.find('=')); };
    std::vector<std::string> result;
    for (char** entry = environ; entry && *entry; ++entry) {
        const std::string_view name = name_of(*entry);
        const bool replaced = std::any_of(additions.begin(), additions.end(),
                                          [&](const std::string& added) { return name_of(added) == name; });
        if (!replaced) result.emplace_back(*entry);
    }
    result.insert(result.end(), additions.begin(), additions.end());
    return result;
}

UniqueFd open_dev_null() {
    UniqueFd fd(open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (!fd) throw EnvironmentError(fmt::format("cannot open /dev/null: {}", std::strerror(errno)));
    return fd;
}

void write_all(int fd, const std::string& data) {
    std::size_t written = 0;
    while (written < data.size()) {
        const ssize_t n = write(fd, data.data() + written, data.size() - written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;  // the child ended before reading; how it ended tells why
        written += static_cast<std::size_t>(n);
    }
}

bool fits_in_pipe(const UniqueFd& write_end, std::size_t bytes) {
    const int capacity = fcntl(write_end.get(), F_GETPIPE_SZ);
    return capacity > 0 && bytes <= static_cast<std::size_t>(capacity);
}

// The child's stdio and extra descriptors; `keep` holds the child's ends until the fork is done.
std::vector<FdMapping> plan_descriptors(const SpawnOptions& options, Pipe& in, Pipe& out, Pipe& err,
                                        std::vector<UniqueFd>& keep) {
    std::vector<FdMapping> fds;
    if (options.input) {
        in = make_pipe();
        fds.push_back({0, in.read.get()});
    } else {
        keep.push_back(open_dev_null());
        fds.push_back({0, keep.back().get()});
    }
    if (options.stdout_mode == Output::pipe) {
        out = make_pipe();
        fds.push_back({1, out.write.get()});
    }
    if (options.stderr_mode == Output::pipe) {
        err = make_pipe();
        fds.push_back({2, err.write.get()});
    } else if (options.stderr_mode == Output::merge) {
        if (options.stdout_mode != Output::pipe) throw std::logic_error("spawn: merging stderr needs a stdout pipe");
        fds.push_back({2, out.write.get()});
    }
    fds.insert(fds.end(), options.fds.begin(), options.fds.end());
    return fds;
}

}  // namespace

void set_nonblocking(const UniqueFd& fd) {
    if (fd) fcntl(fd.get(), F_SETFL, fcntl(fd.get(), F_GETFL) | O_NONBLOCK);
}

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
        reset();
        fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
}

void UniqueFd::reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
}

Pipe make_pipe() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw EnvironmentError(fmt::format("pipe failed: {}", std::strerror(errno)));
    return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

std::string ExitStatus::describe() const {
    if (exited) return fmt::format("exit code {}", code);
    const char* abbrev = sigabbrev_np(signal);
    return fmt::format("killed by signal {} ({})", signal, abbrev ? abbrev : "?");
}

Child spawn(const std::vector<std::string>& argv, const SpawnOptions& options) {
    if (argv.empty()) throw std::logic_error("spawn: empty argv");
    std::vector<std::string> arg_storage = argv;
    const std::vector<char*> c_argv = c_strings(arg_storage);
    std::vector<std::string> env_storage = options.env.empty() ? std::vector<std::string>() : environment_with(options.env);
    const std::vector<char*> c_env = c_strings(env_storage);
    const std::string program = find_program(argv[0]).value_or(argv[0]).string();
    const std::string cwd = options.cwd.string();
    Pipe in, out, err;
    std::vector<UniqueFd> keep;
    ChildPlan plan;
    plan.fds = plan_descriptors(options, in, out, err, keep);
    plan.moved.resize(plan.fds.size());
    for (const auto& mapping : plan.fds) plan.first_free = std::max(plan.first_free, mapping.child + 1);
    plan.program = program.c_str();
    plan.argv = c_argv.data();
    plan.envp = options.env.empty() ? environ : c_env.data();
    plan.cwd = cwd.empty() ? nullptr : cwd.c_str();
    plan.new_group = options.new_process_group;
    plan.kill_with_parent = options.kill_with_parent;
    plan.parent = getpid();
    for (const int cpu : options.cpu_affinity) {
        if (cpu < 0 || cpu >= CPU_SETSIZE) throw std::logic_error("spawn: a CPU beyond cpu_set_t");
        CPU_SET(static_cast<std::size_t>(cpu), &plan.cpus);
        plan.pin = true;
    }
    if (options.memory_node && *options.memory_node >= 0 && *options.memory_node < kMaxMemoryNodes) {
        const auto node = static_cast<std::size_t>(*options.memory_node);
        plan.node_mask[node / (8 * sizeof(unsigned long))] |= 1UL << (node % (8 * sizeof(unsigned long)));
        plan.prefer_node = true;
    }
    if (options.input) signal(SIGPIPE, SIG_IGN);
    // An input the pipe can hold is written before the fork: the child then finds all of it and its end
    // at once, even if we are stopped or killed right after forking.
    if (options.input && fits_in_pipe(in.write, options.input->size())) {
        write_all(in.write.get(), *options.input);
        in.write.reset();
    }
    Child child;
    child.started_ns_ = monotonic_ns();
    child.pid_ = fork();
    if (child.pid_ < 0) throw EnvironmentError(fmt::format("fork failed: {}", std::strerror(errno)));
    if (child.pid_ == 0) exec_child(plan);
    child.own_group_ = options.new_process_group;
    if (child.own_group_) setpgid(child.pid_, child.pid_);  // the child does it too; either order is fine
    in.read.reset();
    out.write.reset();
    err.write.reset();
    keep.clear();
    if (in.write) write_all(in.write.get(), *options.input);
    in.write.reset();
    set_nonblocking(out.read);
    set_nonblocking(err.read);
    child.stdout_ = std::move(out.read);
    child.stderr_ = std::move(err.read);
    return child;
}

Child::Child(Child&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      own_group_(other.own_group_),
      reaped_(other.reaped_),
      status_(other.status_),
      started_ns_(other.started_ns_),
      stdout_(std::move(other.stdout_)),
      stderr_(std::move(other.stderr_)) {}

Child::~Child() {
    if (pid_ > 0 && !reaped_) {
        signal_group(SIGKILL);
        waitpid(pid_, nullptr, 0);
    }
}

void Child::signal(int signal_number) const {
    if (pid_ > 0 && !reaped_) kill(pid_, signal_number);
}

void Child::signal_group(int signal_number) const {
    if (pid_ > 0 && !reaped_) kill(own_group_ ? -pid_ : pid_, signal_number);
}

std::optional<ExitStatus> Child::try_wait() {
    if (reaped_) return status_;
    siginfo_t info{};
    if (waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid != pid_)
        return std::nullopt;
    if (own_group_) kill(-pid_, SIGKILL);  // the child is a zombie: its group id cannot be reused yet
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
    status_.exited = WIFEXITED(status);
    status_.code = status_.exited ? WEXITSTATUS(status) : -1;
    status_.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    return status_;
}

ExitStatus Child::wait() {
    siginfo_t info{};
    while (!reaped_ && waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
    }
    return try_wait().value_or(status_);
}

std::optional<std::filesystem::path> find_program(const std::string& name) {
    if (name.find('/') != std::string::npos) {
        if (access(name.c_str(), X_OK) == 0) return name;
        return std::nullopt;
    }
    const char* path = std::getenv("PATH");
    std::string_view rest = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
    while (true) {
        const auto colon = rest.find(':');
        const std::filesystem::path dir(rest.substr(0, colon));
        if (!dir.empty() && access((dir / name).c_str(), X_OK) == 0) return dir / name;
        if (colon == std::string_view::npos) return std::nullopt;
        rest.remove_prefix(colon + 1);
    }
}

bool drain(UniqueFd& fd, const std::function<void(std::string_view)>& sink) {
    char buffer[65536];
    while (fd) {
        const ssize_t n = read(fd.get(), buffer, sizeof(buffer));
        if (n > 0) {
            sink(std::string_view(buffer, static_cast<std::size_t>(n)));
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return true;
        fd.reset();  // end of file, or an error that will not go away
    }
    return false;
}

void wait_readable(std::initializer_list<int> fds, int timeout_ms) {
    std::vector<pollfd> polls;
    for (const int fd : fds) polls.push_back({fd, POLLIN, 0});  // poll ignores negative descriptors
    poll(polls.data(), polls.size(), timeout_ms);
}

void TailBuffer::append(std::string_view data) {
    data_.append(data);
    if (data_.size() > 2 * keep_) data_.erase(0, data_.size() - keep_);
}

namespace {

// `text` without terminal control sequences (ESC [ parameters final-byte: the colours ONNX Runtime's and PyTorch's
// logs put around a line) and stray ESC bytes: a tail is read as plain text, in a one-line reason or the store.
std::string without_terminal_controls(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '\x1b') {
            out += text[i];
        } else if (i + 1 < text.size() && text[i + 1] == '[') {
            std::size_t end = i + 2;
            while (end < text.size() && (text[end] < '\x40' || text[end] > '\x7e')) ++end;
            i = end;  // past the final byte
        }
    }
    return out;
}

}  // namespace

std::string TailBuffer::text() const {
    return without_terminal_controls(data_.size() > keep_ ? std::string_view(data_).substr(data_.size() - keep_)
                                                          : std::string_view(data_));
}

namespace {

// `line` cut to at most `bytes` at a space, or where a longer word must be cut (never inside a UTF-8
// character), "..." marking the cut: a reason quoted from a tool never ends mid-word unmarked.
std::string cut_at_word(const std::string& line, std::size_t bytes) {
    if (line.size() <= bytes) return line;
    std::size_t end = line.rfind(' ', bytes);
    if (end == std::string::npos || end < bytes / 2) end = bytes;
    while (end > 0 && (static_cast<unsigned char>(line[end]) & 0xC0) == 0x80) --end;
    return line.substr(0, end) + "...";
}

}  // namespace

std::string TailBuffer::last_lines(std::size_t max_lines, std::size_t line_bytes, std::string_view separator) const {
    const std::string kept = text();
    std::vector<std::string> lines;
    std::size_t end = kept.size();
    while (end > 0 && lines.size() < max_lines) {
        const auto newline = kept.rfind('\n', end - 1);
        const std::size_t begin = newline == std::string::npos ? 0 : newline + 1;
        const std::string line = kept.substr(begin, end - begin);
        if (line.find_first_not_of(" \t\r") != std::string::npos)
            lines.insert(lines.begin(), cut_at_word(line, line_bytes));
        if (newline == std::string::npos) break;
        end = newline;
    }
    std::string joined;
    for (const auto& line : lines) joined += (joined.empty() ? "" : std::string(separator)) + line;
    return joined;
}

CapturedRun run_captured(const std::vector<std::string>& argv, std::optional<std::string> input, int timeout_ms) {
    SpawnOptions options;
    options.input = std::move(input);
    options.new_process_group = true;
    options.kill_with_parent = true;
    Child child = spawn(argv, options);
    CapturedRun run;
    const auto read_both = [&](int wait_ms) {
        wait_readable({child.stdout_pipe().get(), child.stderr_pipe().get()}, wait_ms);
        drain(child.stdout_pipe(), [&run](std::string_view data) { run.out += data; });
        drain(child.stderr_pipe(), [&run](std::string_view data) { run.err += data; });
    };
    StopPolicy policy;
    policy.timeout_ns = std::int64_t{timeout_ms} * 1'000'000;
    policy.whole_group = true;
    const Supervised supervised = supervise(child, policy, read_both);
    // What the child wrote just before it ended is still in the pipes; its group is gone, so they end.
    const std::int64_t give_up_ns = monotonic_ns() + kFinalReadNs;
    while ((child.stdout_pipe() || child.stderr_pipe()) && monotonic_ns() < give_up_ns) read_both(kFinalReadPollMs);
    run.status = supervised.status;
    run.timed_out = supervised.timed_out;
    return run;
}

}  // namespace inferbench
