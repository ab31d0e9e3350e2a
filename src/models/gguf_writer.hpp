// GGUF, the file format of llama.cpp (ggml's gguf.h documents it): a Llama-architecture decoder's seeded
// weights (models/decoder_weights) written as a GGUF that llama.cpp loads, and the shape read back from any
// Llama-architecture GGUF a user brings. Needs no llama.cpp: the format is written from its description.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "core/generation.hpp"
#include "core/spec.hpp"
#include "models/decoder_weights.hpp"

namespace inferbench::models {

// The tensor types this writer stores, numbered as ggml's ggml_type (the numbers GGUF files carry).
enum class GgufType : std::uint32_t { f32 = 0, f16 = 1, q4_0 = 2, q8_0 = 8, bf16 = 30 };
inline constexpr std::int64_t kGgufQuantBlock = 32;  // values per Q8_0 / Q4_0 block

// Writes the decoder of `shape` with the weights of `seed` to `file` (complete or absent): fp32 -> F32,
// fp16 -> F16, bf16 -> BF16, int8 -> Q8_0, int4 -> Q4_0; norms always F32, and a matrix whose rows are not
// whole quantization blocks F16. Metadata of llama.cpp's "llama" architecture and a SentencePiece-style
// vocabulary of shape.vocab pieces (<unk> <s> </s>, the 256 byte pieces <0x00>..<0xFF>, then distinct text
// pieces), every one but </s> a normal piece, so that each token a random model emits reads as non-empty valid
// UTF-8 on its own (a server streams one event per token). q_proj
// and k_proj rows are reordered from Hugging Face's rotate_half pairing (i, i + head_dim/2) to the adjacent
// pairs (2i, 2i + 1) llama.cpp rotates, so the file computes what the Hugging Face model does. Tensor by
// tensor: memory holds the largest tensor, not the model. Throws UserError for a shape or precision it
// cannot write, EnvironmentError when the file cannot be written.
void write_llama_gguf(const DecoderShape& shape, std::uint64_t seed, Precision precision,
                      const std::filesystem::path& file);

// What the writer puts in a file besides the weights changes with this version (2: every vocabulary piece is
// text but </s>, so a server streams one event per token), and cached files of an older one are not reused.
inline constexpr int kGgufWriterVersion = 2;

// The form a zoo decoder's GGUF at `precision` is cached under (models/decoder_models' decoder_cache_path):
// "f32.v2.gguf", "f16.v2.gguf", "bf16.v2.gguf", "q8_0.v2.gguf", "q4_0.v2.gguf": llama.cpp's names of its file
// types and the writer's version.
// Throws UserError for a precision GGUF has no weights of (fp8).
std::string gguf_file_form(Precision precision);

// GGUF's name of a decoder tensor ("model.layers.3.self_attn.q_proj.weight" -> "blk.3.attn_q.weight").
std::string gguf_tensor_name(const DecoderTensor& tensor);
// The type `tensor` is stored in at `precision`.
GgufType gguf_tensor_type(const DecoderTensor& tensor, Precision precision);
// Bytes of `elements` values (a multiple of kGgufQuantBlock for Q8_0 / Q4_0) stored as `type`.
std::int64_t gguf_type_bytes(GgufType type, std::int64_t elements);
// The values stored as `type`: Q8_0 blocks are a float16 scale max|x|/127 and 32 int8; Q4_0 blocks a float16
// scale d = m/-8 (m the value of largest magnitude) and 32 4-bit q = round(x/d) + 8 clamped to [0, 15],
// value j in the low nibble of byte j and value j + 16 in its high nibble.
std::vector<std::uint8_t> gguf_encode(std::span<const float> values, GgufType type);
// The values back from their encoding (tests: what llama.cpp reads).
std::vector<float> gguf_decode(std::span<const std::uint8_t> bytes, GgufType type, std::int64_t elements);

// Reorders the rows of a [heads * head_dim, cols] projection so that within each head row 2i holds Hugging
// Face's row i and row 2i + 1 its row i + head_dim/2.
std::vector<float> interleave_rotary_rows(std::span<const float> weight, std::int64_t heads, std::int64_t head_dim);

// The shape of a Llama-architecture GGUF: its metadata (<arch>.block_count, .embedding_length, ...), its
// vocabulary's size and whether it has an output.weight of its own. Reads the header only. Throws UserError
// naming the file for what is not such a GGUF (a truncated file says where it ends).
DecoderShape read_gguf_decoder_shape(const std::filesystem::path& file);

}  // namespace inferbench::models
