// The run store's file: schema versions, files it must refuse, what survives a killed process,
// and several connections (processes) sharing one file.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "store/database.h"
#include "store/migrations.h"
#include "store/run_store.h"
#include "store/run_store_test_support.h"

namespace ksmith {
namespace {

using namespace testing;  // the store's samples (run_store_test_support.h)

const int kLatestSchema = static_cast<int>(RunStoreMigrations().size());

std::unique_ptr<Database> OpenRaw(const std::filesystem::path& path) {
  auto database = Database::Open(path);
  EXPECT_TRUE(database.ok()) << database.error().message;
  return database.ok() ? std::move(database).value() : nullptr;
}

TEST(RunStoreFile, CreateThenReopenKeepsTheSchemaAndTheRecords) {
  testing::StoreFolder folder;
  {
    auto store = folder.Open();
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->schema_version(), kLatestSchema);
    ASSERT_TRUE(store->CreateRun(SampleRun("run-a"), kSampleTaskToml).ok());
  }
  auto reopened = folder.Open();
  ASSERT_NE(reopened, nullptr);
  EXPECT_EQ(reopened->schema_version(), kLatestSchema);
  EXPECT_TRUE(reopened->GetRun("run-a").ok());
  auto raw = OpenRaw(folder.db_path());
  EXPECT_EQ(raw->QueryText("PRAGMA journal_mode").value(), "wal");
  EXPECT_EQ(raw->QueryInt("PRAGMA user_version").value(), kLatestSchema);
}

TEST(RunStoreFile, NewerSchemaIsRefused) {
  testing::StoreFolder folder;
  ASSERT_NE(folder.Open(), nullptr);
  ASSERT_TRUE(OpenRaw(folder.db_path())->Execute("PRAGMA user_version = 99").ok());
  auto store = RunStore::Open(folder.db_path());
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().kind, ErrorKind::kUnsupported);
  EXPECT_NE(store.error().message.find(
                fmt::format("written by a newer ksmith (schema 99, this build knows {})", kLatestSchema)),
            std::string::npos)
      << store.error().message;
}

TEST(RunStoreFile, FileThatIsNotSqliteIsRefusedByPath) {
  testing::StoreFolder folder;
  std::ofstream(folder.db_path()) << "name = \"vector_add\"\n# a task.toml given by mistake\n";
  auto store = RunStore::Open(folder.db_path());
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_NE(store.error().message.find(folder.db_path().string()), std::string::npos) << store.error().message;
  EXPECT_NE(store.error().message.find("not an SQLite database"), std::string::npos) << store.error().message;
}

TEST(RunStoreFile, AnotherProgramsDatabaseIsLeftAlone) {
  testing::StoreFolder folder;
  ASSERT_TRUE(OpenRaw(folder.db_path())->ExecuteScript("CREATE TABLE contacts (name TEXT);").ok());
  auto store = RunStore::Open(folder.db_path());
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error().message.find("not a ksmith run store"), std::string::npos) << store.error().message;
  EXPECT_EQ(OpenRaw(folder.db_path())->QueryInt("SELECT COUNT(*) FROM sqlite_schema").value(), 1)
      << "tables were added to someone else's file";

  testing::StoreFolder other;
  ASSERT_TRUE(OpenRaw(other.db_path())->Execute("PRAGMA application_id = 42").ok());
  auto marked = RunStore::Open(other.db_path());
  ASSERT_FALSE(marked.ok());
  EXPECT_NE(marked.error().message.find("application_id 42"), std::string::npos) << marked.error().message;
}

TEST(RunStoreFile, ADamagedFileSaysWhichFileAndWhatToDoWithoutSql) {
  testing::StoreFolder folder;
  {
    auto store = RunStore::Open(folder.db_path());
    ASSERT_TRUE(store.ok()) << store.error().message;
  }
  // Every page after the first overwritten: the header still says SQLite, the tables are gone.
  const auto size = std::filesystem::file_size(folder.db_path());
  ASSERT_GT(size, 4096u);
  {
    std::fstream file(folder.db_path(), std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(4096);
    const std::string garbage(size - 4096, '\x5a');
    file.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  std::string message;
  auto store = RunStore::Open(folder.db_path());
  if (!store.ok()) {
    message = store.error().message;
  } else {
    auto runs = (*store)->ListRuns();
    ASSERT_FALSE(runs.ok()) << "a damaged store read as fine";
    message = runs.error().message;
  }
  EXPECT_NE(message.find("the run store " + folder.db_path().string()), std::string::npos) << message;
  EXPECT_NE(message.find("the file is damaged; move it aside"), std::string::npos) << message;
  EXPECT_EQ(message.find("SELECT"), std::string::npos) << "no SQL for a damaged file: " << message;
}

TEST(RunStoreFile, DirectoryInsteadOfAFileIsAnErrorNamingIt) {
  testing::StoreFolder folder;
  std::filesystem::create_directories(folder.db_path());
  auto store = RunStore::Open(folder.db_path());
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error().message.find(folder.db_path().string()), std::string::npos) << store.error().message;
}

TEST(RunStoreDurability, KilledProcessLosesNothingThatFinished) {
  // Given a process that records a run, a call, a candidate and its verdict and is then killed
  // without closing anything, a later process finds every record.
  testing::StoreFolder folder;
  const pid_t child = ::fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    auto store = RunStore::Open(folder.db_path());
    if (!store.ok() || !(*store)->CreateRun(SampleRun("killed"), kSampleTaskToml).ok()) ::_exit(1);
    auto call = (*store)->AddLlmCall("killed", SampleCall());
    if (!call.ok()) ::_exit(2);
    auto candidate = (*store)->AddCandidate(SampleCandidate("killed", *call));
    if (!candidate.ok()) ::_exit(3);
    if (!(*store)->AddVerdict(*candidate, SampleVerdict("passed", 1.5)).ok()) ::_exit(4);
    ::raise(SIGKILL);
    ::_exit(5);
  }
  int wait_status = 0;
  ASSERT_EQ(::waitpid(child, &wait_status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(wait_status)) << "the child exited with " << WEXITSTATUS(wait_status);
  EXPECT_EQ(WTERMSIG(wait_status), SIGKILL);

  auto store = folder.Open();
  ASSERT_NE(store, nullptr);
  const RunRecord run = store->GetRun("killed").value();
  EXPECT_EQ(run.status, "running");
  EXPECT_EQ(run.llm_calls, 1);
  EXPECT_EQ(run.passed, 1);
  const auto calls = store->LlmCalls("killed").value();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].call.request, SampleCall().request);
  const auto candidates = store->Candidates("killed").value();
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_EQ(candidates[0].llm_call_id, calls[0].id);
  EXPECT_EQ(candidates[0].status, "passed");
  EXPECT_EQ(candidates[0].speedup, 1.5);
  EXPECT_EQ(store->TaskToml("killed").value(), kSampleTaskToml);
}

TEST(RunStoreConcurrency, ReadersNeitherWaitForNorSeeAnUncommittedWrite) {
  testing::StoreFolder folder;
  auto writer = folder.Open();
  auto reader = folder.Open();
  ASSERT_TRUE(writer->CreateRun(SampleRun("run-a"), kSampleTaskToml).ok());

  auto other_process = OpenRaw(folder.db_path());
  auto transaction = Transaction::Begin(*other_process);
  ASSERT_TRUE(transaction.ok()) << transaction.error().message;
  ASSERT_TRUE(other_process->Execute("UPDATE runs SET stop_reason = 'uncommitted' WHERE id = 'run-a'").ok());
  const auto started = std::chrono::steady_clock::now();
  auto during = reader->GetRun("run-a");
  ASSERT_TRUE(during.ok()) << during.error().message;
  EXPECT_EQ(during->stop_reason, "");
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(1)) << "the reader waited";
  ASSERT_TRUE(transaction->Commit().ok());
  EXPECT_EQ(reader->GetRun("run-a")->stop_reason, "uncommitted");
}

TEST(RunStoreConcurrency, AWriterWaitsForAnotherWriterInsteadOfFailing) {
  testing::StoreFolder folder;
  auto store = folder.Open();
  ASSERT_TRUE(store->CreateRun(SampleRun("run-a"), kSampleTaskToml).ok());
  auto other_process = OpenRaw(folder.db_path());
  auto transaction = Transaction::Begin(*other_process);
  ASSERT_TRUE(transaction.ok());

  Result<int64_t> added = MakeError(ErrorKind::kInternal, "not run");
  std::thread writer([&] { added = store->AddLlmCall("run-a", SampleCall()); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_TRUE(transaction->Commit().ok());
  writer.join();
  EXPECT_TRUE(added.ok()) << added.error().message;
}

TEST(RunStoreConcurrency, ThreadsAndConnectionsShareOneFile) {
  testing::StoreFolder folder;
  auto writer = folder.Open();
  auto reader = folder.Open();
  ASSERT_TRUE(writer->CreateRun(SampleRun("run-a"), kSampleTaskToml).ok());
  constexpr int kCallsPerThread = 25;
  std::atomic<int> failures = 0;
  auto write = [&] {
    for (int i = 0; i < kCallsPerThread; ++i) {
      if (!writer->AddLlmCall("run-a", SampleCall()).ok()) ++failures;
    }
  };
  std::thread first(write);
  std::thread second(write);
  size_t last_seen = 0;
  while (last_seen < 2 * kCallsPerThread && failures == 0) {
    auto calls = reader->LlmCalls("run-a");
    ASSERT_TRUE(calls.ok()) << calls.error().message;
    EXPECT_GE(calls->size(), last_seen);
    last_seen = calls->size();
  }
  first.join();
  second.join();
  EXPECT_EQ(failures, 0);
  std::set<int64_t> sequences;
  const auto calls = reader->LlmCalls("run-a").value();
  for (const auto& call : calls) sequences.insert(call.sequence);
  EXPECT_EQ(sequences.size(), 2u * kCallsPerThread);
  EXPECT_EQ(*sequences.rbegin(), 2 * kCallsPerThread - 1);
}

}  // namespace
}  // namespace ksmith
