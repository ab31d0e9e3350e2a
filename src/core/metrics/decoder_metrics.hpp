// Names of what a generative benchmark's worker stores about the decoder it ran (Backend::decoder_info), as
// benchmark_metrics rows: what the bounds (analysis) and the KV-cache figures are computed from.
#pragma once

#include <string_view>

namespace inferbench::decoder_metrics {

inline constexpr std::string_view kParameters = "decoder_parameters";                  // unit "count"
inline constexpr std::string_view kWeightBytes = "decoder_weight_bytes";               // unit "B", as the engine holds them
inline constexpr std::string_view kParametersReadPerStep = "decoder_parameters_read_per_step";  // unit "count"
inline constexpr std::string_view kKvBytesPerToken = "decoder_kv_bytes_per_token";      // unit "B", all layers
inline constexpr std::string_view kLayers = "decoder_layers";                          // unit "count"
inline constexpr std::string_view kHidden = "decoder_hidden";                          // unit "count"
inline constexpr std::string_view kHeads = "decoder_heads";                            // unit "count"
inline constexpr std::string_view kKvHeads = "decoder_kv_heads";                       // unit "count"
inline constexpr std::string_view kHeadDim = "decoder_head_dim";                       // unit "count"
inline constexpr std::string_view kIntermediate = "decoder_intermediate";              // unit "count"
inline constexpr std::string_view kVocab = "decoder_vocab";                            // unit "count"
inline constexpr std::string_view kMaxContext = "decoder_max_context";                 // unit "tokens"
inline constexpr std::string_view kTiedEmbeddings = "decoder_tied_embeddings";         // unit "flag"
inline constexpr std::string_view kPrefix = "decoder_";

}  // namespace inferbench::decoder_metrics
