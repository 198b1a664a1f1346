// Graph scoping on the host: --graph/--depth parsing (the library's checks
// and ktrackctl's refusals before anything is opened), the blob flags of
// root and scoped probes, and the static callee closure over a synthetic
// kernel text (probes/graph_scope.hpp).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <limits.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>

#include "host/kallsyms.hpp"
#include "ktrackctl_path.hpp"
#include "probes/graph_scope.hpp"
#include "probes/probe_spec.hpp"
#include "util/error.hpp"

namespace fs = std::filesystem;
using namespace ktrack;

namespace {

TEST(GraphScope, FuncAndDepthAreChecked) {
  EXPECT_NO_THROW(check_graph_scope("vfs_read", 1));
  EXPECT_NO_THROW(check_graph_scope("ext4:ext4_file_read_iter", KTRACK_GRAPH_MAX_DEPTH));
  EXPECT_THROW(check_graph_scope("vfs_read", 0), UsageError);
  EXPECT_THROW(check_graph_scope("vfs_read", KTRACK_GRAPH_MAX_DEPTH + 1), UsageError);
  EXPECT_THROW(check_graph_scope("vfs_*", 2), UsageError);
  EXPECT_THROW(check_graph_scope("", 2), UsageError);
  EXPECT_THROW(check_graph_scope("ext4:", 2), UsageError);
  EXPECT_THROW(check_graph_scope(":vfs_read", 2), UsageError);
  EXPECT_THROW(check_graph_scope("vfs_read%both", 2), UsageError);
  try {
    check_graph_scope("vfs_read", 65);
  } catch (const UsageError &e) {
    EXPECT_STREQ("--depth 65: give 1..64 (calls below the root)", e.what());
  }
  EXPECT_EQ("f:graph_root vfs_read%both", graph_root_spec("vfs_read"));
  EXPECT_EQ("f:graph_root ext4:ext4_read%both", graph_root_spec("ext4:ext4_read"));
}

ktrack_probe_desc desc_of(const ProbeSpec &spec) {
  auto blob = compile_probe(spec);
  ktrack_probe_desc d;
  std::memcpy(&d, blob.data(), sizeof(d));
  return d;
}

TEST(GraphScope, RootAndScopedFlagsReachTheBlob) {
  ProbeSpec root = parse_probe_spec(graph_root_spec("vfs_read"));
  root.funcs = {"vfs_read"};
  mark_graph_root(root);
  auto d = desc_of(root);
  EXPECT_EQ(KTRACK_PROBE_F_ENTRY | KTRACK_PROBE_F_EXIT | KTRACK_PROBE_F_GRAPH_ROOT, d.flags);
  EXPECT_EQ(0u, d.graph_depth);

  ProbeSpec f = parse_probe_spec("f:t a,b x=$arg1:s32");  // entries only as written
  f.funcs = {"a", "b"};
  ASSERT_TRUE(mark_graph_scoped(f, 3));
  d = desc_of(f);
  EXPECT_EQ(KTRACK_PROBE_F_ENTRY | KTRACK_PROBE_F_EXIT | KTRACK_PROBE_F_GRAPH_SCOPED, d.flags);
  EXPECT_EQ(3u, d.graph_depth);

  ProbeSpec p = parse_probe_spec("p:x vfs_read");
  EXPECT_FALSE(mark_graph_scoped(p, 3));
  d = desc_of(p);
  EXPECT_EQ(0u, d.flags);
  EXPECT_EQ(0u, d.graph_depth);
  // without --graph nothing changes
  ProbeSpec plain = parse_probe_spec("f:t a%both");
  plain.funcs = {"a"};
  EXPECT_EQ(KTRACK_PROBE_F_ENTRY | KTRACK_PROBE_F_EXIT, desc_of(plain).flags);
  EXPECT_EQ(0u, desc_of(plain).graph_depth);
}

// ---- the callee decoder --------------------------------------------------------

constexpr uint64_t kBase = 0xffffffff81000000ULL;

// Writes `call target` (e8 rel32) at 'code[off]', code starting at 'at'.
void put_call(std::vector<uint8_t> &code, size_t off, uint64_t at, uint64_t target) {
  if (code.size() < off + 5) code.resize(off + 5, 0x90);
  code[off] = 0xe8;
  int32_t rel = (int32_t)(int64_t)(target - (at + off + 5));
  std::memcpy(&code[off + 1], &rel, 4);
}

TEST(GraphScope, DirectCallTargetsOfABuffer) {
  std::vector<uint8_t> code(4, 0x90);
  put_call(code, 4, kBase, kBase + 0x100);   // forward
  put_call(code, 9, kBase, kBase - 0x40);    // backward
  put_call(code, 14, kBase, kBase + 0x100);  // the same again: once
  code.push_back(0xff);                      // call *%rax: not followed
  code.push_back(0xd0);
  code.push_back(0xe8);  // a truncated call at the end: ignored
  code.push_back(0x01);
  auto t = direct_call_targets(code, kBase);
  ASSERT_EQ(2u, t.size());
  EXPECT_EQ(kBase + 0x100, t[0]);
  EXPECT_EQ(kBase - 0x40, t[1]);
  EXPECT_TRUE(direct_call_targets({}, kBase).empty());
}

struct Text {
  std::map<uint64_t, std::vector<uint8_t>> code;  // function start -> bytes
  std::vector<uint8_t> read(uint64_t addr, size_t len) const {
    auto it = code.find(addr);
    if (it == code.end()) return {};
    auto b = it->second;
    b.resize(std::min(len, b.size()));
    return b;
  }
};

// root -> __fentry__, child, notrace_fn, a thunk, child+4 (no function
// start), root (recursion); child -> grand, modfn [mymod]; grand -> other.
struct Synthetic {
  KallsymsIndex syms{fmt_syms()};
  std::vector<std::string> traceable{"root", "child", "grand", "other", "modfn [mymod]", "end"};
  Text text;

  static std::string fmt_syms() {
    return "ffffffff81000000 T root\n"
           "ffffffff81000040 T child\n"
           "ffffffff81000080 T grand\n"
           "ffffffff810000c0 T __fentry__\n"
           "ffffffff81000100 T notrace_fn\n"
           "ffffffff81000140 T __x86_indirect_thunk_rax\n"
           "ffffffff81000180 T other\n"
           "ffffffff810001c0 t modfn\t[mymod]\n"
           "ffffffff81000200 T end\n"
           "ffffffff81000240 D some_data\n";
  }
  Synthetic() {
    auto &r = text.code[kBase];
    put_call(r, 0, kBase, kBase + 0xc0);
    put_call(r, 5, kBase, kBase + 0x40);
    put_call(r, 10, kBase, kBase + 0x100);
    put_call(r, 15, kBase, kBase + 0x140);
    put_call(r, 20, kBase, kBase + 0x44);
    put_call(r, 25, kBase, kBase);
    auto &c = text.code[kBase + 0x40];
    put_call(c, 0, kBase + 0x40, kBase + 0x80);
    put_call(c, 5, kBase + 0x40, kBase + 0x1c0);
    put_call(c, 10, kBase + 0x40, kBase);
    auto &g = text.code[kBase + 0x80];
    put_call(g, 0, kBase + 0x80, kBase + 0x180);
  }
  CalleeSet callees(const std::string &func, uint32_t depth) {
    return graph_callees(syms, traceable, func, depth,
                         [this](uint64_t a, size_t n) { return text.read(a, n); });
  }
};

TEST(GraphScope, CalleeClosureByDepth) {
  Synthetic s;
  auto c1 = s.callees("root", 1);
  EXPECT_EQ(1u, c1.nr_funcs);
  EXPECT_FALSE(c1.capped);
  EXPECT_EQ(std::vector<std::string>{"f:graph_callees child"}, c1.specs);
  EXPECT_EQ(std::vector<std::string>{"child"}, c1.targets);

  auto c2 = s.callees("root", 2);
  EXPECT_EQ(3u, c2.nr_funcs);
  EXPECT_EQ((std::vector<std::string>{"f:graph_callees child,grand", "f:graph_callees1 mymod:modfn"}),
            c2.specs);

  auto c3 = s.callees("root", 3);
  EXPECT_EQ(4u, c3.nr_funcs);
  EXPECT_EQ((std::vector<std::string>{"f:graph_callees child,grand,other", "f:graph_callees1 mymod:modfn"}),
            c3.specs);
  // from the child: the root is a callee like any other
  auto cc = s.callees("child", 1);
  EXPECT_EQ((std::vector<std::string>{"f:graph_callees grand,root", "f:graph_callees1 mymod:modfn"}),
            cc.specs);
  // a module function, with or without its module
  EXPECT_EQ(std::vector<std::string>{}, s.callees("mymod:modfn", 2).specs);
  EXPECT_EQ(0u, s.callees("modfn", 2).nr_funcs);
  EXPECT_THROW(s.callees("nosuch", 2), UsageError);
  EXPECT_THROW(s.callees("some_data", 2), UsageError);
}

TEST(GraphScope, CalleeClosureIsCapped) {
  // root calls f0..f1099, each a traceable function
  std::string syms = "ffffffff81000000 T root\n";
  std::vector<std::string> traceable{"root"};
  Text text;
  auto &r = text.code[kBase];
  for (int i = 0; i < 1100; i++) {
    uint64_t a = kBase + 0x10000 + 0x10 * (uint64_t)i;
    syms += fmt::format("{:x} T f{}\n", a, i);
    traceable.push_back(fmt::format("f{}", i));
    put_call(r, 5 * (size_t)i, kBase, a);
  }
  KallsymsIndex idx(syms);
  auto c = graph_callees(idx, traceable, "root", 1, [&](uint64_t a, size_t n) { return text.read(a, n); });
  EXPECT_TRUE(c.capped);
  EXPECT_EQ((size_t)KTRACK_PROBE_MAX_FUNCS, c.nr_funcs);
}

// ---- ktrackctl refuses bad options before opening anything --------------------

std::string ktrackctl() { return ktrackctl_path(); }

// Runs ktrackctl ARGS; returns its exit status, stderr in 'err'.
int run(const std::string &args, std::string &err) {
  std::string cmd = ktrackctl() + " " + args + " 2>&1 >/dev/null";
  FILE *p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  err.clear();
  char buf[512];
  while (fgets(buf, sizeof(buf), p)) err += buf;
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(GraphScope, CliRefusesBadOptions) {
  std::string err;
  EXPECT_EQ(1, run("record -o /dev/null --depth 2 'f:t vfs_read' -- true", err));
  EXPECT_NE(std::string::npos, err.find("--depth needs --graph FUNC")) << err;
  EXPECT_EQ(1, run("record -o /dev/null --graph vfs_read --depth 0 'f:t vfs_read' -- true", err));
  EXPECT_NE(std::string::npos, err.find("--depth 0: give 1..64")) << err;
  EXPECT_EQ(1, run("trace --graph vfs_read --depth 65 'f:t vfs_read' -- true", err));
  EXPECT_NE(std::string::npos, err.find("--depth 65: give 1..64")) << err;
  EXPECT_EQ(1, run("trace --graph 'vfs_*' 'f:t vfs_read' -- true", err));
  EXPECT_NE(std::string::npos, err.find("give one function, FUNC or MOD:FUNC")) << err;
  EXPECT_NE(0, run("trace --graph vfs_read --depth x 'f:t vfs_read' -- true", err));
}

TEST(GraphScope, ProbeNamesAreValidAndUnique) {
  EXPECT_EQ("vfs_read", graph_probe_name("vfs_read", 3));
  EXPECT_EQ("_foo_isra_0_3", graph_probe_name("foo.isra.0", 3));
  const std::string longname(40, 'a');
  const std::string a = graph_probe_name(longname, 7), b = graph_probe_name(longname, 12);
  EXPECT_LT(a.size(), size_t{KTRACK_PROBE_NAME_MAX});
  EXPECT_LT(b.size(), size_t{KTRACK_PROBE_NAME_MAX});
  EXPECT_NE(a, b);
}

}  // namespace
