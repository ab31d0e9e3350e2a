// Ctrl-C handling: the first SIGINT/SIGTERM asks the running benchmark to stop and keeps what was
// measured; the plan does not go on.
#pragma once

namespace inferbench {

void install_interrupt_handler();
bool interrupt_requested();
void reset_interrupt();  // for tests

}  // namespace inferbench
