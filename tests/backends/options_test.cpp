// OptionReader: the one way backends read the plan's backend_options map.
#include "backends/options.hpp"

#include <stdexcept>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.hpp"

namespace inferbench {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const std::vector<BackendOption> kDeclared = {
    {"verbose", "false", "talk more"},
    {"threads", "0", "worker threads"},
    {"level", "3", "0..5"},
    {"mode", "fast", "fast|slow"},
    {"names", "", "comma-separated names"},
    {"tags", "serve", "comma-separated tags"},
    {"dir", "", "a folder"},
};

// The error `read` throws, or "(no error)".
template <typename Read>
std::string error_of(const OptionMap& options, Read read) {
    try {
        read(OptionReader("demo", options, kDeclared));
    } catch (const UserError& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(OptionReader, DefaultsComeFromTheDeclaredList) {
    const OptionMap none;
    const OptionReader read("demo", none, kDeclared);
    EXPECT_FALSE(read.flag("verbose"));
    EXPECT_EQ(read.count("threads"), 0);
    EXPECT_EQ(read.count("level", 5), 3);
    EXPECT_EQ(read.choice("mode", {"fast", "slow"}), "fast");
    EXPECT_THAT(read.list("names"), IsEmpty());
    EXPECT_THAT(read.list("tags", 1), ElementsAre("serve"));
    EXPECT_EQ(read.text("dir"), "");
}

TEST(OptionReader, ReadsGivenValues) {
    const OptionMap given{{"verbose", "on"}, {"threads", " 8 "},   {"level", "5"},
                          {"mode", "slow"},  {"names", "a, b ,c"}, {"dir", "/tmp/x y"}};
    const OptionReader read("demo", given, kDeclared);
    EXPECT_TRUE(read.flag("verbose"));
    EXPECT_EQ(read.count("threads"), 8);
    EXPECT_EQ(read.count("level", 5), 5);
    EXPECT_EQ(read.choice("mode", {"fast", "slow"}), "slow");
    EXPECT_THAT(read.list("names"), ElementsAre("a", "b", "c"));
    EXPECT_EQ(read.text("dir"), "/tmp/x y");
}

TEST(OptionReader, FlagTakesEveryBooleanSpelling) {
    for (const char* yes : {"true", "yes", "on", "1"})
        EXPECT_TRUE(OptionReader("demo", {{"verbose", yes}}, kDeclared).flag("verbose")) << yes;
    for (const char* no : {"false", "no", "off", "0"})
        EXPECT_FALSE(OptionReader("demo", {{"verbose", no}}, kDeclared).flag("verbose")) << no;
    EXPECT_EQ(error_of({{"verbose", "maybe"}}, [](const OptionReader& r) { r.flag("verbose"); }),
              "demo option verbose: 'maybe' is not valid (use true|false)");
}

TEST(OptionReader, UnknownKeyListsTheValidOptions) {
    EXPECT_EQ(error_of({{"thread", "2"}}, [](const OptionReader&) {}),
              "unknown demo option 'thread'; did you mean threads?; valid options: verbose, threads, level, mode, names, "
              "tags, dir (`inferbench list backends --options` says what each does)");
    EXPECT_THAT(error_of({{"x", "1"}}, [](const OptionReader&) {}), HasSubstr("valid options: verbose"));
    const OptionMap given{{"x", "1"}};
    try {
        OptionReader("bare", given, {});
        FAIL() << "no error";
    } catch (const UserError& e) {
        EXPECT_THAT(e.what(), HasSubstr("valid options: none"));
    }
}

TEST(OptionReader, CountIsAWholeNumberAtLeastZero) {
    for (const char* bad : {"-1", "two", "2x", "1.5", "", "99999999999999999999"}) {
        EXPECT_EQ(error_of({{"threads", bad}}, [](const OptionReader& r) { r.count("threads"); }),
                  "demo option threads: '" + std::string(bad) + "' is not valid (use a whole number >= 0)")
            << bad;
    }
}

TEST(OptionReader, BoundedCountNamesItsRange) {
    const auto level = [](const OptionReader& r) { r.count("level", 5); };
    EXPECT_EQ(error_of({{"level", "6"}}, level), "demo option level: '6' is not valid (use a whole number 0..5)");
    EXPECT_THAT(error_of({{"level", "-1"}}, level), HasSubstr("0..5"));
    EXPECT_THAT(error_of({{"level", "high"}}, level), HasSubstr("0..5"));
    EXPECT_EQ(OptionReader("demo", {{"level", "0"}}, kDeclared).count("level", 5), 0);
}

TEST(OptionReader, ChoiceListsTheValidValues) {
    EXPECT_EQ(error_of({{"mode", "Fast"}},
                       [](const OptionReader& r) {
                           r.choice("mode", {"fast", "slow"});
                       }),
              "demo option mode: 'Fast' is not valid (use fast|slow)");
}

enum class Speed { fast, slow };
constexpr std::pair<std::string_view, Speed> kSpeeds[] = {{"fast", Speed::fast}, {"slow", Speed::slow}};

TEST(OptionReader, MappedChoiceReturnsTheTablesValue) {
    EXPECT_EQ(OptionReader("demo", {}, kDeclared).choice("mode", kSpeeds), Speed::fast);
    EXPECT_EQ(OptionReader("demo", {{"mode", "slow"}}, kDeclared).choice("mode", kSpeeds), Speed::slow);
    EXPECT_EQ(error_of({{"mode", "medium"}}, [](const OptionReader& r) { r.choice("mode", kSpeeds); }),
              "demo option mode: 'medium' is not valid (use fast|slow)");
}

TEST(OptionReader, ListRejectsEmptyItemsAndTooFewItems) {
    const auto names = [](const OptionReader& r) { r.list("names"); };
    EXPECT_EQ(error_of({{"names", "a,,b"}}, names),
              "demo option names: 'a,,b' is not valid (use a comma-separated list without empty items)");
    EXPECT_THAT(error_of({{"names", "a, "}}, names), HasSubstr("without empty items"));
    EXPECT_THAT(OptionReader("demo", {{"names", "  "}}, kDeclared).list("names"), IsEmpty());
    const auto tags = [](const OptionReader& r) { r.list("tags", 1); };
    EXPECT_EQ(error_of({{"tags", ""}}, tags),
              "demo option tags: '' is not valid (use a comma-separated list of 1 or more items, none empty)");
    EXPECT_THAT(error_of({{"tags", "a,,b"}}, tags), HasSubstr("none empty"));
}

TEST(OptionReader, RejectGivesTheSameOneLineError) {
    EXPECT_EQ(error_of({}, [](const OptionReader& r) { r.reject("dir", "/nope", "an existing folder"); }),
              "demo option dir: '/nope' is not valid (use an existing folder)");
}

TEST(OptionReader, ReadingAnUndeclaredOptionIsAProgrammingError) {
    const OptionMap none;
    const OptionReader read("demo", none, kDeclared);
    EXPECT_THROW(read.text("undeclared"), std::logic_error);
    EXPECT_THROW(read.count("undeclared", 3), std::logic_error);
}


TEST(SharedOptions, EachIsAFlagOrCountOffByDefaultWithOneHelpText) {
    EXPECT_EQ(device_resident_option().name, "device_resident");
    EXPECT_EQ(device_resident_option().type, OptionType::flag);
    EXPECT_EQ(device_resident_option().default_value, "false");
    EXPECT_THAT(device_resident_option().help, AllOf(HasSubstr("no host copies"), HasSubstr("cuda only")));
    EXPECT_EQ(cuda_graph_option().name, "cuda_graph");
    EXPECT_EQ(cuda_graph_option().type, OptionType::flag);
    EXPECT_EQ(cuda_graph_option().default_value, "false");
    EXPECT_THAT(cuda_graph_option().help, AllOf(HasSubstr("CUDA graph"), HasSubstr("cuda only")));
    EXPECT_EQ(threads_option().name, "threads");
    EXPECT_EQ(threads_option().type, OptionType::count);
    EXPECT_EQ(threads_option().default_value, "0");
    // Read through OptionReader like any declared option.
    const OptionMap given{{"device_resident", "yes"}, {"threads", "4"}};
    const OptionReader read("demo", given, {device_resident_option(), cuda_graph_option(), threads_option()});
    EXPECT_TRUE(read.flag("device_resident"));
    EXPECT_FALSE(read.flag("cuda_graph"));
    EXPECT_EQ(read.count("threads"), 4);
}

TEST(SharedOptions, GraphsAndDeviceResidencyNeedACudaDevice) {
    BenchmarkSpec spec;  // cpu
    EXPECT_FALSE(cuda_only_options_problem(spec, false, false));
    EXPECT_EQ(cuda_only_options_problem(spec, true, false), "cuda_graph and device_resident need a cuda device");
    EXPECT_EQ(cuda_only_options_problem(spec, false, true), "cuda_graph and device_resident need a cuda device");
    spec.device = Device{DeviceKind::cuda, 0};
    EXPECT_FALSE(cuda_only_options_problem(spec, true, true));
}

}  // namespace
}  // namespace inferbench
