// The TensorFlow backend's options and the ConfigProto bytes it hands TF_SetConfig.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backends/tensorflow/tensorflow_config.hpp"
#include "backends/tensorflow/tensorflow_options.hpp"
#include "core/error.hpp"

namespace inferbench {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string parse_error(const OptionMap& options) {
    try {
        parse_tensorflow_options(options);
    } catch (const UserError& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(TensorFlowOptions, Defaults) {
    const TensorFlowOptions parsed = parse_tensorflow_options({});
    EXPECT_TRUE(parsed.inputs.empty());
    EXPECT_TRUE(parsed.outputs.empty());
    EXPECT_EQ(parsed.intra_op_threads, 0);
    EXPECT_EQ(parsed.inter_op_threads, 0);
    EXPECT_THAT(parsed.tags, ElementsAre("serve"));
}

TEST(TensorFlowOptions, ParsesTensorNamesWithAndWithoutIndex) {
    const TensorFlowOptions parsed = parse_tensorflow_options(
        {{"inputs", "images, mask:1"}, {"outputs", "logits:0,scope/softmax"}, {"tags", "serve, gpu"},
         {"intra_op_threads", "2"}, {"inter_op_threads", "1"}});
    EXPECT_THAT(parsed.inputs, ElementsAre(TensorName{"images", 0}, TensorName{"mask", 1}));
    EXPECT_THAT(parsed.outputs, ElementsAre(TensorName{"logits", 0}, TensorName{"scope/softmax", 0}));
    EXPECT_THAT(parsed.tags, ElementsAre("serve", "gpu"));
    EXPECT_EQ(parsed.intra_op_threads, 2);
    EXPECT_EQ(parsed.inter_op_threads, 1);
    EXPECT_EQ(parsed.inputs[1].text(), "mask:1");
    EXPECT_EQ(parsed.outputs[0].text(), "logits");
    EXPECT_TRUE(parse_tensorflow_options({{"inputs", "  "}}).inputs.empty());
}

TEST(TensorFlowOptions, BadValuesAreUserErrors) {
    EXPECT_THAT(parse_error({{"outputs", "logits:x"}}), AllOf(HasSubstr("outputs"), HasSubstr("'logits:x'"),
                                                               HasSubstr("node or node:index")));
    EXPECT_THAT(parse_error({{"outputs", ":0"}}), AllOf(HasSubstr("outputs"), HasSubstr("':0'")));
    EXPECT_THAT(parse_error({{"outputs", "y:65536"}}), AllOf(HasSubstr("outputs"), HasSubstr("'y:65536'")));
    EXPECT_THAT(parse_error({{"inputs", "a,,b"}}),
                AllOf(HasSubstr("inputs"), HasSubstr("'a,,b'"), HasSubstr("without empty items")));
    EXPECT_THAT(parse_error({{"tags", ""}}), AllOf(HasSubstr("tags"), HasSubstr("1 or more items")));
    EXPECT_THAT(parse_error({{"tags", "serve,"}}), HasSubstr("tags"));
    EXPECT_THAT(parse_error({{"intra_op_threads", "-2"}}), HasSubstr("intra_op_threads"));
    EXPECT_THAT(parse_error({{"output", "y"}}), AllOf(HasSubstr("'output'"), HasSubstr("outputs")));
}

TEST(TensorFlowOptions, ListsEveryOptionWithAValidDefault) {
    for (const BackendOption& option : tensorflow_option_list()) {
        EXPECT_NO_THROW(parse_tensorflow_options({{option.name, option.default_value}})) << option.name;
        EXPECT_FALSE(option.help.empty());
    }
    EXPECT_EQ(tensorflow_option_list().size(), 5u);
}

// Expected bytes worked out by hand from tensorflow/core/protobuf/config.proto.
TEST(TensorFlowConfig, EncodesConfigProtoFields) {
    const std::string soft_placement("\x38\x01", 2);  // allow_soft_placement (7) = true
    EXPECT_EQ(encode_config_proto({}), soft_placement);

    SessionConfig cpu;
    cpu.hide_gpus = true;
    cpu.intra_op_threads = 2;
    cpu.inter_op_threads = 300;
    EXPECT_EQ(encode_config_proto(cpu),
              std::string("\x0a\x07\x0a\x03GPU\x10\x00"  // device_count (1) {"GPU": 0}
                          "\x10\x02"                     // intra_op_parallelism_threads (2) = 2
                          "\x28\xac\x02",                // inter_op_parallelism_threads (5) = 300, a 2-byte varint
                          14) +
                  soft_placement);

    SessionConfig gpu;
    gpu.visible_gpu = 1;
    gpu.allow_growth = true;
    EXPECT_EQ(encode_config_proto(gpu), std::string("\x32\x05\x20\x01\x2a\x01"
                                                    "1",  // gpu_options (6) {allow_growth (4), visible_device_list (5) "1"}
                                                    7) +
                                            soft_placement);
}

}  // namespace
}  // namespace inferbench
