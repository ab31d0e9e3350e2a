// Parsing the plan's backend_options.tensorrt map: defaults, every option, one-line errors.
#include "backends/tensorrt/tensorrt_options.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backends/options.hpp"
#include "core/error.hpp"

namespace inferbench {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::IsSupersetOf;

std::string parse_error(const OptionMap& options) {
    try {
        parse_tensorrt_options(options);
    } catch (const UserError& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(TensorRtOptions, DefaultsAreTensorRtsOwn) {
    const TensorRtOptions parsed = parse_tensorrt_options({});
    EXPECT_FALSE(parsed.device_resident);
    EXPECT_FALSE(parsed.cuda_graph);
    EXPECT_EQ(parsed.workspace_mb, 0);
    EXPECT_EQ(parsed.calibration_dir, "");
    EXPECT_EQ(parsed.builder_optimization_level, 3);
    EXPECT_EQ(parsed.cache_dir, "");
}

TEST(TensorRtOptions, ParsesEveryOption) {
    const TensorRtOptions parsed = parse_tensorrt_options({{"device_resident", "true"},
                                                           {"cuda_graph", "on"},
                                                           {"workspace_mb", "4096"},
                                                           {"calibration_dir", "/data/calib"},
                                                           {"builder_optimization_level", "5"},
                                                           {"cache_dir", "/tmp/engines"}});
    EXPECT_TRUE(parsed.device_resident);
    EXPECT_TRUE(parsed.cuda_graph);
    EXPECT_EQ(parsed.workspace_mb, 4096);
    EXPECT_EQ(parsed.calibration_dir, "/data/calib");
    EXPECT_EQ(parsed.builder_optimization_level, 5);
    EXPECT_EQ(parsed.cache_dir, "/tmp/engines");
    EXPECT_EQ(parse_tensorrt_options({{"builder_optimization_level", "0"}}).builder_optimization_level, 0);
}

TEST(TensorRtOptions, UnknownKeyNamesItAndTheValidOnes) {
    EXPECT_THAT(parse_error({{"workspace", "1"}}),
                AllOf(HasSubstr("'workspace'"), HasSubstr("workspace_mb"), HasSubstr("cuda_graph")));
}

TEST(TensorRtOptions, BadValuesAreUserErrors) {
    EXPECT_THAT(parse_error({{"builder_optimization_level", "6"}}),
                AllOf(HasSubstr("builder_optimization_level"), HasSubstr("'6'"), HasSubstr("0..5")));
    EXPECT_THAT(parse_error({{"builder_optimization_level", "-1"}}), HasSubstr("builder_optimization_level"));
    EXPECT_THAT(parse_error({{"workspace_mb", "lots"}}), HasSubstr("workspace_mb"));
    EXPECT_THAT(parse_error({{"workspace_mb", "99999999999"}}),
                AllOf(HasSubstr("workspace_mb"), HasSubstr("0..1048576")));
    EXPECT_EQ(parse_tensorrt_options({{"workspace_mb", "1048576"}}).workspace_mb, 1048576);
    EXPECT_THAT(parse_error({{"cuda_graph", "maybe"}}), AllOf(HasSubstr("cuda_graph"), HasSubstr("true|false")));
}

TEST(TensorRtOptions, ListsEveryOptionWithAValidDefault) {
    const std::vector<BackendOption> list = tensorrt_option_list();
    ASSERT_EQ(list.size(), 6u);
    for (const BackendOption& option : list) {
        EXPECT_NO_THROW(parse_tensorrt_options({{option.name, option.default_value}})) << option.name;
        EXPECT_FALSE(option.help.empty()) << option.name;
    }
}

TEST(TensorRtOptions, SharedOptionsAreTheOneDeclaration) {
    EXPECT_THAT(tensorrt_option_list(), IsSupersetOf({device_resident_option(), cuda_graph_option()}));
}

}  // namespace
}  // namespace inferbench
