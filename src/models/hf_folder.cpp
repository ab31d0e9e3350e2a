#include "models/hf_folder.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <span>
#include <system_error>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "models/decoder_weights.hpp"
#include "models/onnx_fp16.hpp"

namespace inferbench::models {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

struct Encoding {
    std::string_view safetensors_dtype;  // "F32"
    std::string_view torch_dtype;        // "float32"
    std::size_t bytes = 4;
};

Encoding encoding_of(Precision precision) {
    switch (precision) {
        case Precision::fp32: return {"F32", "float32", 4};
        case Precision::fp16: return {"F16", "float16", 2};
        case Precision::bf16: return {"BF16", "bfloat16", 2};
        default: break;
    }
    throw UserError(fmt::format("a Hugging Face folder holds fp32, fp16 or bf16 weights, not {}; run the "
                                "transformers engines at one of those precisions",
                                to_string(precision)));
}

// A file written through a descriptor: complete (synced) or an EnvironmentError naming it.
class RawFile {
public:
    explicit RawFile(fs::path path) : path_(std::move(path)) {
        fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd_ < 0) fail(errno);
    }
    RawFile(const RawFile&) = delete;
    RawFile& operator=(const RawFile&) = delete;
    ~RawFile() {
        if (fd_ >= 0) ::close(fd_);
    }

    void write(std::span<const std::byte> bytes) {
        while (!bytes.empty()) {
            const ssize_t put = ::write(fd_, bytes.data(), bytes.size());
            if (put < 0 && errno == EINTR) continue;
            if (put <= 0) fail(put < 0 ? errno : ENOSPC);
            bytes = bytes.subspan(static_cast<std::size_t>(put));
        }
    }
    void write(std::string_view text) { write(std::as_bytes(std::span(text.data(), text.size()))); }

    void close() {
        if (::fsync(fd_) != 0 && errno != EINVAL) fail(errno);
        const int fd = std::exchange(fd_, -1);
        if (::close(fd) != 0) fail(errno);
    }

private:
    [[noreturn]] void fail(int error) const {
        throw EnvironmentError(fmt::format("cannot write {}: {}", path_.string(), errno_text(error)));
    }

    fs::path path_;
    int fd_ = -1;
};

// The safetensors header: every tensor's dtype, shape and byte range in the data that follows, in
// decoder_tensors' order, padded with spaces to a multiple of 8 bytes (the format's alignment).
std::string safetensors_header(const std::vector<DecoderTensor>& tensors, const Encoding& encoding) {
    Json header = Json::object();
    header["__metadata__"] = {{"format", "pt"}};
    std::uint64_t offset = 0;
    for (const DecoderTensor& t : tensors) {
        const auto bytes = static_cast<std::uint64_t>(t.element_count()) * encoding.bytes;
        header[t.name] = {{"dtype", encoding.safetensors_dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
        offset += bytes;
    }
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' ');
    return text;
}

std::string little_endian_u64(std::uint64_t value) {
    std::string bytes(8, '\0');
    for (std::size_t i = 0; i < 8; ++i) bytes[i] = static_cast<char>((value >> (8 * i)) & 0xFFU);
    return bytes;
}

// One tensor's values in the file's encoding, little-endian (as the format requires).
std::vector<std::byte> encode_tensor(std::span<const float> values, Precision precision) {
    static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian");
    std::vector<std::byte> out(values.size() * (precision == Precision::fp32 ? 4 : 2));
    if (precision == Precision::fp32) {
        std::memcpy(out.data(), values.data(), out.size());
        return out;
    }
    for (std::size_t i = 0; i < values.size(); ++i) {
        const std::uint16_t bits = precision == Precision::fp16 ? onnx::to_fp16_clamped(values[i]) : to_bf16(values[i]);
        std::memcpy(out.data() + 2 * i, &bits, 2);
    }
    return out;
}

void write_safetensors(const DecoderShape& shape, std::uint64_t seed, Precision precision, const fs::path& file) {
    const Encoding encoding = encoding_of(precision);
    const std::vector<DecoderTensor> tensors = decoder_tensors(shape);
    const std::string header = safetensors_header(tensors, encoding);
    RawFile out(file);
    out.write(little_endian_u64(header.size()));
    out.write(header);
    std::vector<float> values;
    for (const DecoderTensor& t : tensors) {
        values.resize(static_cast<std::size_t>(t.element_count()));
        fill_decoder_tensor(t, seed, values);
        out.write(encode_tensor(values, precision));
    }
    out.close();
}

// A staging folder beside `dir`, removed with its contents unless released.
class StagingFolder {
public:
    explicit StagingFolder(const fs::path& dir) {
        const fs::path parent = dir.parent_path().empty() ? fs::path(".") : dir.parent_path();
        std::string pattern = (parent / (std::string(kStagingPrefix) + "XXXXXX")).string();
        if (!::mkdtemp(pattern.data()))
            throw EnvironmentError(fmt::format("cannot write {}: {}", dir.string(), errno_text(errno)));
        folder_ = pattern;
    }
    StagingFolder(const StagingFolder&) = delete;
    StagingFolder& operator=(const StagingFolder&) = delete;
    ~StagingFolder() {
        std::error_code ignored;
        if (!folder_.empty()) fs::remove_all(folder_, ignored);
    }
    const fs::path& path() const { return folder_; }

private:
    fs::path folder_;
};

std::int64_t required_int(const Json& config, std::string_view key, std::string_view where) {
    const auto it = config.find(key);
    if (it == config.end() || it->is_null())
        throw UserError(fmt::format("{}: key \"{}\" is missing; a Llama-style decoder's config.json names it", where, key));
    if (!it->is_number_integer())
        throw UserError(fmt::format("{}: key \"{}\" is {}, not a whole number", where, key, it->dump()));
    return it->get<std::int64_t>();
}

std::int64_t optional_int(const Json& config, std::string_view key, std::int64_t fallback, std::string_view where) {
    const auto it = config.find(key);
    return it == config.end() || it->is_null() ? fallback : required_int(config, key, where);
}

double optional_number(const Json& config, std::string_view key, double fallback, std::string_view where) {
    const auto it = config.find(key);
    if (it == config.end() || it->is_null()) return fallback;
    if (!it->is_number()) throw UserError(fmt::format("{}: key \"{}\" is {}, not a number", where, key, it->dump()));
    return it->get<double>();
}

}  // namespace

std::uint16_t to_bf16(float value) {
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
    if (std::isnan(value)) return static_cast<std::uint16_t>((bits >> 16U) | 0x40U);
    const std::uint32_t rounding = 0x7FFFU + ((bits >> 16U) & 1U);
    return static_cast<std::uint16_t>((bits + rounding) >> 16U);
}

std::string llama_hf_config_json(const DecoderShape& s, Precision precision) {
    const Json config = {
        {"architectures", {"LlamaForCausalLM"}},
        {"model_type", "llama"},
        {"hidden_size", s.hidden},
        {"intermediate_size", s.intermediate},
        {"num_hidden_layers", s.layers},
        {"num_attention_heads", s.heads},
        {"num_key_value_heads", s.kv_heads},
        {"head_dim", s.head_dim},
        {"vocab_size", s.vocab},
        {"max_position_embeddings", s.max_context},
        {"rope_theta", s.rope_theta},
        {"rope_scaling", nullptr},
        {"rms_norm_eps", s.rms_eps},
        {"tie_word_embeddings", s.tied_embeddings},
        {"hidden_act", "silu"},
        {"attention_bias", false},
        {"mlp_bias", false},
        {"bos_token_id", nullptr},
        {"eos_token_id", nullptr},
        {"pad_token_id", nullptr},
        {"torch_dtype", encoding_of(precision).torch_dtype},
    };
    return config.dump(2) + "\n";
}

void write_llama_hf_folder(const DecoderShape& shape, std::uint64_t seed, Precision precision, const fs::path& dir) {
    if (const auto problem = shape_problem(shape))
        throw UserError(fmt::format("{}: cannot write a decoder with {}", dir.string(), *problem));
    const std::string config = llama_hf_config_json(shape, precision);  // refuses other precisions first
    std::error_code ec;
    if (fs::exists(fs::symlink_status(dir, ec)))
        throw EnvironmentError(fmt::format("cannot write {}: it exists; remove it or write elsewhere", dir.string()));
    const StagingFolder staging(dir);
    const fs::path folder = staging.path() / dir.filename();
    if (!fs::create_directory(folder, ec))
        throw EnvironmentError(fmt::format("cannot write {}: {}", dir.string(), ec.message()));
    RawFile config_file(folder / kHfConfigFile);
    config_file.write(config);
    config_file.close();
    write_safetensors(shape, seed, precision, folder / kHfWeightsFile);
    // rename() of a folder does not replace a non-empty one: a writer that finished first keeps its folder.
    if (::rename(folder.c_str(), dir.c_str()) != 0)
        throw EnvironmentError(fmt::format("cannot write {}: {}", dir.string(), errno_text(errno)));
}

DecoderShape parse_llama_hf_config(std::string_view json, std::string_view where) {
    const Json config = Json::parse(json, nullptr, false);
    if (config.is_discarded() || !config.is_object())
        throw UserError(fmt::format("{}: not a JSON object; a Hugging Face model folder's config.json is one", where));
    const auto type = config.find("model_type");
    if (type == config.end() || !type->is_string() || type->get<std::string>() != "llama")
        throw UserError(fmt::format("{}: key \"model_type\" is {}, not \"llama\": only Llama-style decoders "
                                    "(LlamaForCausalLM) are supported",
                                    where, type == config.end() ? std::string("missing") : type->dump()));
    DecoderShape s;
    s.layers = required_int(config, "num_hidden_layers", where);
    s.hidden = required_int(config, "hidden_size", where);
    s.heads = required_int(config, "num_attention_heads", where);
    s.kv_heads = optional_int(config, "num_key_value_heads", s.heads, where);
    s.head_dim = optional_int(config, "head_dim", s.heads > 0 ? s.hidden / s.heads : 0, where);
    s.intermediate = required_int(config, "intermediate_size", where);
    s.vocab = required_int(config, "vocab_size", where);
    s.max_context = required_int(config, "max_position_embeddings", where);
    const auto tied = config.find("tie_word_embeddings");
    if (tied != config.end() && !tied->is_null() && !tied->is_boolean())
        throw UserError(fmt::format("{}: key \"tie_word_embeddings\" is {}, not true or false", where, tied->dump()));
    s.tied_embeddings = tied != config.end() && tied->is_boolean() && tied->get<bool>();
    s.rope_theta = optional_number(config, "rope_theta", 10000.0, where);  // transformers' LlamaConfig defaults
    s.rms_eps = optional_number(config, "rms_norm_eps", 1e-6, where);
    if (const auto problem = shape_problem(s))
        throw UserError(fmt::format("{}: describes a decoder with {}", where, *problem));
    return s;
}

DecoderShape read_hf_decoder_shape(const fs::path& folder) {
    std::error_code ec;
    const fs::path file = fs::is_directory(folder, ec) ? folder / kHfConfigFile : folder;
    return parse_llama_hf_config(read_regular_file(file), file.string());
}

}  // namespace inferbench::models
