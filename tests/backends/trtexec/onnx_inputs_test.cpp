// Reading the graph inputs of ONNX files: models written by the zoo's builder, and broken bytes.
#include "backends/trtexec/onnx_inputs.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <stdexcept>

#include "common/scratch_dir.hpp"
#include "models/onnx_builder.hpp"
#include "models/zoo.hpp"

namespace inferbench::trtexec {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::byte> bytes_of(const std::string& text) {
    const auto* data = reinterpret_cast<const std::byte*>(text.data());
    return {data, data + text.size()};
}

// A one-conv model: a symbolic batch, and the conv's weight also listed as a graph input, as
// exporters before ONNX IR version 4 did.
std::string conv_model() {
    models::GraphBuilder graph("conv", 1);
    graph.add_input("image", models::OnnxElemType::float32,
                    {models::OnnxDim::symbolic("batch"), models::OnnxDim::fixed(3), models::OnnxDim::fixed(8),
                     models::OnnxDim::fixed(8)});
    graph.add_input("scale", models::OnnxElemType::int64, {});
    const std::string y = graph.conv("conv", "image", 3, 4, {});
    graph.add_input("conv.weight", models::OnnxElemType::float32,
                    {models::OnnxDim::fixed(4), models::OnnxDim::fixed(3), models::OnnxDim::fixed(1),
                     models::OnnxDim::fixed(1)});
    graph.add_output(y, models::OnnxElemType::float32, {models::OnnxDim::symbolic("batch")});
    return graph.serialize();
}

TEST(OnnxInputs, NamesTypesAndDimsWithoutInitializers) {
    const auto inputs = read_onnx_inputs(bytes_of(conv_model()));
    ASSERT_EQ(inputs.size(), 2u);
    EXPECT_EQ(inputs[0].name, "image");
    EXPECT_EQ(inputs[0].elem_type, 1);
    EXPECT_THAT(inputs[0].dims, ElementsAre(-1, 3, 8, 8));
    EXPECT_EQ(inputs[1].name, "scale");
    EXPECT_EQ(inputs[1].elem_type, 7);
    EXPECT_TRUE(inputs[1].dims.empty());
}

TEST(OnnxInputs, ZooModelHasADynamicBatch) {
    testing::ScratchDir dir;
    const auto path = models::export_onnx("mobilenet", dir.path(), 1);
    std::ifstream in(path, std::ios::binary);
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    const auto inputs = read_onnx_inputs(bytes_of(text));
    ASSERT_EQ(inputs.size(), 1u);
    EXPECT_THAT(inputs[0].dims, ElementsAre(-1, 3, 224, 224));
}

TEST(OnnxInputs, BrokenBytesAreAnErrorWithTheOffset) {
    const std::string model = conv_model();
    const auto message = [](const std::string& text) {
        try {
            read_onnx_inputs(bytes_of(text));
        } catch (const std::runtime_error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_THAT(message(model.substr(0, model.size() / 2)), HasSubstr("beyond the end of its message"));
    EXPECT_THAT(message(""), HasSubstr("no graph"));
    EXPECT_THAT(message("\x0b"), HasSubstr("wire type 3"));  // field 1 as a group: unused by ONNX
    EXPECT_THAT(message("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"), HasSubstr("longer than 10 bytes at byte"));
}

}  // namespace
}  // namespace inferbench::trtexec
