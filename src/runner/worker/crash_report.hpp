#pragma once

namespace inferbench::runner {

// A worker that crashes in native code (a framework's library, a driver: SIGSEGV, SIGBUS, SIGILL, SIGFPE,
// SIGABRT) says where before it dies, on stderr, whose tail the orchestrator stores with the failed benchmark:
// the native stack, then one line naming the signal and the library, offset and symbol of the instruction it
// struck at, e.g.
//   inferbench worker: signal 11 (SEGV) at libonnxruntime_providers_cuda.so+0x1a2b3c (symbol+0x40), address 0x0
// That line is the last the worker writes, so the benchmark's reason ends with it. The process still ends by
// the same signal, so its ending reads as before ("killed by signal 11 (SEGV)"). Installed once, at the
// worker's start; the main thread's handler runs on an alternate stack, so that a stack overflow is reported too.
void install_crash_report();

}  // namespace inferbench::runner
