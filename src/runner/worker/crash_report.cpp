#include "runner/worker/crash_report.hpp"

#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace inferbench::runner {
namespace {

constexpr std::array kSignals{SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
constexpr int kMaxFrames = 64;
constexpr std::size_t kAltStackBytes = 64 * 1024;

alignas(16) char g_alt_stack[kAltStackBytes];
std::atomic<bool> g_reporting{false};

// A line built without allocating (a crash may come from inside malloc), written with one write(2).
class Line {
public:
    Line& text(const char* s) {
        while (s && *s && size_ + 1 < buffer_.size()) buffer_[size_++] = *s++;
        return *this;
    }
    Line& number(std::uintmax_t value, unsigned base) {
        char digits[32];
        std::size_t n = 0;
        do {
            digits[n++] = "0123456789abcdef"[value % base];
            value /= base;
        } while (value != 0 && n < sizeof digits);
        if (base == 16) text("0x");
        while (n > 0 && size_ + 1 < buffer_.size()) buffer_[size_++] = digits[--n];
        return *this;
    }
    void write_to(int fd) {
        buffer_[size_++] = '\n';
        std::size_t written = 0;
        while (written < size_) {
            const ssize_t n = ::write(fd, buffer_.data() + written, size_ - written);
            if (n <= 0) return;
            written += static_cast<std::size_t>(n);
        }
    }

private:
    std::array<char, 768> buffer_{};
    std::size_t size_ = 0;
};

const void* instruction_of(const void* context) {
    if (context == nullptr) return nullptr;
    const auto* uc = static_cast<const ucontext_t*>(context);
#if defined(__x86_64__)
    return reinterpret_cast<const void*>(uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
    return reinterpret_cast<const void*>(uc->uc_mcontext.pc);
#else
    (void)uc;
    return nullptr;
#endif
}

// "libfoo.so+0x1234 (symbol+0x10)": the library (its file name) and offset of `address`, and the exported symbol
// it falls in where there is one (mangled: demangling allocates).
void append_location(Line& line, const void* address) {
    Dl_info info{};
    if (address == nullptr || dladdr(address, &info) == 0 || info.dli_fname == nullptr) {
        line.text("an unknown address ").number(reinterpret_cast<std::uintptr_t>(address), 16);
        return;
    }
    const char* slash = strrchr(info.dli_fname, '/');
    line.text(slash ? slash + 1 : info.dli_fname)
        .text("+")
        .number(reinterpret_cast<std::uintptr_t>(address) - reinterpret_cast<std::uintptr_t>(info.dli_fbase), 16);
    if (info.dli_sname != nullptr && info.dli_saddr != nullptr) {
        line.text(" (")
            .text(info.dli_sname)
            .text("+")
            .number(reinterpret_cast<std::uintptr_t>(address) - reinterpret_cast<std::uintptr_t>(info.dli_saddr), 16)
            .text(")");
    }
}

void report(int signal_number, siginfo_t* info, void* context) {
    const char* name = sigabbrev_np(signal_number);
    Line{}.text("inferbench worker: crashed; the native stack:").write_to(STDERR_FILENO);
    void* frames[kMaxFrames];
    const int count = backtrace(frames, kMaxFrames);
    backtrace_symbols_fd(frames, count, STDERR_FILENO);

    Line summary;
    summary.text("inferbench worker: signal ")
        .number(static_cast<unsigned>(signal_number), 10)
        .text(" (")
        .text(name ? name : "?")
        .text(") at ");
    append_location(summary, instruction_of(context));
    // A signal sent (si_code <= 0) names its sender, a memory fault the kernel raised the address it touched;
    // abort() says nothing more than its stack.
    if (info != nullptr && signal_number != SIGABRT) {
        if (info->si_code <= 0)
            summary.text(", sent by process ").number(static_cast<unsigned>(info->si_pid), 10);
        else if (signal_number == SIGSEGV || signal_number == SIGBUS)
            summary.text(", address ").number(reinterpret_cast<std::uintptr_t>(info->si_addr), 16);
    }
    summary.write_to(STDERR_FILENO);
}

void on_crash(int signal_number, siginfo_t* info, void* context) {
    // SA_RESETHAND has put the default action back. The first thread to crash reports; another crashing meanwhile
    // ends the process by the default action.
    if (!g_reporting.exchange(true)) report(signal_number, info, context);
    // Pending until this handler returns (the signal is blocked in it), then ends the process with the default
    // action: a fault would strike again anyway, a signal that was sent would not.
    raise(signal_number);
}

}  // namespace

void install_crash_report() {
    // backtrace() loads the unwinder on its first call, which allocates: done here, not in the handler.
    void* warm[2];
    backtrace(warm, 2);
    stack_t alternate{};
    alternate.ss_sp = g_alt_stack;
    alternate.ss_size = sizeof g_alt_stack;
    sigaltstack(&alternate, nullptr);
    struct sigaction action {};
    action.sa_sigaction = on_crash;
    action.sa_flags = static_cast<int>(SA_SIGINFO | SA_ONSTACK | SA_RESETHAND);  // SA_RESETHAND is 0x80000000
    sigemptyset(&action.sa_mask);
    for (const int signal_number : kSignals) sigaction(signal_number, &action, nullptr);
}

}  // namespace inferbench::runner
