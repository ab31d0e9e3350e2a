#include "runner/orchestrator/interrupt.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <csignal>

namespace inferbench::runner {
namespace {

volatile std::sig_atomic_t g_signal = 0;  // the first stop signal received
bool g_stdout_is_tty = false;
bool g_stderr_is_tty = false;

// After a hang-up the terminal is gone and writing to it fails; the summary lines are dropped instead,
// so that closing the run and the exit code do not depend on them. open and dup2 are async-signal-safe.
void silence_hung_up_terminal() {
    if (!g_stdout_is_tty && !g_stderr_is_tty) return;
    const int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null_fd < 0) return;
    if (g_stdout_is_tty) dup2(null_fd, STDOUT_FILENO);
    if (g_stderr_is_tty) dup2(null_fd, STDERR_FILENO);
    close(null_fd);
}

extern "C" void on_interrupt(int signal_number) {
    if (signal_number == SIGHUP) silence_hung_up_terminal();
    if (g_signal == 0 || signal_number != SIGINT) g_signal = signal_number;  // SIGTERM after Ctrl-C: no more grace
}

}  // namespace

void install_interrupt_handler() {
    g_stdout_is_tty = isatty(STDOUT_FILENO) != 0;
    g_stderr_is_tty = isatty(STDERR_FILENO) != 0;
    struct sigaction action {};
    action.sa_handler = on_interrupt;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
    struct sigaction previous {};
    sigaction(SIGHUP, nullptr, &previous);
    if (previous.sa_handler != SIG_IGN) sigaction(SIGHUP, &action, nullptr);
}

bool interrupt_requested() { return g_signal != 0; }

bool termination_requested() { return g_signal == SIGTERM || g_signal == SIGHUP; }

const char* interrupt_name() {
    switch (g_signal) {
        case SIGTERM: return "SIGTERM";
        case SIGHUP: return "SIGHUP";
        default: return "Ctrl-C";
    }
}

int interrupt_exit_code() { return 128 + (g_signal != 0 ? static_cast<int>(g_signal) : SIGINT); }

void reset_interrupt() { g_signal = 0; }

}  // namespace inferbench::runner
