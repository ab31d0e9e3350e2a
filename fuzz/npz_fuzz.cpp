// libFuzzer entry point for .npz archives (backends/npz_file, with backends/npy_file for each member): stored
// and deflated members, zip64 fields, CRC-32 and size checks. Any input must give arrays or a UserError; any
// other exception, a crash, an allocation past the sizes the archive can hold, or a sanitizer report is a
// finding. Seeds: tests/backends/fixtures/*.npz (numpy.savez_compressed's archives).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "backends/npz_file.hpp"
#include "core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    try {
        const auto arrays = inferbench::parse_npz(bytes, "fuzz.npz");
        for (const auto& array : arrays)
            if (array.data.size() != array.info.byte_size()) __builtin_trap();
    } catch (const inferbench::UserError&) {
    }
    return 0;
}
