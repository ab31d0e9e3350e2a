// Writes a seeded Llama-architecture decoder as GGUF (version 3): the header (metadata, then one record per
// tensor with its offset in the data section), then each tensor's bytes at its aligned offset, one tensor in
// memory at a time.
#include "models/gguf_writer.hpp"

#include <cstring>
#include <fstream>
#include <string_view>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/file_io.hpp"

namespace inferbench::models {
namespace {

constexpr std::uint32_t kGgufVersion = 3;
constexpr std::uint64_t kAlignment = 32;
// GGUF's metadata value types (gguf.h).
enum class ValueType : std::uint32_t { u32 = 4, i32 = 5, f32 = 6, boolean = 7, string = 8, array = 9 };
// llama.cpp's token types (llama_token_type).
constexpr std::int32_t kTokenNormal = 1, kTokenControl = 3;
constexpr std::int64_t kSpecialTokens = 3;  // <unk> <s> </s>
constexpr std::int64_t kByteTokens = 256;

// Little-endian bytes of the header, as GGUF lays them out.
class HeaderBytes {
public:
    template <typename T>
    void scalar(T v) {
        char b[sizeof(T)];
        std::memcpy(b, &v, sizeof(T));
        bytes_.append(b, sizeof(T));
    }
    void string(std::string_view s) {
        scalar<std::uint64_t>(s.size());
        bytes_.append(s);
    }
    void key(std::string_view name, ValueType type) {
        string(name);
        scalar(static_cast<std::uint32_t>(type));
        ++keys_;
    }
    void u32(std::string_view name, std::int64_t v) { key(name, ValueType::u32), scalar(static_cast<std::uint32_t>(v)); }
    void f32(std::string_view name, double v) { key(name, ValueType::f32), scalar(static_cast<float>(v)); }
    void text(std::string_view name, std::string_view v) { key(name, ValueType::string), string(v); }
    void boolean(std::string_view name, bool v) { key(name, ValueType::boolean), scalar<std::uint8_t>(v ? 1 : 0); }
    void array(std::string_view name, ValueType element, std::size_t count) {
        key(name, ValueType::array);
        scalar(static_cast<std::uint32_t>(element));
        scalar<std::uint64_t>(count);
    }
    const std::string& bytes() const { return bytes_; }
    std::int64_t keys() const { return keys_; }

private:
    std::string bytes_;
    std::int64_t keys_ = 0;
};

std::uint64_t aligned(std::uint64_t offset) { return (offset + kAlignment - 1) / kAlignment * kAlignment; }

std::uint32_t file_type(Precision precision) {  // llama_ftype
    switch (precision) {
        case Precision::fp32: return 0;
        case Precision::fp16: return 1;
        case Precision::int4: return 2;
        case Precision::int8: return 7;
        case Precision::bf16: return 32;
        case Precision::fp8: break;
    }
    throw UserError(fmt::format("GGUF has no {} weights; use fp32, fp16, bf16, int8 (Q8_0) or int4 (Q4_0)",
                                to_string(precision)));
}

std::string vocab_piece(std::int64_t id, std::int64_t vocab) {
    if (id == 0) return "<unk>";
    if (id == 1) return "<s>";
    if (id == 2) return "</s>";
    const bool bytes = vocab >= kSpecialTokens + kByteTokens;
    if (bytes && id < kSpecialTokens + kByteTokens) return fmt::format("<0x{:02X}>", id - kSpecialTokens);
    return fmt::format("\u2581t{}", id);  // SentencePiece's word-start mark, then a distinct ASCII name
}

// Every token a random model may emit reads as text of its own: the byte pieces are normal pieces, not byte
// tokens (text a prompt holds still falls back to them by their names, "<0xC3>"; a lone byte above 0x7F is no
// UTF-8, and llama-server fails the whole response with HTTP 500), and so are <unk> and <s> (an unknown or
// control token reads as nothing: a streamed chat answer would send no event for it). Only </s> is a control
// token: it ends the text (and ignore_eos keeps it from being sampled).
std::int32_t vocab_type(std::int64_t id) { return id == 2 ? kTokenControl : kTokenNormal; }

void write_vocabulary(HeaderBytes& h, std::int64_t vocab) {
    const auto n = static_cast<std::size_t>(vocab);
    h.text("tokenizer.ggml.model", "llama");
    h.array("tokenizer.ggml.tokens", ValueType::string, n);
    for (std::int64_t id = 0; id < vocab; ++id) h.string(vocab_piece(id, vocab));
    h.array("tokenizer.ggml.scores", ValueType::f32, n);
    for (std::int64_t id = 0; id < vocab; ++id) h.scalar(id < kSpecialTokens ? 0.0F : -static_cast<float>(id));
    h.array("tokenizer.ggml.token_type", ValueType::i32, n);
    for (std::int64_t id = 0; id < vocab; ++id) h.scalar(vocab_type(id));
    h.u32("tokenizer.ggml.unknown_token_id", 0);
    h.u32("tokenizer.ggml.bos_token_id", 1);
    h.u32("tokenizer.ggml.eos_token_id", 2);
    h.boolean("tokenizer.ggml.add_bos_token", false);
    h.boolean("tokenizer.ggml.add_eos_token", false);
}

void write_metadata(HeaderBytes& h, const DecoderShape& s, Precision precision) {
    h.text("general.architecture", "llama");
    h.text("general.name", "inferbench seeded llama");
    h.u32("general.alignment", kAlignment);
    h.u32("general.file_type", file_type(precision));
    h.u32("llama.vocab_size", s.vocab);
    h.u32("llama.context_length", s.max_context);
    h.u32("llama.embedding_length", s.hidden);
    h.u32("llama.block_count", s.layers);
    h.u32("llama.feed_forward_length", s.intermediate);
    h.u32("llama.attention.head_count", s.heads);
    h.u32("llama.attention.head_count_kv", s.kv_heads);
    h.u32("llama.attention.key_length", s.head_dim);
    h.u32("llama.attention.value_length", s.head_dim);
    h.u32("llama.rope.dimension_count", s.head_dim);
    h.f32("llama.rope.freq_base", s.rope_theta);
    h.f32("llama.attention.layer_norm_rms_epsilon", s.rms_eps);
    write_vocabulary(h, s.vocab);
}

struct PlannedTensor {
    DecoderTensor tensor;
    GgufType type = GgufType::f32;
    std::uint64_t offset = 0;  // in the data section
    std::uint64_t bytes = 0;
};

// The tensor records (name, dimensions innermost first, type, offset); returns the planned tensors.
std::vector<PlannedTensor> write_tensor_records(HeaderBytes& h, const DecoderShape& shape, Precision precision) {
    std::vector<PlannedTensor> planned;
    std::uint64_t offset = 0;
    for (DecoderTensor& t : decoder_tensors(shape)) {
        PlannedTensor p{std::move(t), GgufType::f32, 0, 0};
        p.type = gguf_tensor_type(p.tensor, precision);
        p.offset = offset;
        p.bytes = static_cast<std::uint64_t>(gguf_type_bytes(p.type, p.tensor.element_count()));
        offset = aligned(offset + p.bytes);
        h.string(gguf_tensor_name(p.tensor));
        h.scalar(static_cast<std::uint32_t>(p.tensor.shape.size()));
        for (auto d = p.tensor.shape.rbegin(); d != p.tensor.shape.rend(); ++d) h.scalar(static_cast<std::uint64_t>(*d));
        h.scalar(static_cast<std::uint32_t>(p.type));
        h.scalar(p.offset);
        planned.push_back(std::move(p));
    }
    return planned;
}

std::vector<std::uint8_t> tensor_bytes(const PlannedTensor& p, const DecoderShape& s, std::uint64_t seed) {
    std::vector<float> values(static_cast<std::size_t>(p.tensor.element_count()));
    fill_decoder_tensor(p.tensor, seed, values);
    const std::string& name = p.tensor.name;
    if (name.ends_with("self_attn.q_proj.weight")) values = interleave_rotary_rows(values, s.heads, s.head_dim);
    if (name.ends_with("self_attn.k_proj.weight")) values = interleave_rotary_rows(values, s.kv_heads, s.head_dim);
    return gguf_encode(values, p.type);
}

void write_padding(std::ofstream& out, std::uint64_t& position, std::uint64_t to) {
    static constexpr char zeros[kAlignment] = {};
    out.write(zeros, static_cast<std::streamsize>(to - position));
    position = to;
}

}  // namespace

std::string gguf_tensor_name(const DecoderTensor& tensor) {
    static constexpr std::pair<std::string_view, std::string_view> kLayerNames[] = {
        {"input_layernorm.weight", "attn_norm.weight"},   {"self_attn.q_proj.weight", "attn_q.weight"},
        {"self_attn.k_proj.weight", "attn_k.weight"},      {"self_attn.v_proj.weight", "attn_v.weight"},
        {"self_attn.o_proj.weight", "attn_output.weight"}, {"post_attention_layernorm.weight", "ffn_norm.weight"},
        {"mlp.gate_proj.weight", "ffn_gate.weight"},       {"mlp.up_proj.weight", "ffn_up.weight"},
        {"mlp.down_proj.weight", "ffn_down.weight"}};
    if (tensor.name == "model.embed_tokens.weight") return "token_embd.weight";
    if (tensor.name == "model.norm.weight") return "output_norm.weight";
    if (tensor.name == "lm_head.weight") return "output.weight";
    for (const auto& [hf, gguf] : kLayerNames)
        if (tensor.layer >= 0 && tensor.name.ends_with(hf)) return fmt::format("blk.{}.{}", tensor.layer, gguf);
    throw std::invalid_argument(fmt::format("no GGUF name for decoder tensor {}", tensor.name));
}

std::string gguf_file_form(Precision precision) {
    const auto form = [](std::string_view type) { return fmt::format("{}.v{}.gguf", type, kGgufWriterVersion); };
    switch (precision) {
        case Precision::fp32: return form("f32");
        case Precision::fp16: return form("f16");
        case Precision::bf16: return form("bf16");
        case Precision::int8: return form("q8_0");
        case Precision::int4: return form("q4_0");
        case Precision::fp8: break;
    }
    file_type(precision);  // throws the error line
    return {};
}

GgufType gguf_tensor_type(const DecoderTensor& tensor, Precision precision) {
    if (tensor.kind == DecoderTensor::Kind::norm) return GgufType::f32;
    const bool whole_blocks = tensor.shape.back() % kGgufQuantBlock == 0;
    switch (precision) {
        case Precision::fp32: return GgufType::f32;
        case Precision::fp16: return GgufType::f16;
        case Precision::bf16: return GgufType::bf16;
        case Precision::int8: return whole_blocks ? GgufType::q8_0 : GgufType::f16;
        case Precision::int4: return whole_blocks ? GgufType::q4_0 : GgufType::f16;
        case Precision::fp8: break;
    }
    file_type(precision);  // throws the error line
    return GgufType::f32;
}

void write_llama_gguf(const DecoderShape& shape, std::uint64_t seed, Precision precision,
                      const std::filesystem::path& file) {
    if (const auto problem = shape_problem(shape))
        throw UserError(fmt::format("cannot write {}: {}", file.string(), *problem));
    if (shape.vocab < kSpecialTokens || shape.head_dim % 2 != 0)
        throw UserError(fmt::format("cannot write {}: a GGUF decoder needs a vocabulary of at least {} and an even "
                                    "head_dim (got {} and {})", file.string(), kSpecialTokens, shape.vocab, shape.head_dim));
    HeaderBytes metadata;
    write_metadata(metadata, shape, precision);
    HeaderBytes records;
    const std::vector<PlannedTensor> planned = write_tensor_records(records, shape, precision);

    HeaderBytes head;
    head.scalar(std::uint32_t{0x46554747});  // "GGUF" read as a little-endian uint32
    head.scalar(kGgufVersion);
    head.scalar(static_cast<std::int64_t>(planned.size()));
    head.scalar(metadata.keys());

    OutputFile output(file);
    std::ofstream out(output.staging_path(), std::ios::binary | std::ios::trunc);
    if (!out) output.fail(errno_text(errno));
    std::uint64_t position = 0;
    for (const HeaderBytes* part : {&head, &metadata, &records}) {
        out.write(part->bytes().data(), static_cast<std::streamsize>(part->bytes().size()));
        position += part->bytes().size();
    }
    write_padding(out, position, aligned(position));
    const std::uint64_t data_start = position;
    for (const PlannedTensor& p : planned) {
        write_padding(out, position, data_start + p.offset);
        const std::vector<std::uint8_t> bytes = tensor_bytes(p, shape, seed);
        out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
        position += bytes.size();
        if (!out) output.fail(errno_text(errno));
    }
    out.close();
    if (!out) output.fail(errno_text(errno));
    output.commit();
}

}  // namespace inferbench::models
