// NumPy's .npz archives (numpy.savez): a zip file of .npy arrays, one per name. SDK-free.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "backends/backend.hpp"

namespace inferbench {

// Every array in the archive, named as numpy.savez named it (the entry's name without ".npy"), in the
// archive's order. Throws UserError naming the file for anything else: not a zip archive, a truncated one,
// an entry that is not an .npy array, or one compressed (numpy.savez_compressed; numpy.savez stores them).
std::vector<HostTensor> read_npz_file(const std::filesystem::path& file);

}  // namespace inferbench
