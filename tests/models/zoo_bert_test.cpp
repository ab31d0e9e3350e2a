// BERT's graph, checked in memory: bert-base is built once (~440 MB of weights, under a second in
// Release); bert-large (1.34 GB) is checked by its parameter formula only and never built here.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/fnv1a.hpp"
#include "models/weight_generator.hpp"
#include "models/zoo.hpp"
#include "models/zoo_builders.hpp"

namespace inferbench::models {
namespace {

// Small enough to serialize in a test; every dimension differs, so a swapped one shows.
constexpr BertConfig kTiny{.layers = 2,
                           .hidden = 32,
                           .heads = 4,
                           .intermediate = 48,
                           .vocab = 100,
                           .max_positions = 16,
                           .type_vocab = 2,
                           .sequence_length = 8};

const OnnxInitializer& initializer(const GraphBuilder& g, std::string_view name) {
    const auto it = std::ranges::find(g.initializers(), name, &OnnxInitializer::name);
    if (it == g.initializers().end()) throw std::out_of_range(std::string(name));
    return *it;
}

const OnnxNode& node(const GraphBuilder& g, std::string_view name) {
    const auto it = std::ranges::find(g.nodes(), name, &OnnxNode::name);
    if (it == g.nodes().end()) throw std::out_of_range(std::string(name));
    return *it;
}

std::map<std::string, int> op_counts(const GraphBuilder& g) {
    std::map<std::string, int> counts;
    for (const auto& n : g.nodes()) ++counts[n.op_type];
    return counts;
}

class BertBase : public ::testing::Test {
protected:
    static void SetUpTestSuite() { graph_.emplace(build_zoo_model("bert-base", 0)); }
    static void TearDownTestSuite() { graph_.reset(); }
    static const GraphBuilder& graph() { return *graph_; }

private:
    static inline std::optional<GraphBuilder> graph_;
};

// HuggingFace BertForQuestionAnswering: bert-large-uncased 334,094,338, bert-base-uncased
// 108,893,186. Their BertModel (with the pooler, hidden^2 + hidden, no span head) has the
// published 335,141,888 and 109,482,240; Devlin et al. 2018 round to 340M and 110M.
TEST(BertParameters, FormulaMatchesThePublishedCounts) {
    EXPECT_EQ(bert_parameter_count(kBertLarge), 334'094'338);
    EXPECT_EQ(bert_parameter_count(kBertBase), 108'893'186);
    const auto with_pooler_not_head = [](const BertConfig& c) {
        return bert_parameter_count(c) + c.hidden * c.hidden + c.hidden - (2 * c.hidden + 2);
    };
    EXPECT_EQ(with_pooler_not_head(kBertLarge), 335'141'888);
    EXPECT_EQ(with_pooler_not_head(kBertBase), 109'482'240);

    ASSERT_NE(find_zoo_model("bert"), nullptr);
    ASSERT_NE(find_zoo_model("bert-base"), nullptr);
    EXPECT_EQ(find_zoo_model("bert")->parameters, bert_parameter_count(kBertLarge));
    EXPECT_EQ(find_zoo_model("bert-base")->parameters, bert_parameter_count(kBertBase));
}

TEST(BertParameters, BuiltGraphMatchesTheFormula) {
    EXPECT_EQ(build_bert(kTiny, 0).parameter_count(), bert_parameter_count(kTiny));
}

TEST(BertConfigCheck, RejectsImpossibleShapes) {
    BertConfig uneven = kTiny;
    uneven.heads = 5;
    EXPECT_THROW(build_bert(uneven, 0), std::logic_error);
    BertConfig too_long = kTiny;
    too_long.sequence_length = too_long.max_positions + 1;
    EXPECT_THROW(build_bert(too_long, 0), std::logic_error);
}

// Pins the exact bytes: if this fails, the builder's output changed, so bump kGeneratorVersion
// in zoo.cpp (old caches would otherwise be reused) and update the hash.
TEST(BertBytes, ArePinnedAndFollowTheSeed) {
    const std::string bytes = build_bert(kTiny, 0).serialize();
    EXPECT_EQ(fnv1a64(bytes), 0x96E6CFD9021BFF63ULL);
    EXPECT_EQ(build_bert(kTiny, 0).serialize(), bytes);
    const std::string other = build_bert(kTiny, 1).serialize();
    EXPECT_EQ(other.size(), bytes.size());
    EXPECT_NE(other, bytes);
}

TEST_F(BertBase, CountsTheParametersOfTheFormula) {
    EXPECT_EQ(graph().parameter_count(), 108'893'186);
    std::int64_t constants = 0;
    for (const auto& init : graph().initializers()) {
        if (!init.is_parameter) constants += static_cast<std::int64_t>(init.data.size());
    }
    EXPECT_EQ(constants, 5);  // 1, 0.5, sqrt(2), -10000, sqrt(head_dim)
}

TEST_F(BertBase, HasMlperfInputsAndSpanOutputsWithADynamicBatch) {
    EXPECT_EQ(graph().opset_version(), 17);  // LayerNormalization
    ASSERT_EQ(graph().inputs().size(), 3U);
    const char* names[] = {"input_ids", "attention_mask", "token_type_ids"};
    for (std::size_t i = 0; i < 3; ++i) {
        const OnnxValueInfo& in = graph().inputs()[i];
        EXPECT_EQ(in.name, names[i]);
        EXPECT_EQ(in.elem_type, OnnxElemType::int64);
        ASSERT_EQ(in.dims.size(), 2U);
        EXPECT_EQ(in.dims[0].param, kBatchDimName);
        EXPECT_EQ(in.dims[1].value, 384);
        EXPECT_TRUE(in.dims[1].param.empty());
    }
    ASSERT_EQ(graph().outputs().size(), 2U);
    EXPECT_EQ(graph().outputs()[0].name, "start_logits");
    EXPECT_EQ(graph().outputs()[1].name, "end_logits");
    for (const auto& out : graph().outputs()) {
        EXPECT_EQ(out.elem_type, OnnxElemType::float32);
        ASSERT_EQ(out.dims.size(), 2U);
        EXPECT_EQ(out.dims[0].param, kBatchDimName);
        EXPECT_EQ(out.dims[1].value, 384);
    }
}

// Every value is defined before it is used, once; every weight is used; the outputs exist.
TEST_F(BertBase, IsATopologicallyOrderedWellFormedGraph) {
    std::set<std::string> defined;
    for (const auto& in : graph().inputs()) defined.insert(in.name);
    for (const auto& init : graph().initializers()) defined.insert(init.name);
    std::set<std::string> used;
    for (const auto& n : graph().nodes()) {
        for (const auto& in : n.inputs) {
            EXPECT_TRUE(defined.contains(in)) << n.name << " reads undefined " << in;
            used.insert(in);
        }
        for (const auto& out : n.outputs) EXPECT_TRUE(defined.insert(out).second) << out << " defined twice";
    }
    for (const auto& out : graph().outputs()) EXPECT_TRUE(defined.contains(out.name)) << out.name;
    for (const auto& init : graph().initializers()) EXPECT_TRUE(used.contains(init.name)) << init.name;
}

TEST_F(BertBase, HasBertsLayerStructure) {
    const auto counts = op_counts(graph());
    EXPECT_EQ(counts.at("LayerNormalization"), 1 + 2 * 12);
    EXPECT_EQ(counts.at("MatMul"), 8 * 12 + 1);  // Q, K, V, QK^T, PV, output, FFN in and out; span head
    EXPECT_EQ(counts.at("Softmax"), 12);
    EXPECT_EQ(counts.at("Erf"), 12);
    EXPECT_EQ(counts.at("Gather"), 3);
    EXPECT_EQ(counts.at("Split"), 1);
    EXPECT_EQ(counts.at("Squeeze"), 2);

    EXPECT_EQ(node(graph(), "bert.encoder.layer.0.attention.self.Softmax").attributes.at(0).i, -1);
    EXPECT_EQ(node(graph(), "shape.split_heads").attributes.at(0).ints, (std::vector<std::int64_t>{0, 0, 12, 64}));
    EXPECT_EQ(node(graph(), "shape.merge_heads").attributes.at(0).ints, (std::vector<std::int64_t>{0, 0, 768}));
    EXPECT_EQ(node(graph(), "bert.encoder.layer.11.attention.self.key.Transpose").attributes.at(0).ints,
              (std::vector<std::int64_t>{0, 2, 3, 1}));
    const auto& positions = node(graph(), "bert.embeddings.position_ids").attributes.at(0).ints;
    ASSERT_EQ(positions.size(), 384U);
    EXPECT_EQ(positions.front(), 0);
    EXPECT_EQ(positions.back(), 383);
    EXPECT_EQ(initializer(graph(), "bert.embeddings.position_embeddings.weight").dims,
              (std::vector<std::int64_t>{512, 768}));
    EXPECT_EQ(initializer(graph(), "bert.encoder.layer.0.intermediate.dense.weight").dims,
              (std::vector<std::int64_t>{768, 3072}));
    EXPECT_EQ(initializer(graph(), "qa_outputs.weight").dims, (std::vector<std::int64_t>{768, 2}));
    EXPECT_FLOAT_EQ(initializer(graph(), "const.sqrt_head_dim").data.at(0), 8.0F);
    EXPECT_FLOAT_EQ(initializer(graph(), "const.masked_score").data.at(0), -10000.0F);
}

TEST_F(BertBase, WeightsFollowBertsInitialisation) {
    const auto& words = initializer(graph(), "bert.embeddings.word_embeddings.weight").data;
    double sum = 0.0;
    double squares = 0.0;
    float largest = 0.0F;
    for (const float v : words) {
        sum += v;
        squares += static_cast<double>(v) * v;
        largest = std::max(largest, std::abs(v));
    }
    const auto n = static_cast<double>(words.size());
    EXPECT_NEAR(sum / n, 0.0, 1e-4);
    EXPECT_NEAR(std::sqrt(squares / n - (sum / n) * (sum / n)), 0.02, 2e-4);  // initializer_range
    EXPECT_LE(largest, 0.02F * std::sqrt(12.0F) * 1.0001F);                   // Irwin-Hall bound

    const auto& gamma = initializer(graph(), "bert.encoder.layer.5.output.LayerNorm.weight").data;
    const auto& beta = initializer(graph(), "bert.encoder.layer.5.output.LayerNorm.bias").data;
    EXPECT_TRUE(std::ranges::all_of(gamma, [](float v) { return v == 1.0F; }));
    EXPECT_TRUE(std::ranges::all_of(beta, [](float v) { return v == 0.0F; }));
}

}  // namespace
}  // namespace inferbench::models
