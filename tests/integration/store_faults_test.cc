// A run store ksmith cannot use as it is (its folder missing or read-only, the file damaged) is
// one usage error, exit 2, in every command that meets it, with the file and the fix: a damaged
// column was an internal error (nlohmann's type_error.306, or 316 with --json), the same damaged
// store exited 2 from `runs` and 3 from `optimize`, and a read-only folder 3 where a missing one
// was 2.
#include <sys/stat.h>

#include <fmt/format.h>

#include "cli_runner.h"
#include "store/database.h"
#include "store/run_store.h"

namespace ksmith::it {
namespace {

class StoreFaults : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(dir_.path().empty()); }
  std::string Db() const { return (dir_.path() / "runs.db").string(); }

  // One tune run of one candidate, recorded in Db(); its id.
  std::string RecordARun() {
    const CliResult run = RunKsmith({"optimize", "--task", "vector_add", "--db", Db(), "--output-dir",
                                     (dir_.path() / "out").string(), "--max-candidates", "1", "--timing-budget", "0.1",
                                     "--seeds", "1", "--json", "--quiet"});
    EXPECT_EQ(run.exit_code, 0) << run.Describe();
    return run.Json().value("run_id", std::string());
  }

  // Writes `text` into one column of every row of `table`, as a disk fault or a hand edit leaves it.
  void Damage(const std::string& table, const std::string& column, const std::string& text) {
    auto raw = Database::Open(Db());
    ASSERT_TRUE(raw.ok()) << raw.error().message;
    ASSERT_TRUE((*raw)->Execute(fmt::format("UPDATE {} SET {} = ?", table, column), {text}).ok());
  }

  // Exit 2, the damaged-store message on stderr (no internal error), and with --json the error
  // object on stdout.
  static void ExpectDamagedStore(const CliResult& run, const std::string& record) {
    EXPECT_EQ(run.exit_code, 2) << run.Describe();
    EXPECT_NE(run.err.find("is damaged: " + record), std::string::npos) << run.Describe();
    EXPECT_NE(run.err.find("move the file aside"), std::string::npos) << run.Describe();
    EXPECT_EQ(run.err.find("internal error"), std::string::npos) << run.Describe();
  }

  TempDir dir_{"store-faults"};
};

TEST_F(StoreFaults, ADamagedVerdictIsTheSameUsageErrorInEveryCommand) {
  const std::string run_id = RecordARun();
  ASSERT_FALSE(run_id.empty());
  // Valid JSON of the wrong shape: kept as a string, `runs show` threw type_error.306.
  Damage("verdicts", "verdict", "\"passed\"");
  const std::string record = "candidate ";
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"runs", "show", run_id, "--db", Db()},
           {"export", run_id, "--db", Db()},
           {"optimize", "--resume", run_id, "--db", Db(), "--max-candidates", "2", "--output-dir",
            (dir_.path() / "resumed").string(), "--quiet"}}) {
    ExpectDamagedStore(RunKsmith(args), record);
  }
  // Not JSON at all, with bytes that are not UTF-8: --json threw type_error.316.
  Damage("verdicts", "verdict", "{\"status\": \"pas\xff");
  const CliResult json = RunKsmith({"runs", "show", run_id, "--db", Db(), "--json"});
  ExpectDamagedStore(json, record);
  EXPECT_TRUE(PrintedUsageErrorJson(json)) << json.Describe();
}

TEST_F(StoreFaults, DamagedSettingsAreTheSameUsageErrorFromRunsAndOptimize) {
  const std::string run_id = RecordARun();
  ASSERT_FALSE(run_id.empty());
  Damage("runs", "config", "{\"seeds\": ");
  const std::string record = "run " + run_id + ": its settings";
  ExpectDamagedStore(RunKsmith({"runs", "list", "--db", Db()}), record);
  ExpectDamagedStore(RunKsmith({"runs", "show", run_id, "--db", Db()}), record);
  ExpectDamagedStore(RunKsmith({"optimize", "--resume", run_id, "--db", Db(), "--quiet"}), record);
  // JSON of the right type with a setting of the wrong one: read as its default, it would have
  // changed the resumed run (get<> threw type_error.302 before).
  Damage("runs", "config", "{\"seeds\": \"three\", \"task\": \"vector_add\"}");
  ExpectDamagedStore(RunKsmith({"optimize", "--resume", run_id, "--db", Db(), "--quiet"}), record);
}

TEST_F(StoreFaults, AMissingAndAReadOnlyDbFolderAreBothUsageErrorsNamingTheFix) {
  const std::string missing = (dir_.path() / "missing" / "runs.db").string();
  for (const auto& command : {std::vector<std::string>{"runs", "list", "--db", missing},
                              std::vector<std::string>{"optimize", "--task", "vector_add", "--db", missing}}) {
    const CliResult run = RunKsmith(command);
    EXPECT_EQ(run.exit_code, 2) << run.Describe();
    EXPECT_NE(run.err.find("does not exist"), std::string::npos) << run.Describe();
  }
  if (!PermissionsHoldInChildren()) GTEST_SKIP() << "root here cannot be held to a folder's mode bits";
  const fs::path locked = dir_.path() / "locked";
  fs::create_directories(locked);
  const std::string db = (locked / "runs.db").string();
  ASSERT_TRUE(RunStore::Open(db).ok());  // a store that exists: `runs list` reads it
  ASSERT_EQ(::chmod(locked.c_str(), 0555), 0);
  for (const auto& command : {std::vector<std::string>{"optimize", "--task", "vector_add", "--db", db, "--quiet"},
                              std::vector<std::string>{"bench", "--suite", "vector_add", "--db", db, "--report",
                                                       (dir_.path() / "report").string(), "--quiet"},
                              std::vector<std::string>{"runs", "list", "--db", db}}) {
    const CliResult run = RunKsmith(command, {}, 600, /*mode_bits=*/true);
    EXPECT_EQ(run.exit_code, 2) << run.Describe();
    EXPECT_NE(run.err.find(fmt::format("ksmith: error: --db {}: the folder {} cannot be written ({}: Permission "
                                       "denied); make it writable", db, locked.string(), locked.string())),
              std::string::npos)
        << run.Describe();
  }
  ::chmod(locked.c_str(), 0755);
  // The file read-only in a writable folder: SQLite finds it, and says so alike.
  ASSERT_EQ(::chmod(db.c_str(), 0444), 0);
  for (const auto& command : {std::vector<std::string>{"optimize", "--task", "vector_add", "--db", db, "--quiet"},
                              std::vector<std::string>{"bench", "--suite", "vector_add", "--db", db, "--report",
                                                       (dir_.path() / "report").string(), "--quiet"}}) {
    const CliResult run = RunKsmith(command, {}, 600, /*mode_bits=*/true);
    EXPECT_EQ(run.exit_code, 2) << run.Describe();
    EXPECT_NE(run.err.find("ksmith: error: the run store " + db), std::string::npos) << run.Describe();
    EXPECT_NE(run.err.find("the file is read-only to ksmith; make both it and its folder writable"),
              std::string::npos)
        << run.Describe();
  }
  // Reading needs no write.
  EXPECT_EQ(RunKsmith({"runs", "list", "--db", db}, {}, 600, /*mode_bits=*/true).exit_code, 0);
}

}  // namespace
}  // namespace ksmith::it
