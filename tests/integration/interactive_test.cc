// `ksmith optimize --interactive` driven through a real terminal: the run is started in a tmux
// session (tmux gives it a tty; the test types into it with send-keys and reads the screen with
// capture-pane), against a scripted model server on loopback (the model is the only fake). The
// person adds a constraint, approves, edits a wrong kernel with $EDITOR, rolls back, and stops;
// the test then checks what reached the model, what was judged, and what the store recorded.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "cli_runner.h"
#include "scripted_kernels.h"
#include "testing/scripted_llm_server.h"

namespace ksmith::it {
namespace {

std::string Shell(const std::string& command) {
  std::string output;
  if (std::FILE* pipe = ::popen(command.c_str(), "r")) {
    char buffer[4096];
    while (const size_t read = std::fread(buffer, 1, sizeof(buffer), pipe)) output.append(buffer, read);
    ::pclose(pipe);
  }
  return output;
}

// One tmux server of the test's own (its own socket), holding one session that runs `command`.
class TmuxSession {
 public:
  TmuxSession(const fs::path& folder, const std::string& command) : socket_((folder / "tmux.sock").string()) {
    const fs::path config = folder / "tmux.conf";
    std::ofstream(config) << "set -g history-limit 100000\n";
    std::ofstream(folder / "session.sh") << command << "\n";
    started_ = std::system(("env -u TMUX tmux -S '" + socket_ + "' -f '" + config.string() + "' new-session -d -s ks -x 160 -y 50 \"sh '" +
                            (folder / "session.sh").string() + "'\"")
                               .c_str()) == 0;
  }
  ~TmuxSession() { (void)std::system(("tmux -S '" + socket_ + "' kill-server 2>/dev/null").c_str()); }
  bool started() const { return started_; }

  /// Everything the session printed so far, the scrollback included, lines joined where wrapped.
  std::string Screen() const { return Shell("tmux -S '" + socket_ + "' capture-pane -p -J -S -100000 -t ks 2>/dev/null"); }

  /// Waits until the screen shows `text`; false (with the screen in `last`) after `timeout_s`.
  bool WaitFor(const std::string& text, int timeout_s = 120) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    while (std::chrono::steady_clock::now() < deadline) {
      last_ = Screen();
      if (last_.find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }
  const std::string& last() const { return last_; }

  /// Types `line` and Enter, as a person would.
  void Type(const std::string& line) {
    (void)std::system(("tmux -S '" + socket_ + "' send-keys -t ks -l '" + line + "'").c_str());
    (void)std::system(("tmux -S '" + socket_ + "' send-keys -t ks Enter").c_str());
  }

 private:
  std::string socket_;
  bool started_ = false;
  std::string last_;
};

TEST(Interactive, ThePersonConstrainsApprovesEditsRollsBackAndStopsAndEverythingIsRecorded) {
  if (std::system("command -v tmux >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "tmux is not installed (apt-get install tmux; scripts/setup.sh installs it): the interactive mode "
                    "is tested through a real terminal";
  }
  TempDir directory("interactive");
  ASSERT_FALSE(directory.path().empty());
  auto server = testing::ScriptedLlmServer::Start(
      {{"steps", nlohmann::json::array({
                     {{"content", ScriptedAnswer("A first loop.", kPlainVectorAdd)}},
                     {{"content", ScriptedAnswer("Subtracting is faster.", kWrongVectorAdd)}},
                     {{"content", ScriptedAnswer("Threads and SIMD.", kParallelVectorAdd)}},
                     {{"content", ScriptedAnswer("Threads again, from the first loop.", kParallelVectorAdd)}},
                 })}});
  ASSERT_TRUE(server.ok()) << server.error().message;
  // The person's edit: the wrong subtraction becomes an addition (written differently from
  // candidate 1's, so that it is judged as a kernel of its own).
  const fs::path editor = directory.path() / "editor.sh";
  std::ofstream(editor) << "#!/bin/sh\nsed -i 's/a\\[i\\] - b\\[i\\]/b[i] + a[i]/' \"$1\"\n";
  fs::permissions(editor, fs::perms::owner_all);
  const fs::path db = directory.path() / "runs.db", out = directory.path() / "out";
  const std::string command =
      "cd '" + directory.path().string() + "' && env KSMITH_CACHE_DIR='" + CacheDir().string() +
      "' OPENAI_API_KEY=sk-test-interactive VISUAL= EDITOR='" + editor.string() + "' '" + CliPath().string() +
      "' optimize --interactive --task vector_add --strategy refine --provider openai --base-url " + (*server)->base_url() +
      " --model scripted --db '" + db.string() + "' --output-dir '" + out.string() +
      "' --timing-budget 0.1 --seeds 1 --max-candidates 6 --json > summary.json; echo \"ksmith exited: $?\"; sleep 600";
  TmuxSession tmux(directory.path(), command);
  ASSERT_TRUE(tmux.started()) << "tmux could not start a session";

  // Proposal 1 has no parent: the whole kernel is shown. A constraint, then approve.
  ASSERT_TRUE(tmux.WaitFor("[a]pprove")) << tmux.last();
  EXPECT_NE(tmux.last().find("==== candidate 1 proposed by the coder ===="), std::string::npos) << tmux.last();
  EXPECT_NE(tmux.last().find("Rationale:\n  A first loop."), std::string::npos) << tmux.last();
  tmux.Type("c keep the loop over n");
  ASSERT_TRUE(tmux.WaitFor("constraint added, for every later prompt: keep the loop over n")) << tmux.last();
  tmux.Type("a");
  ASSERT_TRUE(tmux.WaitFor("---- candidate 1: passed")) << tmux.last();

  // Proposal 2 subtracts: its diff against candidate 1 shows it, and the person fixes it.
  ASSERT_TRUE(tmux.WaitFor("==== candidate 2 proposed by the coder, from candidate 1")) << tmux.last();
  EXPECT_NE(tmux.last().find("+  for (int64_t i = 0; i < n; ++i) c[i] = a[i] - b[i];"), std::string::npos) << tmux.last();
  const std::string second = tmux.last().substr(tmux.last().find("==== candidate 2 proposed"));
  EXPECT_NE(second.find("Constraints in every prompt:\n  - keep the loop over n"), std::string::npos) << second;
  tmux.Type("e");
  ASSERT_TRUE(tmux.WaitFor("---- candidate 2: passed")) << tmux.last();

  // Proposal 3 is set aside: the search goes back to candidate 1.
  ASSERT_TRUE(tmux.WaitFor("==== candidate 3 proposed by the coder, from candidate 2")) << tmux.last();
  tmux.Type("r 1");
  ASSERT_TRUE(tmux.WaitFor("the search goes on from candidate 1")) << tmux.last();
  // The next proposal is made from candidate 1; the person stops the run there.
  ASSERT_TRUE(tmux.WaitFor("==== candidate 3 proposed by the coder, from candidate 1")) << tmux.last();
  tmux.Type("s");
  ASSERT_TRUE(tmux.WaitFor("ksmith exited: 0")) << tmux.last();

  // What reached the model: the constraint in every prompt after it, the rollback's kernel.
  const auto requests = (*server)->requests();
  ASSERT_EQ(requests.size(), 4u);
  EXPECT_EQ(requests[0]["body"].dump().find("keep the loop over n"), std::string::npos);
  for (size_t i = 1; i < 4; ++i) EXPECT_NE(requests[i]["body"].dump().find("- keep the loop over n"), std::string::npos) << i;
  EXPECT_NE(requests[2]["body"].dump().find("(The person running this search edited this kernel before it was judged"),
            std::string::npos);
  EXPECT_NE(requests[3]["body"].dump().find("The person running this search rolled back to candidate 1"), std::string::npos);

  const nlohmann::json summary = nlohmann::json::parse(Slurp(directory.path() / "summary.json"), nullptr, false);
  ASSERT_TRUE(summary.is_object()) << Slurp(directory.path() / "summary.json");
  EXPECT_EQ(summary["status"], "finished");
  EXPECT_EQ(summary["stop_reason"], "the person stopped the run");

  const CliResult shown = RunKsmith({"runs", "show", summary["run_id"], "--db", db.string(), "--json"});
  ASSERT_EQ(shown.exit_code, 0) << shown.Describe();
  const auto json = shown.Json();
  const auto& candidates = json["candidates_list"];
  ASSERT_EQ(candidates.size(), 2u) << "the set-aside proposals are calls, never candidates";
  EXPECT_EQ(candidates[0]["origin"], "llm");
  EXPECT_EQ(candidates[1]["origin"], "edited");
  EXPECT_EQ(candidates[1]["status"], "passed");
  EXPECT_EQ(candidates[1]["parent"], 1);
  const auto& interventions = json["interventions"];
  ASSERT_EQ(interventions.size(), 5u) << interventions.dump();
  const std::vector<std::string> actions = {"constrain", "approve", "edit", "rollback", "stop"};
  for (size_t i = 0; i < actions.size(); ++i) EXPECT_EQ(interventions[i]["action"], actions[i]) << i;
  EXPECT_EQ(interventions[0]["detail"]["constraint"], "keep the loop over n");
  EXPECT_EQ(interventions[1]["candidate"], 1);
  EXPECT_EQ(interventions[2]["candidate"], 2);
  EXPECT_NE(interventions[2]["detail"]["diff"].get<std::string>().find("+  for (int64_t i = 0; i < n; ++i) c[i] = b[i] + a[i];"),
            std::string::npos)
      << interventions[2].dump();
  EXPECT_EQ(interventions[3]["detail"]["to_candidate"], 1);
  EXPECT_EQ(interventions[3]["after_candidate"], 2);
  EXPECT_NE(interventions[4]["detail"]["set_aside"].get<std::string>().find("omp parallel"), std::string::npos);

  const std::string report = Slurp(summary["report"].get<std::string>());
  EXPECT_NE(report.find("## The person's decisions"), std::string::npos) << report;
  EXPECT_NE(report.find("- after candidate 1: candidate 2 edited before it was judged (+1 -1 lines)"), std::string::npos)
      << report;
  EXPECT_NE(report.find("- after candidate 2: rolled back to candidate 1"), std::string::npos) << report;
}

}  // namespace
}  // namespace ksmith::it
