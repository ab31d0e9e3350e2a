// NumPy's .npy files (format versions 1 to 3), the form users keep calibration data in: one array per file,
// little-endian, C order. SDK-free.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "backends/backend.hpp"

namespace inferbench {

// The array as a tensor named `name`. Throws UserError naming the file for anything else: not an .npy
// file, a big-endian or Fortran-order array, or an element type inferbench does not feed.
HostTensor read_npy_file(const std::filesystem::path& file, const std::string& name);
// The same from the file's bytes; `file` names them in errors (an .npz archive's entry: "x.npz:images.npy").
HostTensor parse_npy(std::string_view bytes, const std::string& file, const std::string& name);

// Writes the tensor as a version 1 .npy file that numpy.load reads (bfloat16, which NumPy lacks, as its raw
// 16-bit patterns, '<u2'). Throws EnvironmentError when the file cannot be written.
void write_npy_file(const std::filesystem::path& file, const HostTensor& tensor);

}  // namespace inferbench
