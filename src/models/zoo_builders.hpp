// The zoo's graph builders, one per architecture (one .cpp each). Internal to the models module;
// public only so that tests can inspect a graph without writing it.
#pragma once

#include <cstdint>
#include <string_view>

#include "models/onnx_builder.hpp"

namespace inferbench::models {

// The symbolic batch dimension every zoo model's inputs and outputs carry.
inline constexpr std::string_view kBatchDimName = "batch";

GraphBuilder build_resnet50(std::uint64_t seed);
GraphBuilder build_mobilenet(std::uint64_t seed);

// BERT's dimensions (Devlin et al. 2018, arXiv:1810.04805); the defaults are the uncased
// checkpoints' vocabulary and tables, and MLPerf Inference's SQuAD sequence length.
struct BertConfig {
    std::int64_t layers = 0;
    std::int64_t hidden = 0;
    std::int64_t heads = 0;
    std::int64_t intermediate = 0;
    std::int64_t vocab = 30522;
    std::int64_t max_positions = 512;
    std::int64_t type_vocab = 2;
    std::int64_t sequence_length = 384;
};
inline constexpr BertConfig kBertLarge{.layers = 24, .hidden = 1024, .heads = 16, .intermediate = 4096};
inline constexpr BertConfig kBertBase{.layers = 12, .hidden = 768, .heads = 12, .intermediate = 3072};

// BERT with the SQuAD span head (BertForQuestionAnswering), opset 17. Throws std::logic_error
// for a config whose heads do not divide the width or whose sequence outgrows the position table.
GraphBuilder build_bert(const BertConfig& config, std::uint64_t seed);
GraphBuilder build_bert_large(std::uint64_t seed);
GraphBuilder build_bert_base(std::uint64_t seed);
// The parameters build_bert() creates, computed without creating them (bert-large is 1.3 GB).
std::int64_t bert_parameter_count(const BertConfig& config);

// The graph export_onnx() writes for a zoo model: the architecture's graph plus provenance
// (producer version, doc string, metadata). Throws UserError for unknown names and for "null".
GraphBuilder build_zoo_model(std::string_view name, std::uint64_t seed);

}  // namespace inferbench::models
