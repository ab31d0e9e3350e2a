#include "backends/npz_file.hpp"

#include <algorithm>
#include <cstdint>
#include <string_view>

#include <fmt/format.h>

#if INFERBENCH_HAVE_ISAL
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#endif

#include "backends/npy_file.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/tensor_size.hpp"

namespace inferbench {
namespace {

// Zip's little-endian fields (PKWARE APPNOTE 4.3), read within the archive's bounds.
class ZipBytes {
public:
    ZipBytes(std::string_view bytes, std::string file) : bytes_(bytes), file_(std::move(file)) {}

    std::uint64_t number(std::size_t at, std::size_t size) const {
        if (at > bytes_.size() || size > bytes_.size() - at) truncated();
        std::uint64_t value = 0;
        for (std::size_t k = 0; k < size; ++k)
            value |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes_[at + k])) << (8 * k);
        return value;
    }
    std::string_view slice(std::uint64_t at, std::uint64_t size) const {
        if (at > bytes_.size() || size > bytes_.size() - at) truncated();
        return bytes_.substr(static_cast<std::size_t>(at), static_cast<std::size_t>(size));
    }
    std::size_t size() const { return bytes_.size(); }
    const std::string& file() const { return file_; }
    [[noreturn]] void truncated() const {
        throw UserError(fmt::format("{}: a truncated or damaged .npz archive; save it again with numpy.savez", file_));
    }

private:
    std::string_view bytes_;
    std::string file_;
};

constexpr std::uint32_t kEndOfDirectory = 0x06054b50;
constexpr std::uint32_t kZip64EndOfDirectory = 0x06064b50;
constexpr std::uint32_t kZip64Locator = 0x07064b50;
constexpr std::uint32_t kDirectoryEntry = 0x02014b50;
constexpr std::uint32_t kLocalHeader = 0x04034b50;
constexpr std::uint16_t kZip64Extra = 0x0001;
constexpr std::uint32_t kSaturated = 0xFFFFFFFF;
constexpr std::uint16_t kStored = 0, kDeflated = 8;

struct Directory {
    std::uint64_t offset = 0;
    std::uint64_t entries = 0;
};

// The end-of-central-directory record, the last one in the file (a comment may follow it), and its zip64
// form where numpy's writer (Python's zipfile) needed one.
Directory find_directory(const ZipBytes& zip) {
    if (zip.size() < 22) zip.truncated();
    for (std::size_t at = zip.size() - 22;; --at) {
        if (zip.number(at, 4) == kEndOfDirectory) {
            Directory d{zip.number(at + 16, 4), zip.number(at + 10, 2)};
            if (at >= 20 && zip.number(at - 20, 4) == kZip64Locator) {
                const std::uint64_t record = zip.number(at - 20 + 8, 8);
                if (zip.number(static_cast<std::size_t>(record), 4) != kZip64EndOfDirectory) zip.truncated();
                d = {zip.number(static_cast<std::size_t>(record) + 48, 8), zip.number(static_cast<std::size_t>(record) + 32, 8)};
            }
            return d;
        }
        if (at == 0 || zip.size() - at > 22 + 65535) break;
    }
    throw UserError(fmt::format("{}: not an .npz archive (save the arrays with numpy.savez)", zip.file()));
}

struct Entry {
    std::string name;
    std::uint16_t method = 0;
    std::uint32_t crc = 0;
    std::uint64_t compressed = 0;
    std::uint64_t uncompressed = 0;
    std::uint64_t local_header = 0;
};

// A central-directory entry at `at`; returns where the next one starts.
std::size_t read_entry(const ZipBytes& zip, std::size_t at, Entry& entry) {
    if (zip.number(at, 4) != kDirectoryEntry) zip.truncated();
    entry.method = static_cast<std::uint16_t>(zip.number(at + 10, 2));
    entry.crc = static_cast<std::uint32_t>(zip.number(at + 16, 4));
    entry.compressed = zip.number(at + 20, 4);
    entry.uncompressed = zip.number(at + 24, 4);
    const std::size_t name_length = zip.number(at + 28, 2);
    const std::size_t extra_length = zip.number(at + 30, 2);
    const std::size_t comment_length = zip.number(at + 32, 2);
    entry.local_header = zip.number(at + 42, 4);
    entry.name = std::string(zip.slice(at + 46, name_length));
    // The zip64 extra field holds, in this order, each of the three that is saturated above.
    std::size_t extra = at + 46 + name_length;
    const std::size_t extra_end = extra + extra_length;
    while (extra + 4 <= extra_end) {
        const auto id = zip.number(extra, 2);
        const std::size_t size = zip.number(extra + 2, 2);
        if (id == kZip64Extra) {
            std::size_t field = extra + 4;
            for (std::uint64_t* value : {&entry.uncompressed, &entry.compressed, &entry.local_header}) {
                if (*value != kSaturated) continue;
                *value = zip.number(field, 8);
                field += 8;
            }
        }
        extra += 4 + size;
    }
    return extra_end + comment_length;
}

// An entry's stored bytes, after its local header (whose extra field may differ from the directory's).
std::string_view entry_bytes(const ZipBytes& zip, const Entry& entry) {
    const auto at = static_cast<std::size_t>(entry.local_header);
    if (zip.number(at, 4) != kLocalHeader) zip.truncated();
    const std::size_t data = at + 30 + zip.number(at + 26, 2) + zip.number(at + 28, 2);
    return zip.slice(data, entry.compressed);
}

[[noreturn]] void damaged(const std::string& source, std::string_view what) {
    throw UserError(fmt::format("{}: a damaged member ({}); save the arrays again with numpy.savez or "
                                "numpy.savez_compressed",
                                source, what));
}

// A deflated member's bytes (numpy.savez_compressed), checked against the sizes and the CRC-32 its
// directory entry declares. The declared size is bounded before anything is allocated for it.
std::string inflated(std::string_view deflated, const Entry& entry, const std::string& source) {
    if (entry.uncompressed > kMaxTensorBytes)
        damaged(source, fmt::format("declares {} bytes, more than an input may hold", entry.uncompressed));
    // Deflate shrinks at most 1032:1 (a 258-byte match in about 2 bits), so a larger declared size is a damaged
    // header, refused before it is allocated.
    constexpr std::int64_t kMaxDeflateRatio = 1032, kSlack = 1024;
    const auto most = checked_mul(static_cast<std::int64_t>(deflated.size()), kMaxDeflateRatio);
    if (!most || entry.uncompressed > static_cast<std::uint64_t>(*most) + kSlack)
        damaged(source, fmt::format("declares {} bytes, more than its {} deflated bytes can hold", entry.uncompressed,
                                    deflated.size()));
#if INFERBENCH_HAVE_ISAL
    std::string out(static_cast<std::size_t>(entry.uncompressed), '\0');
    inflate_state state;
    isal_inflate_init(&state);
    state.crc_flag = ISAL_DEFLATE;
    // ISA-L's lengths are 32-bit: a member over 4 GiB is fed and drained in parts.
    auto* next_in = reinterpret_cast<const std::uint8_t*>(deflated.data());
    auto* next_out = reinterpret_cast<std::uint8_t*>(out.data());
    std::uint64_t left_in = deflated.size(), left_out = out.size();
    constexpr std::uint64_t kPart = std::uint64_t{1} << 30;
    while (state.block_state != ISAL_BLOCK_FINISH) {
        const auto in_part = static_cast<std::uint32_t>(std::min(left_in, kPart));
        const auto out_part = static_cast<std::uint32_t>(std::min(left_out, kPart));
        state.next_in = const_cast<std::uint8_t*>(next_in);
        state.avail_in = in_part;
        state.next_out = next_out;
        state.avail_out = out_part;
        const int status = isal_inflate(&state);
        if (status < 0) damaged(source, "not a valid deflate stream");
        const std::uint32_t used_in = in_part - state.avail_in, used_out = out_part - state.avail_out;
        next_in += used_in;
        next_out += used_out;
        left_in -= used_in;
        left_out -= used_out;
        if (state.block_state == ISAL_BLOCK_FINISH) break;
        if (used_in == 0 && used_out == 0) {
            if (left_out == 0) damaged(source, fmt::format("inflates to more than the {} bytes its header declares", out.size()));
            damaged(source, "its deflate stream ends early: the archive was cut short or damaged");
        }
    }
    if (left_out != 0)
        damaged(source, fmt::format("inflates to {} bytes, not the {} its header declares", out.size() - left_out, out.size()));
    if (left_in != 0) damaged(source, "bytes follow the end of its deflate stream");
    const std::uint32_t crc = crc32_gzip_refl(0, reinterpret_cast<const std::uint8_t*>(out.data()), out.size());
    if (crc != entry.crc)
        damaged(source, fmt::format("CRC-32 {:08x}, not the {:08x} its header declares", crc, entry.crc));
    return out;
#else
    (void)deflated;
    throw UserError(fmt::format("{}: compressed (numpy.savez_compressed), and this build of inferbench has no "
                                "ISA-L to inflate it; save the arrays with numpy.savez",
                                source));
#endif
}

}  // namespace

std::vector<HostTensor> read_npz_file(const std::filesystem::path& path) {
    return parse_npz(read_regular_file(path), path.string());
}

std::vector<HostTensor> parse_npz(std::string_view bytes, const std::string& file) {
    const ZipBytes zip(bytes, file);
    const Directory directory = find_directory(zip);
    std::vector<HostTensor> arrays;
    auto at = static_cast<std::size_t>(directory.offset);
    for (std::uint64_t k = 0; k < directory.entries; ++k) {
        Entry entry;
        at = read_entry(zip, at, entry);
        const std::string source = fmt::format("{}:{}", file, entry.name);
        if (!entry.name.ends_with(".npy"))
            throw UserError(fmt::format("{}: not an .npy array; an .npz archive holds arrays saved by numpy.savez", source));
        const std::string name = entry.name.substr(0, entry.name.size() - 4);
        if (entry.method == kStored)
            arrays.push_back(parse_npy(entry_bytes(zip, entry), source, name));
        else if (entry.method == kDeflated)
            arrays.push_back(parse_npy(inflated(entry_bytes(zip, entry), entry, source), source, name));
        else
            throw UserError(fmt::format("{}: compressed with zip method {}, which numpy does not write; save the "
                                        "arrays with numpy.savez or numpy.savez_compressed",
                                        source, entry.method));
    }
    return arrays;
}

}  // namespace inferbench
