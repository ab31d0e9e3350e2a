// Reads a GGUF's header (metadata and tensor records) into a decoder's shape, without its tensor data.
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <variant>

#include <fmt/format.h>

#include "core/error.hpp"
#include "models/gguf_writer.hpp"

namespace inferbench::models {
namespace {

constexpr std::uint64_t kMaxStringBytes = 1 << 24;  // a longer key or value is a corrupt length

class HeaderReader {
public:
    explicit HeaderReader(const std::filesystem::path& file) : file_(file), in_(file, std::ios::binary) {
        std::error_code error;
        size_ = std::filesystem::file_size(file, error);
        if (!in_ || error) throw UserError(fmt::format("{}: cannot open the GGUF file", file.string()));
    }

    template <typename T>
    T scalar(std::string_view what) {
        T v{};
        read(&v, sizeof(T), what);
        return v;
    }
    std::string string(std::string_view what) {
        const auto size = scalar<std::uint64_t>(what);
        if (size > kMaxStringBytes) fail(fmt::format("{} claims a string of {} bytes", what, size));
        std::string s(size, '\0');
        read(s.data(), size, what);
        return s;
    }
    void skip(std::uint64_t bytes, std::string_view what) {
        advance(bytes, what);
        in_.seekg(static_cast<std::streamoff>(position_));
    }
    [[noreturn]] void fail(std::string_view why) const {
        throw UserError(fmt::format("{}: not a readable GGUF file: {}; write it again or use another file",
                                    file_.string(), why));
    }

private:
    void read(void* out, std::uint64_t bytes, std::string_view what) {
        advance(bytes, what);
        in_.read(static_cast<char*>(out), static_cast<std::streamsize>(bytes));
        if (!in_) fail(fmt::format("reading {} failed", what));
    }
    void advance(std::uint64_t bytes, std::string_view what) {
        if (bytes > size_ - position_)
            fail(fmt::format("it ends at byte {} (truncated?) while reading {}", size_, what));
        position_ += bytes;
    }

    std::uint64_t size_ = 0;
    std::uint64_t position_ = 0;
    std::filesystem::path file_;
    std::ifstream in_;
};

using Value = std::variant<std::monostate, std::int64_t, double, std::string>;

std::size_t scalar_size(std::uint32_t type) {  // GGUF value types other than string and array
    static constexpr std::size_t kSizes[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    return type < std::size(kSizes) ? kSizes[type] : 0;
}

// A float32 as the decimal it was written from (1e-05, not 9.99999974738e-06): its shortest round-trip form.
double decimal(float value) { return std::stod(fmt::format("{}", value)); }

Value read_scalar(HeaderReader& r, std::uint32_t type, const std::string& key) {
    switch (type) {
        case 0: return std::int64_t{r.scalar<std::uint8_t>(key)};
        case 1: return std::int64_t{r.scalar<std::int8_t>(key)};
        case 2: return std::int64_t{r.scalar<std::uint16_t>(key)};
        case 3: return std::int64_t{r.scalar<std::int16_t>(key)};
        case 4: return std::int64_t{r.scalar<std::uint32_t>(key)};
        case 5: return std::int64_t{r.scalar<std::int32_t>(key)};
        case 6: return decimal(r.scalar<float>(key));
        case 7: return std::int64_t{r.scalar<std::uint8_t>(key)};
        case 8: return r.string(key);
        case 10: return static_cast<std::int64_t>(r.scalar<std::uint64_t>(key));
        case 11: return r.scalar<std::int64_t>(key);
        case 12: return r.scalar<double>(key);
        default: r.fail(fmt::format("metadata {} has unknown value type {}", key, type));
    }
}

// An array's element count is kept as its value (the vocabulary's size); its elements are skipped.
Value read_array(HeaderReader& r, const std::string& key) {
    const auto element = r.scalar<std::uint32_t>(key);
    const auto count = r.scalar<std::uint64_t>(key);
    if (element == 8) {
        for (std::uint64_t i = 0; i < count; ++i) r.string(key);
    } else if (const std::size_t size = scalar_size(element); size > 0) {
        r.skip(count * size, key);
    } else {
        r.fail(fmt::format("metadata {} is an array of unsupported type {}", key, element));
    }
    return static_cast<std::int64_t>(count);
}

std::int64_t whole(const std::map<std::string, Value>& kv, const std::string& key, HeaderReader& r) {
    const auto it = kv.find(key);
    if (it == kv.end() || !std::holds_alternative<std::int64_t>(it->second))
        r.fail(fmt::format("it has no whole-number metadata {}", key));
    return std::get<std::int64_t>(it->second);
}

std::optional<double> real(const std::map<std::string, Value>& kv, const std::string& key) {
    const auto it = kv.find(key);
    if (it == kv.end() || !std::holds_alternative<double>(it->second)) return std::nullopt;
    return std::get<double>(it->second);
}

}  // namespace

DecoderShape read_gguf_decoder_shape(const std::filesystem::path& file) {
    HeaderReader r(file);
    if (r.scalar<std::uint32_t>("the magic number") != 0x46554747U) r.fail("it does not start with GGUF");
    const auto version = r.scalar<std::uint32_t>("the version");
    if (version < 2 || version > 3) r.fail(fmt::format("GGUF version {} (this reader knows 2 and 3)", version));
    const auto tensors = r.scalar<std::int64_t>("the tensor count");
    const auto keys = r.scalar<std::int64_t>("the metadata count");
    std::map<std::string, Value> kv;
    for (std::int64_t i = 0; i < keys; ++i) {
        std::string key = r.string("a metadata key");
        const auto type = r.scalar<std::uint32_t>(key);
        kv[key] = type == 9 ? read_array(r, key) : read_scalar(r, type, key);
    }
    bool has_output = false;
    for (std::int64_t i = 0; i < tensors; ++i) {
        const std::string name = r.string("a tensor record");
        has_output = has_output || name == "output.weight";
        const auto dims = r.scalar<std::uint32_t>(name);
        r.skip(8ULL * dims + 4 + 8, name);
    }
    const auto arch_it = kv.find("general.architecture");
    if (arch_it == kv.end() || !std::holds_alternative<std::string>(arch_it->second))
        r.fail("it has no general.architecture");
    const std::string a = std::get<std::string>(arch_it->second) + ".";
    DecoderShape s;
    s.layers = whole(kv, a + "block_count", r);
    s.hidden = whole(kv, a + "embedding_length", r);
    s.heads = whole(kv, a + "attention.head_count", r);
    s.kv_heads = kv.contains(a + "attention.head_count_kv") ? whole(kv, a + "attention.head_count_kv", r) : s.heads;
    s.head_dim = kv.contains(a + "attention.key_length") ? whole(kv, a + "attention.key_length", r)
                                                          : (s.heads > 0 ? s.hidden / s.heads : 0);
    s.intermediate = whole(kv, a + "feed_forward_length", r);
    s.vocab = kv.contains(a + "vocab_size") ? whole(kv, a + "vocab_size", r) : whole(kv, "tokenizer.ggml.tokens", r);
    s.max_context = whole(kv, a + "context_length", r);
    s.tied_embeddings = !has_output;
    s.rope_theta = real(kv, a + "rope.freq_base").value_or(10000.0);
    s.rms_eps = real(kv, a + "attention.layer_norm_rms_epsilon").value_or(1e-5);
    if (const auto problem = shape_problem(s)) r.fail(fmt::format("its decoder has {}", *problem));
    return s;
}

}  // namespace inferbench::models
