// The torch-aoti backend's options (plan: backend_options.torch-aoti): defaults, every option, one-line
// errors, and the options that need a GPU.
#include "backends/torch_aoti/aoti_options.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backends/options.hpp"
#include "core/error.hpp"

namespace inferbench {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsSupersetOf;

std::string parse_error(const OptionMap& options) {
    try {
        parse_aoti_options(options);
    } catch (const UserError& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(AotiOptions, DefaultsMakeOnePackagePerBatchAndRunItPlainly) {
    const AotiOptions parsed = parse_aoti_options({});
    EXPECT_EQ(parsed.python, "");
    EXPECT_FALSE(parsed.dynamic_batch);
    EXPECT_EQ(parsed.seq_len, 0);
    EXPECT_TRUE(parsed.export_options.empty());
    EXPECT_FALSE(parsed.cuda_graph);
    EXPECT_FALSE(parsed.device_resident);
    EXPECT_EQ(parsed.threads, 0);
    EXPECT_EQ(aoti_option_list().size(), 7u);
}

TEST(AotiOptions, ParsesEveryOption) {
    const AotiOptions parsed = parse_aoti_options({{"python", "/opt/venv/bin/python"},
                                                   {"dynamic_batch", "yes"},
                                                   {"seq_len", "384"},
                                                   {"export_options", " freezing=1  max_autotune=0 "},
                                                   {"cuda_graph", "true"},
                                                   {"device_resident", "on"},
                                                   {"threads", "4"}});
    EXPECT_EQ(parsed.python, "/opt/venv/bin/python");
    EXPECT_TRUE(parsed.dynamic_batch);
    EXPECT_EQ(parsed.seq_len, 384);
    EXPECT_THAT(parsed.export_options, ElementsAre("freezing=1", "max_autotune=0"));
    EXPECT_TRUE(parsed.cuda_graph);
    EXPECT_TRUE(parsed.device_resident);
    EXPECT_EQ(parsed.threads, 4);
}

TEST(AotiOptions, BadValuesAreOneLineErrorsNamingTheOption) {
    EXPECT_THAT(parse_error({{"cuda_graphs", "true"}}), AllOf(HasSubstr("'cuda_graphs'"), HasSubstr("cuda_graph")));
    EXPECT_THAT(parse_error({{"seq_len", "100000"}}), AllOf(HasSubstr("seq_len"), HasSubstr("100000")));
    EXPECT_THAT(parse_error({{"dynamic_batch", "maybe"}}), HasSubstr("dynamic_batch"));
    EXPECT_THAT(parse_error({{"export_options", "freezing"}}),
                AllOf(HasSubstr("export_options"), HasSubstr("KEY=VALUE")));
    EXPECT_THAT(parse_error({{"export_options", "=1"}}), HasSubstr("export_options"));
    EXPECT_EQ(parse_error({{"export_options", "a=b=c"}}), "(no error)") << "the value may hold '='";
}

TEST(AotiOptions, GraphsAndDeviceResidencyNeedAGpu) {
    BenchmarkSpec spec;
    EXPECT_FALSE(aoti_device_problem(parse_aoti_options({}), spec));
    EXPECT_THAT(aoti_device_problem(parse_aoti_options({{"cuda_graph", "true"}}), spec).value_or(""),
                HasSubstr("need a cuda device"));
    EXPECT_TRUE(aoti_device_problem(parse_aoti_options({{"device_resident", "true"}}), spec));
    spec.device = Device{DeviceKind::cuda, 1};
    EXPECT_FALSE(aoti_device_problem(parse_aoti_options({{"cuda_graph", "true"}, {"device_resident", "true"}}), spec));
}

TEST(AotiOptions, SharedOptionsAreTheOneDeclaration) {
    EXPECT_THAT(aoti_option_list(), IsSupersetOf({device_resident_option(), cuda_graph_option(), threads_option()}));
}

}  // namespace
}  // namespace inferbench
