// Graph inspection helpers shared by the zoo architecture tests (YOLO, Swin).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "models/onnx_builder.hpp"

namespace inferbench::models::testing {

inline const OnnxInitializer& initializer(const GraphBuilder& g, std::string_view name) {
    const auto it = std::ranges::find(g.initializers(), name, &OnnxInitializer::name);
    if (it == g.initializers().end()) throw std::out_of_range(std::string(name));
    return *it;
}

inline const OnnxNode& node(const GraphBuilder& g, std::string_view name) {
    const auto it = std::ranges::find(g.nodes(), name, &OnnxNode::name);
    if (it == g.nodes().end()) throw std::out_of_range(std::string(name));
    return *it;
}

inline std::map<std::string, int> op_counts(const GraphBuilder& g) {
    std::map<std::string, int> counts;
    for (const auto& n : g.nodes()) ++counts[n.op_type];
    return counts;
}

// Channels of all BatchNormalization nodes: what folding BN into the convs removes from the count
// (gamma and beta become one bias per channel).
inline std::int64_t batch_norm_channels(const GraphBuilder& g) {
    std::int64_t channels = 0;
    for (const auto& n : g.nodes()) {
        if (n.op_type == "BatchNormalization") {
            channels += static_cast<std::int64_t>(initializer(g, n.inputs.at(1)).data.size());
        }
    }
    return channels;
}

// Every value is defined before it is used, once; every initializer is used; the outputs exist.
// "" is an omitted optional input (Resize's roi).
inline void expect_well_formed(const GraphBuilder& g) {
    std::set<std::string> defined;
    for (const auto& in : g.inputs()) defined.insert(in.name);
    for (const auto& init : g.initializers()) defined.insert(init.name);
    std::set<std::string> used;
    for (const auto& n : g.nodes()) {
        for (const auto& in : n.inputs) {
            if (in.empty()) continue;
            EXPECT_TRUE(defined.contains(in)) << n.name << " reads undefined " << in;
            used.insert(in);
        }
        for (const auto& out : n.outputs) EXPECT_TRUE(defined.insert(out).second) << out << " defined twice";
    }
    for (const auto& out : g.outputs()) EXPECT_TRUE(defined.contains(out.name)) << out.name;
    for (const auto& init : g.initializers()) EXPECT_TRUE(used.contains(init.name)) << init.name;
}

// [batch, rest...] with the symbolic batch dimension first.
inline void expect_dims(const OnnxValueInfo& v, std::string_view batch, const std::vector<std::int64_t>& rest) {
    ASSERT_EQ(v.dims.size(), rest.size() + 1) << v.name;
    EXPECT_EQ(v.dims[0].param, batch) << v.name;
    for (std::size_t i = 0; i < rest.size(); ++i) {
        EXPECT_TRUE(v.dims[i + 1].param.empty()) << v.name;
        EXPECT_EQ(v.dims[i + 1].value, rest[i]) << v.name << " dim " << i + 1;
    }
}

}  // namespace inferbench::models::testing
