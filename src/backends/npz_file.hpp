// NumPy's .npz archives (numpy.savez, numpy.savez_compressed): a zip file of .npy arrays, one per name. SDK-free.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.hpp"

namespace inferbench {

// Every array in the archive, named as numpy.savez named it (the entry's name without ".npy"), in the
// archive's order: stored entries (numpy.savez) and deflated ones (numpy.savez_compressed, inflated by ISA-L
// and checked against the sizes and CRC-32 the archive declares). Throws UserError naming the file for
// anything else: not a zip archive, a truncated one, an entry that is not an .npy array, a damaged deflated
// entry (naming the entry and the fault), or another compression.
std::vector<HostTensor> read_npz_file(const std::filesystem::path& file);
// The same from the archive's bytes; `file` names them in errors.
std::vector<HostTensor> parse_npz(std::string_view bytes, const std::string& file);

}  // namespace inferbench
