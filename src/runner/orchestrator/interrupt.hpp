// Stop signals. The first SIGINT (Ctrl-C) asks the running benchmark to stop and keeps what was
// measured; SIGTERM and SIGHUP (the session or the system going away) end the running worker's process
// group at once. Either way the cell is stored as interrupted (when the stop cut its measured loop short;
// ok when the loop had ended), the run is closed as interrupted, the plan does not go on, and inferbench
// exits with 128 + the signal's number. A signal that comes once the last benchmark has ended (while it
// is stored) interrupts nothing: the run completes. A SIGHUP that was ignored when inferbench started
// (nohup) stays ignored.
#pragma once

namespace inferbench::runner {

void install_interrupt_handler();
bool interrupt_requested();    // any of the three
bool termination_requested();  // SIGTERM or SIGHUP: no grace for the worker
// The signal's name as a user would say it ("Ctrl-C", "SIGTERM", "SIGHUP"), and the exit code for it.
const char* interrupt_name();
int interrupt_exit_code();
void reset_interrupt();  // for tests

}  // namespace inferbench::runner
