// The real CLI with a PostgreSQL --db (one server for the binary, common/postgres_server.hpp): run, summary,
// report, compare (beside a SQLite file), explain, import, run --resume; what is stored holds no secret; an
// unreachable server, a password in the URL and a newer schema are one line and a non-zero exit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/postgres_server.hpp"
#include "e2e/cli_harness.hpp"
#include "store/results_store.hpp"
#include "store/schema.hpp"
#include "store/sqlite.hpp"

namespace inferbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class PostgresServerEnvironment : public ::testing::Environment {
public:
    static testing::PostgresServer& server() {
        if (!server_) server_ = std::make_unique<testing::PostgresServer>();
        return *server_;
    }
    void TearDown() override { server_.reset(); }

private:
    static inline std::unique_ptr<testing::PostgresServer> server_;
};
::testing::Environment* const kEnvironment = ::testing::AddGlobalTestEnvironment(new PostgresServerEnvironment);

constexpr const char* kRun = "run --backend null --model null --batch 1,4 --duration 50ms --warmup 5ms "
                             "--max-iterations 20000 --quiet --db ";

bool one_line(const std::string& text) { return !text.empty() && text.find('\n') == text.size() - 1; }

class PostgresCli : public ::testing::Test {
protected:
    void SetUp() override {
        if (testing::PostgresServer::bin_dir().empty())
            GTEST_SKIP() << "PostgreSQL's server is not installed: scripts/setup.sh --tests";
        url_ = PostgresServerEnvironment::server().fresh_database();
    }
    std::string url_;
    testing::CliScratch dir;
};

TEST_F(PostgresCli, RunSummaryReportCompareExplainAndResumeOnAPostgresStore) {
    auto r = dir.run(kRun + url_);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = dir.run(std::string(kRun) + "local.db");
    ASSERT_EQ(r.exit_code, 0) << r.err;

    const auto summary = dir.run("summary --json --db " + url_);
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    const auto rows = nlohmann::json::parse(summary.out).at("rows");
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0]["backend"], "null");

    const auto report = dir.run("report --db " + url_ + " --out rep --no-excel --no-plots --no-html --quiet");
    ASSERT_EQ(report.exit_code, 0) << report.err;
    EXPECT_TRUE(std::filesystem::exists(dir.path() / "rep"));

    const auto compare = dir.run("compare --db local.db --db " + url_ + " --json");
    ASSERT_EQ(compare.exit_code, 0) << compare.err;
    EXPECT_EQ(nlohmann::json::parse(compare.out)["rows"].size(), 4u);

    const auto explain = dir.run("explain --db " + url_ + " --run 1");
    EXPECT_EQ(explain.exit_code, 0) << explain.err;

    const auto resume = dir.run("run --resume latest --db " + url_);
    EXPECT_EQ(resume.exit_code, 0) << resume.err;
    EXPECT_THAT(resume.err, HasSubstr("nothing to resume"));

    const auto imported = dir.run("import trtexec '" + std::string(INFERBENCH_FIXTURES_DIR) +
                                  "/trtexec/trt10-resnet50-summary.log' --db " + url_);
    ASSERT_EQ(imported.exit_code, 0) << imported.err;
    const auto store = store::ResultsStore::open(url_, store::ResultsStore::Access::read);
    EXPECT_EQ(store.runs().size(), 2u);
    EXPECT_EQ(store.benchmarks().size(), 3u);
}

// `inferbench merge` copies a SQLite shard into PostgreSQL and back: what comes back summarizes as the shard did, and
// merging the shard again into PostgreSQL adds nothing.
TEST_F(PostgresCli, MergeCopiesASqliteShardIntoPostgresAndBack) {
    auto r = dir.run(std::string(kRun) + "shard.db");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = dir.run("merge shard.db --into " + url_);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = dir.run("merge shard.db --into " + url_ + " --format json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("\"runs_unchanged\""));
    r = dir.run("merge " + url_ + " --into back.db");
    ASSERT_EQ(r.exit_code, 0) << r.err;

    const auto shard = store::ResultsStore::open(dir.path() / "shard.db", store::ResultsStore::Access::read);
    const auto in_postgres = store::ResultsStore::open(url_, store::ResultsStore::Access::read);
    const auto back = store::ResultsStore::open(dir.path() / "back.db", store::ResultsStore::Access::read);
    ASSERT_EQ(in_postgres.runs().size(), 1u);
    ASSERT_EQ(back.runs().size(), 1u);
    EXPECT_EQ(back.runs()[0].uid, shard.runs()[0].uid);
    EXPECT_EQ(in_postgres.runs()[0].uid, shard.runs()[0].uid);
    const auto from = shard.benchmarks();
    const auto to = back.benchmarks();
    ASSERT_EQ(from.size(), to.size());
    for (std::size_t k = 0; k < from.size(); ++k) {
        EXPECT_EQ(to[k].batch_size, from[k].batch_size);
        const auto want = shard.iterations(from[k].benchmark_id);
        const auto got = back.iterations(to[k].benchmark_id);
        ASSERT_EQ(got.size(), want.size());
        for (std::size_t i = 0; i < want.size(); ++i) {
            EXPECT_EQ(got[i].start_ns, want[i].start_ns);
            EXPECT_EQ(got[i].e2e_ns, want[i].e2e_ns);
        }
        EXPECT_EQ(back.cpu_samples(to[k].benchmark_id).size(), shard.cpu_samples(from[k].benchmark_id).size());
    }
    const auto summary_shard = dir.run("summary --format csv --db shard.db");
    const auto summary_back = dir.run("summary --format csv --db back.db");
    ASSERT_EQ(summary_back.exit_code, 0) << summary_back.err;
    EXPECT_EQ(summary_back.out, summary_shard.out);
}

TEST_F(PostgresCli, TheStoreHoldsNoSecretAndAPasswordInTheUrlIsRefused) {
    testing::PostgresServer& server = PostgresServerEnvironment::server();
    const std::string name = url_.substr(url_.rfind('/') + 1);
    // Over TCP, where the server asks for the password: it comes from PGPASSWORD only.
    const auto r = dir.run(kRun + server.tcp_url(name), std::string("PGPASSWORD=") + testing::PostgresServer::kPassword);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto store = store::ResultsStore::open(url_, store::ResultsStore::Access::read);
    const auto runs = store.runs();
    ASSERT_EQ(runs.size(), 1u);
    const auto& run = runs[0];
    EXPECT_THAT(run.plan_json, Not(HasSubstr(testing::PostgresServer::kPassword)));
    EXPECT_THAT(run.environment_json, Not(HasSubstr(testing::PostgresServer::kPassword)));
    EXPECT_EQ(nlohmann::json::parse(run.plan_json).at("db"), server.tcp_url(name));  // as given: no secret in it
    EXPECT_TRUE(nlohmann::json::parse(run.environment_json).at("libraries").contains("libpq"));

    const std::string with_password = "postgresql://postgres:" + std::string(testing::PostgresServer::kPassword) +
                                      "@127.0.0.1:" + std::to_string(server.port()) + "/" + name;
    const auto refused = dir.run(kRun + with_password);
    EXPECT_NE(refused.exit_code, 0);
    EXPECT_TRUE(one_line(refused.err)) << refused.err;
    EXPECT_THAT(refused.err, HasSubstr("PGPASSWORD"));
    EXPECT_THAT(refused.err, Not(HasSubstr(testing::PostgresServer::kPassword)));
    EXPECT_EQ(store::ResultsStore::open(url_, store::ResultsStore::Access::read).runs().size(), 1u);
}

TEST_F(PostgresCli, AnUnreachableServerAWrongPasswordAndANewerSchemaAreOneLine) {
    const auto unreachable = dir.run("summary --db postgresql://postgres@127.0.0.1:1/nothing");
    EXPECT_NE(unreachable.exit_code, 0);
    EXPECT_TRUE(one_line(unreachable.err)) << unreachable.err;
    EXPECT_THAT(unreachable.err, HasSubstr("cannot connect"));

    testing::PostgresServer& server = PostgresServerEnvironment::server();
    const std::string name = url_.substr(url_.rfind('/') + 1);
    const auto wrong = dir.run(kRun + server.tcp_url(name), "PGPASSWORD=wrong");
    EXPECT_NE(wrong.exit_code, 0);
    EXPECT_TRUE(one_line(wrong.err)) << wrong.err;
    EXPECT_THAT(wrong.err, HasSubstr("password authentication failed"));

    ASSERT_EQ(dir.run(kRun + url_).exit_code, 0);
    store::Database::open_postgres(url_).exec("UPDATE inferbench_schema SET version = 99");
    for (const std::string& command : {"summary --db " + url_, kRun + url_}) {
        const auto newer = dir.run(command);
        EXPECT_NE(newer.exit_code, 0) << command;
        EXPECT_TRUE(one_line(newer.err)) << newer.err;
        EXPECT_THAT(newer.err, HasSubstr("upgrade inferbench"));
    }
    store::Database::open_postgres(url_).exec("UPDATE inferbench_schema SET version = " +
                                              std::to_string(store::known_schema_version()));
    EXPECT_EQ(store::ResultsStore::open(url_, store::ResultsStore::Access::read).runs().size(), 1u);
}

}  // namespace
}  // namespace inferbench
