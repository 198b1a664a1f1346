// The differential table tests/probe_table/ftrace_probe_defs.tsv (issue 12)
// on the host: every row whose ktrack verdict depends only on the spec (and
// a few well-known symbols, given here by a fake symbol table) is compiled
// through the library, without BTF, and must get the table's verdict.  Rows
// that need the real kernel (BTF, its symbols, its tracepoints) are checked
// in the VM by tests/kernel/probe_table.sh, which also checks the ftrace
// column against 6.12's ftrace.
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "probes/probe_batch.hpp"
#include "probes/probe_spec.hpp"

using namespace ktrack;

namespace {

const char *const kTable = KTRACK_SOURCE_DIR "/tests/probe_table/ftrace_probe_defs.tsv";

// The functions, data and tracepoints the table names, as on 6.1 and 6.12.
class TableSymbols : public SymbolSource {
 public:
  std::vector<uint64_t> lookup(const std::string &module, const std::string &name) override {
    if (!module.empty()) return {};
    for (size_t i = 0; i < kKnown.size(); i++)
      if (name == kKnown[i]) return {0xffffffff81000000 + i * 0x100};
    return {};
  }
  std::vector<std::string> filter_functions() override {
    return {"vfs_read",     "vfs_write",   "vfs_open", "kfree",
            "kernel_clone", "do_sys_open", "dput",     "inet_csk_accept"};
  }
  bool tracepoint_exists(const std::string &subsys, const std::string &event) override {
    if (event == "kfree") return subsys.empty() || subsys == "kmem";
    if (event == "sched_switch" || event == "sched_wakeup") return subsys.empty() || subsys == "sched";
    return false;
  }
  std::vector<std::string> aliases(const std::string &) override { return {}; }

 private:
  const std::vector<std::string> kKnown = {"vfs_read",     "vfs_write",         "vfs_open", "kfree",
                                           "kernel_clone", "do_sys_open",       "dput",     "inet_csk_accept",
                                           "jiffies",      "linux_proc_banner", "do_exit"};
};

struct Row {
  int line = 0;
  std::string ftrace, fverdict, ktrack, kverdict, needs, why;
};

std::vector<Row> read_table() {
  std::ifstream in(kTable);
  EXPECT_TRUE(in) << "cannot read " << kTable;
  std::vector<Row> rows;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    n++;
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> col;
    std::stringstream ss(line);
    std::string c;
    while (std::getline(ss, c, '\t')) col.push_back(c);
    if (col.size() == 5) col.emplace_back();
    EXPECT_EQ(6u, col.size()) << kTable << ":" << n << ": want 6 TAB-separated columns";
    if (col.size() != 6) continue;
    rows.push_back({n, col[0], col[1], col[2], col[3], col[4], col[5]});
  }
  return rows;
}

bool valid_verdict(const std::string &v) {
  if (v == "ok") return true;
  if (v.rfind("error@", 0) != 0 || v.size() == 6) return false;
  return v.find_first_not_of("0123456789", 6) == std::string::npos;
}

}  // namespace

// Every row is well formed, and a row whose verdicts (or carets) differ says why.
TEST(ProbeTable, RowsAreWellFormedAndDifferencesJustified) {
  auto rows = read_table();
  EXPECT_GE(rows.size(), 150u) << "the table must have at least 150 rows";
  for (const auto &r : rows) {
    SCOPED_TRACE(testing::Message() << kTable << ":" << r.line);
    EXPECT_FALSE(r.ftrace == "-" && r.ktrack == "-");
    if (r.ftrace != "-") {
      EXPECT_TRUE(valid_verdict(r.fverdict)) << r.fverdict;
    }
    if (r.ktrack != "-") {
      EXPECT_TRUE(valid_verdict(r.kverdict)) << r.kverdict;
    }
    EXPECT_TRUE(r.needs == "-" || r.needs == "btf" || r.needs == "kernel") << r.needs;
    if (r.ftrace != "-" && r.ktrack != "-" && r.fverdict != r.kverdict) {
      EXPECT_FALSE(r.why.empty()) << "'" << r.ktrack << "': ftrace " << r.fverdict << ", ktrack "
                                  << r.kverdict << ": the why column must say why";
    }
  }
}

// The rows that do not need the real kernel, through the library.
TEST(ProbeTable, KtrackVerdictsOnTheHost) {
  auto rows = read_table();
  TableSymbols syms;
  ProbeCompiler pc(syms, "the host test runs without BTF");
  size_t checked = 0;
  for (const auto &r : rows) {
    if (r.ktrack == "-" || r.needs != "-") continue;
    ProbeVerdict v = probe_verdict(pc, r.ktrack);
    std::string got = v.ok ? "ok" : v.has_pos ? "error@" + std::to_string(v.pos) : "error@-";
    EXPECT_EQ(r.kverdict, got) << kTable << ":" << r.line << ": '" << r.ktrack << "': " << format_verdict(v);
    checked++;
  }
  std::cout << "[ probe table ] checked " << checked << " of " << rows.size()
            << " rows on the host (the others need the kernel: tests/kernel/probe_table.sh)\n";
  RecordProperty("rows_checked", (int)checked);
  EXPECT_GE(checked, 120u) << "too few host-checkable rows: the table lost its syntax rows?";
}

// The batch loop: one verdict line per input line, in order.
TEST(ProbeTable, BatchPrintsOneVerdictPerLine) {
  TableSymbols syms;
  ProbeCompiler pc(syms);
  std::istringstream in("p vfs_read\np vfs_read $foo\n\nr:x kfree ret=$retval\n");
  std::ostringstream out;
  EXPECT_EQ(2u, compile_batch(pc, in, out));
  EXPECT_EQ(
      "ok p_vfs_read_0\n"
      "error 11 unknown variable: use $argN, $retval, $duration, $stackN, $comm or $cpu\n"
      "error 0 empty probe: expected p, r, f, t, e, u or ur\n"
      "ok x\n",
      out.str());
}
