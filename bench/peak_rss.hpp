// This process's peak resident memory so far, for the benches that print it.
#pragma once

#include <sys/resource.h>

namespace inferbench::bench {

inline double peak_rss_mib() {
    rusage self{};
    getrusage(RUSAGE_SELF, &self);
    return static_cast<double>(self.ru_maxrss) / 1024.0;  // Linux: KiB
}

}  // namespace inferbench::bench
