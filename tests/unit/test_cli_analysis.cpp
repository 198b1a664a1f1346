// ktrackctl hist|profile|graph|top|stack|export|completion|man as a user
// runs them: exit codes, --help examples, colour, JSON, damaged files.
#include <gtest/gtest.h>
#include <limits.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <fstream>

#include "analysis_fixture.hpp"
#include "json_mini.hpp"
#include "ktrackctl_path.hpp"
#include "synth_trace.hpp"

namespace fs = std::filesystem;

namespace {

struct Result {
  int rc = -1;
  std::string out, err;
};

std::string ktrackctl() { return ktrackctl_path(); }

Result run(const std::string &args) {
  static int seq = 0;
  std::string errf = fs::temp_directory_path() /
                     ("ktrack-cli-err-" + std::to_string(getpid()) + "-" + std::to_string(seq++));
  std::string cmd = ktrackctl() + " " + args + " 2>" + errf;
  Result r;
  FILE *p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 65536> buf;
  size_t got;
  while ((got = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), got);
  int st = pclose(p);
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::ifstream e(errf);
  r.err.assign(std::istreambuf_iterator<char>(e), {});
  fs::remove(errf);
  return r;
}

class Cli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    file_ = new std::string(fs::temp_directory_path() / ("ktrack-cli-" + std::to_string(getpid()) + ".ktr"));
    ktrack::analysis::SynthOptions o;
    o.records = 20000;
    o.cpus = 2;
    o.lost_every = 3000;
    ktrack::analysis::write_synthetic_trace(*file_, o);
  }
  static void TearDownTestSuite() {
    fs::remove(*file_);
    delete file_;
  }
  void SetUp() override { ASSERT_TRUE(fs::exists(ktrackctl())) << "build ktrackctl first: " << ktrackctl(); }
  static std::string *file_;
};
std::string *Cli::file_;

}  // namespace

TEST_F(Cli, HelpHasExamplesForEverySubcommand) {
  for (const char *sub : {"hist", "profile", "graph", "top", "stack", "export", "completion", "man"}) {
    Result r = run(std::string(sub) + " --help");
    EXPECT_EQ(r.rc, 0) << sub;
    EXPECT_NE(r.out.find("Examples:\n  "), std::string::npos) << sub << "\n" << r.out;
  }
}

TEST_F(Cli, ExitCodes) {
  EXPECT_EQ(run("hist").rc, 1);                                   // FILE missing
  EXPECT_EQ(run("hist " + *file_ + " --no-such-flag").rc, 1);     // unknown flag
  EXPECT_EQ(run("hist " + *file_ + " --color=sometimes").rc, 1);  // bad value
  Result w = run("hist " + *file_ + " --where 'len >> 3'");
  EXPECT_EQ(w.rc, 1);
  EXPECT_NE(w.err.find("column 6"), std::string::npos) << w.err;
  Result f = run("hist " + *file_ + " -f nosuchfield");
  EXPECT_EQ(f.rc, 1);
  EXPECT_NE(f.err.find("no field named 'nosuchfield'"), std::string::npos) << f.err;
  Result m = run("profile /nonexistent/trace.ktr");
  EXPECT_EQ(m.rc, 2);
  EXPECT_NE(m.err.find("cannot read /nonexistent/trace.ktr: No such file or directory"), std::string::npos)
      << m.err;
  EXPECT_EQ(run("profile " + *file_).rc, 0);
}

TEST_F(Cli, ViewsPrintTheExpectedFunctions) {
  Result h = run("hist " + *file_ + " -e fgraph");
  EXPECT_EQ(h.rc, 0) << h.err;
  EXPECT_NE(h.out.find("@[vfs_read]: $duration (ns)\ncount "), std::string::npos);
  EXPECT_NE(h.out.find("lost "), std::string::npos);
  EXPECT_EQ(h.out.find('\033'), std::string::npos);  // not a terminal: no colour

  Result hc = run("hist " + *file_ + " --color=always -f len -k comm");
  EXPECT_NE(hc.out.find("\033[32m@"), std::string::npos);
  EXPECT_NE(hc.out.find("@[worker1]"), std::string::npos);

  Result hj = run("hist " + *file_ + " --json -f len --linear 0,65536,8192");
  ASSERT_EQ(hj.rc, 0) << hj.err;
  size_t groups = 0;
  for (const auto &l : fixture::lines(hj.out)) {
    json_mini::Value v = json_mini::parse(l);
    if (v.has("lost")) continue;
    ++groups;
    EXPECT_EQ(v["buckets"].arr.size(), 8u) << l;
  }
  EXPECT_EQ(groups, 1u);

  Result p = run("profile " + *file_ + " --sort hits -n 3 --callers");
  EXPECT_EQ(p.rc, 0) << p.err;
  EXPECT_NE(p.out.find("<- entry_SYSCALL_64"), std::string::npos) << p.out;

  Result g = run("graph " + *file_ + " -p 1001");
  EXPECT_EQ(g.rc, 0) << g.err;
  EXPECT_NE(g.out.find("worker1-1001"), std::string::npos);
  EXPECT_EQ(g.out.find("worker0-1000 "), std::string::npos);
  EXPECT_NE(g.out.find("() {"), std::string::npos);
  EXPECT_NE(g.out.find("} /* "), std::string::npos);
  // The synthetic file starts at 1.000000 s: --since/--until are relative to it.
  Result gt = run("graph " + *file_ + " --since 1ms --until 2ms --abstime");
  size_t timed = 0;
  for (const auto &l : fixture::lines(gt.out)) {
    if (l.empty() || l[0] == '#' || l.find(") ==") != std::string::npos ||
        l.find("-----") != std::string::npos || l.find("=>") != std::string::npos)
      continue;
    double ts = std::stod(l);
    EXPECT_GE(ts, 1.001) << l;
    EXPECT_LE(ts, 1.002) << l;
    ++timed;
  }
  EXPECT_GT(timed, 100u);

  Result t = run("top " + *file_ + " --once --rows 5");
  EXPECT_EQ(t.rc, 0) << t.err;
  EXPECT_NE(t.out.find("RATE/s"), std::string::npos);
  size_t rows = 0;
  for (const auto &l : fixture::lines(t.out)) rows += l.find(" fgraph") != std::string::npos;
  EXPECT_EQ(rows, 5u) << t.out;
  Result t2 = run("top " + *file_ + " -i 1ms -n 2 --json");
  EXPECT_EQ(fixture::lines(t2.out).size(), 2u) << t2.out;

  Result s = run("stack " + *file_ + " --folded");
  EXPECT_EQ(s.rc, 0) << s.err;
  EXPECT_NE(s.out.find("entry_SYSCALL_64;"), std::string::npos);

  std::string json = fs::temp_directory_path() / ("ktrack-cli-" + std::to_string(getpid()) + ".json");
  Result e = run("export " + *file_ + " -o " + json + " -C 0");
  EXPECT_EQ(e.rc, 0) << e.err;
  std::ifstream in(json);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  json_mini::Value v = json_mini::parse(text);
  size_t calls = 0, counters = 0;
  for (const auto &ev : v["traceEvents"].arr) {
    if (ev["ph"].str == "X" && ev["cat"].str == "call") ++calls;
    if (ev["ph"].str == "C") ++counters;
    if (ev["ph"].str == "X" && ev["cat"].str == "call") {
      EXPECT_EQ(ev["args"]["cpu"].num, 0);  // -C 0
    }
  }
  EXPECT_GT(calls, 1000u);
  EXPECT_GT(counters, 0u);
  fs::remove(json);
}

TEST_F(Cli, TruncatedFilePrintsWhatItHasThenFails) {
  std::string cut = *file_ + ".cut";
  fs::copy_file(*file_, cut, fs::copy_options::overwrite_existing);
  fs::resize_file(cut, fs::file_size(*file_) - 1000);  // the first 1 MiB chunk survives
  Result g = run("graph " + cut);
  EXPECT_EQ(g.rc, 2);
  EXPECT_NE(g.err.find(cut), std::string::npos) << g.err;
  EXPECT_GT(fixture::lines(g.out).size(), 100u);
  Result p = run("profile " + cut);
  EXPECT_EQ(p.rc, 2);
  fs::remove(cut);
}

TEST_F(Cli, CompletionAndManAreGenerated) {
  Result c = run("completion bash");
  ASSERT_EQ(c.rc, 0);
  EXPECT_NE(c.out.find("complete -F _ktrackctl ktrackctl"), std::string::npos);
  EXPECT_NE(c.out.find("\"hist\")\n      opts=\"--help -s --session --probe -p --pid"), std::string::npos)
      << c.out;
  std::string script = fs::temp_directory_path() / ("ktrack-completion-" + std::to_string(getpid()));
  std::ofstream(script) << c.out;
  // It parses, and completes a subcommand's flags.
  std::string cmd =
      "bash -c 'source " + script +
      " && COMP_WORDS=(ktrackctl profile --ca) && COMP_CWORD=2 && _ktrackctl && echo \"${COMPREPLY[*]}\"'";
  FILE *p = popen(cmd.c_str(), "r");
  char line[256] = {};
  ASSERT_NE(fgets(line, sizeof(line), p), nullptr);
  pclose(p);
  EXPECT_STREQ(line, "--callers\n");
  fs::remove(script);
  Result m = run("man");
  ASSERT_EQ(m.rc, 0);
  EXPECT_EQ(m.out.rfind(".TH KTRACKCTL 1", 0), 0u);
  EXPECT_NE(m.out.find(".SS \"ktrackctl hist\""), std::string::npos);
  EXPECT_NE(m.out.find("\\-\\-linear"), std::string::npos);
  EXPECT_NE(m.out.find(".SH EXIT STATUS"), std::string::npos);
  EXPECT_EQ(run("completion zsh").rc, 1);
}
