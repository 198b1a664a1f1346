// Probe spec parser, caret errors, filter compiler, description compiler and
// BTF resolution (against the host's /sys/kernel/btf/vmlinux).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "fake_lockdown.hpp"
#include "probes/btf_resolver.hpp"
#include "probes/filter_compiler.hpp"
#include "probes/probe_client.hpp"
#include "probes/probe_spec.hpp"

using namespace ktrack;

namespace {

// A fixed symbol table: unit tests never read the host's kallsyms.
class FakeSymbols : public SymbolSource {
 public:
  std::vector<uint64_t> lookup(const std::string &module, const std::string &name) override {
    if (name == "vfs_read" && module.empty()) return {0xffffffff81000000};
    if (name == "dup_sym") return {0x1000, 0x2000};
    if (name == "jiffies") return {0xffffffff82000000};
    if (name == "ktrack_tpt_add" && (module.empty() || module == "ktrack_test_probe_target"))
      return {0xffffffffc0000000};
    return {};
  }
  std::vector<std::string> filter_functions() override {
    return {"vfs_read",
            "vfs_write",
            "vfs_fsync",
            "do_sys_open",
            "vfs_read",
            "kernel_clone",
            "ktrack_tpt_glob_one [ktrack_test_probe_target]"};
  }
  bool tracepoint_exists(const std::string &, const std::string &event) override {
    return event == "sched_process_fork";
  }
  std::vector<std::string> aliases(const std::string &name) override {
    if (name == "__x64_sys_read") return {"__ia32_sys_read", "ksys_read_alias", "vfs_fsync"};
    return {};
  }
};

struct BadSpec {
  const char *spec;
  const char *marker;   // the caret must sit at the first occurrence of this text...
  const char *message;  // ...and the message must contain this
};

// Modelled on ftrace's kprobe_syntax_errors selftest.
const BadSpec kBad[] = {
    {"", "", "empty probe"},
    {"x vfs_read", "x", "unknown probe type"},
    {"p", "", "missing the probe target"},
    {"p:", "", "missing probe name"},
    {"p: vfs_read", " vfs_read", "missing probe name"},
    {"p:9bad vfs_read", "9bad", "C identifier"},
    {"p:/b vfs_read", "/b", "missing group name"},
    {"p:a/ vfs_read", " vfs_read", "missing probe name"},
    {"p:a.1/b vfs_read", "a.1", "group name must be a C identifier"},
    {"p:averyveryveryveryverylongprobename vfs_read", "avery", "too long"},
    {"p5 vfs_read", "5", "MAXACTIVE is only for return probes"},
    {"r0 vfs_read", "0", "MAXACTIVE must be"},
    {"r99999 vfs_read", "99999", "MAXACTIVE must be"},
    {"rx vfs_read", "x", "expected ':NAME'"},
    {"p vfs_read-8", "vfs_read-8", "negative offset"},
    {"p vfs_read+zz", "vfs_read+zz", "bad offset"},
    {"p vfs_r%ead", "%", "unknown suffix"},
    {"p vfs_r-ead", "vfs_r-ead", "negative offset"},
    {"p :vfs_read", ":vfs", "missing module name"},
    {"p mod:", "", "missing symbol"},
    {"p 0xzz", "0xzz", "bad address"},
    {"r vfs_read+8", "vfs_read+8", "return probes go on a function entry"},
    {"p vfs_read+8%return", "vfs_read+8", "return probes go on a function entry"},
    {"r 0xffffffff81000000", "0xf", "return probes need a function symbol"},
    {"p vfs_read +8($arg9):u32", "$arg9", "function arguments are $arg1..$arg6"},
    {"p vfs_read $arg0", "$arg0", "function arguments are $arg1..$arg6"},
    {"p vfs_read $argx", "$argx", "function arguments are"},
    {"p vfs_read $retval", "$retval", "only for return probes"},
    {"p vfs_read $duration", "$duration", "only for return probes"},
    {"f vfs_read $retval", "$retval", "only for return probes"},
    {"p vfs_read $foo", "$foo", "unknown variable"},
    {"p vfs_read %zz", "%zz", "unknown register"},
    {"p vfs_read $arg1:u12", "u12", "unknown type"},
    {"p vfs_read $arg1:foo", "foo", "unknown type"},
    {"p vfs_read $arg1:", "", "missing type"},
    {"p vfs_read $arg1:u32[0]", "0]", "array size must be"},
    {"p vfs_read $arg1:u32[100]", "100]", "array size must be"},
    {"p vfs_read $arg1:u32[4", "", "must end with ']'"},
    {"p vfs_read +0($arg1):u32[4]x", "x", "after ']'"},
    {"p vfs_read $arg1:u32[4]", ":u32[4]", "an array is read from memory"},
    {"p vfs_read +0($arg1):string[2]", "[2]", "strings cannot be arrays"},
    {"p vfs_read +8$arg1", "+8$arg1", "needs parentheses"},
    {"p vfs_read +8($arg1", "", "missing ')'"},
    {"p vfs_read +0(+0($arg1)", ")", "missing ')'"},
    {"p vfs_read +0($arg1)x", "x", "unexpected text after ')'"},
    {"p vfs_read +zz($arg1)", "+zz", "bad dereference offset"},
    {"p vfs_read +0(+0(+0(+0(+0($arg1)))))", "+0(+0(+0(+0($arg1", "nested too deep"},
    {"p vfs_read +0($comm)", "$comm)", "$comm cannot be dereferenced"},
    {"p vfs_read $comm:u32", "u32", "$comm is a string"},
    {"p vfs_read =$arg1", "=$arg1", "missing argument name"},
    {"p vfs_read 1x=$arg1", "1x", "C identifier"},
    {"p vfs_read a=", "", "missing fetch argument"},
    {"p vfs_read a=$arg1 a=$arg2", "a=$arg2", "duplicated argument name"},
    {"p vfs_read @", "", "missing symbol or address"},
    {"p vfs_read @jiffies+zz", "zz", "bad symbol offset"},
    {"p vfs_read 9abc", "9abc", "unknown fetch argument"},
    {"p vfs_read a->", "", "missing member name"},
    {"p vfs_read $$args:u32", "$$args", "stands alone"},
    {"t sched/sched_process_fork %di", "%di", "tracepoint probes have no registers"},
    {"t sched/sched_process_fork $stack0", "$stack0", "no stack"},
    {"t sched/x-y", "x-y", "bad tracepoint event name"},  // 9p/9p_client_req: digits may lead
    {"f vfs_*%foo", "%foo", "unknown suffix"},
    {"f vfs_read,,vfs_write", ",vfs_write", "empty function name"},
    {"f mod:vfs_read:x", ":x", "one module per f probe"},
    {"f m.d:vfs_read", ".d:", "bad character in the module name"},
    {"f :vfs_read", ":vfs", "missing module name"},
    {"f mod:a,,b", ",b", "empty function name"},
    {"p vfs_read a=$arg1 if", "", "'if' needs a condition"},
    {"p vfs_read a=$arg1 if a ==", "", "expected a value"},
    {"p vfs_read a=$arg1 if b == 1", "b ==", "unknown field"},
    {"p vfs_read a=$arg1 if a ~ 1", "~", "'~' (glob) is for strings"},
    {"p vfs_read a=$arg1 if a == \"x\"", "\"x\"", "is a number"},
    {"p vfs_read a=$arg1 if (a == 1", "(a", "missing ')'"},
    {"p vfs_read a=$arg1 if a == 1 b", "b", "unexpected text"},
    {"p vfs_read a=$arg1 if comm < \"x\"", "<", "strings compare with"},
    {"p vfs_read a=$arg1 if a = 1", "= 1", "use == to compare"},
    {"p vfs_read a=$arg1 if comm == \"abc", "\"abc", "unterminated string"},
    {"p vfs_read a=$arg1 if a == 0xzz", "0xzz", "bad number"},
    // Accepted once, and recorded the wrong thing (ftrace refuses each):
    {"p vfs_read @+10", "@+10", "missing symbol: use @SYM[+OFFS]"},
    {"p vfs_read @-8", "@-8", "missing symbol: use @SYM[+OFFS]"},
    {"p vfs_read+8 $arg1", "$arg1", "$argN are only at function entry"},
    {"p vfs_read+8 x=+0($arg2):u8", "$arg2", "$argN are only at function entry"},
    {"p vfs_read+8 $$args", "$$args", "$$args are only at function entry"},
    {"p vfs_read+8 file->f_pos", "file", "argument names are only at function entry"},
    {"p vfs_read %ax:string", "string", "a register holds no string"},
    {"p vfs_read $stack0:string", "string", "a stack slot holds no string"},
    {"f vfs_read %ax", "%ax", "f probes have no registers"},
    {"p vfs_read $$args $arg*", "$arg*", "only once"},
    {"p vfs_read x=$arg*", "$arg*", "stands alone"},
    {"p vfs_read \\x", "x", "bad immediate value"},
    {"p vfs_read \\\"ab", "", "not closed"},
    {"r1a vfs_read", "1a", "bad MAXACTIVE"},
    {"p vfs_read +0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(@0))))))))))))))))", "+0(+0(", "too long"},
    {"p vfs_read a=%di:ustring", "ustring", "a register holds no string"},
    // actions (triggers) after the filter
    {"p vfs_read => halt", "halt", "unknown action 'halt'"},
    {"p vfs_read => stop:0", "0", "must be a count from 1"},
    {"p vfs_read => stop:x", "x", "must be a count from 1"},
    {"p vfs_read => stop:99999999999", "99999999999", "must be a count from 1"},
    {"p vfs_read => stack => stack:2", "stack:2", "given twice"},
    {"p vfs_read =>", "", "needs an action"},
    {"p vfs_read => stop =>", "", "needs an action"},
    {"p vfs_read if => stop", "=> stop", "'if' needs a condition"},
};

// Each spec parses, and resolving it is refused with a message containing msg.
struct Refusal {
  const char *spec, *msg;
};
template <size_t N>
void expect_refusals(SymbolSource &syms, const Refusal (&cases)[N]) {
  for (const auto &c : cases) {
    auto s = parse_probe_spec(c.spec);
    try {
      resolve_symbols(s, syms);
      ADD_FAILURE() << c.spec;
    } catch (const SpecError &e) {
      EXPECT_NE(std::string::npos, e.message().find(c.msg)) << c.spec << ": " << e.message();
    }
  }
}

}  // namespace

// At an offset, registers, the stack and memory are still there.
TEST(ProbeSpec, KprobeAtOffsetFetchesRegistersAndMemory) {
  auto s = parse_probe_spec("p vfs_read+0x10 a=%di b=+0(%si):string c=$stack1 d=@jiffies");
  EXPECT_EQ(16u, s.offset);
  ASSERT_EQ(4u, s.args.size());
  EXPECT_EQ(KTRACK_FETCH_SRC_REG, s.args[0].src);
  EXPECT_EQ(KTRACK_FETCH_T_STRING, s.args[1].type);
}

TEST(ProbeSpec, MalformedSpecsGetMessageAndCaret) {
  ASSERT_GE(sizeof(kBad) / sizeof(kBad[0]), 40u);
  for (const auto &b : kBad) {
    std::string spec = b.spec;
    try {
      parse_probe_spec(spec);
      ADD_FAILURE() << "accepted: " << spec;
    } catch (const SpecError &e) {
      size_t want = *b.marker ? spec.find(b.marker) : spec.size();
      ASSERT_NE(std::string::npos, want) << spec;
      EXPECT_EQ(want, e.pos()) << spec << " -> " << e.what();
      EXPECT_NE(std::string::npos, e.message().find(b.message)) << spec << " -> " << e.message();
      // the rendering: message, the spec, a caret under the character
      std::string text = e.what();
      EXPECT_NE(std::string::npos, text.find("\n  " + spec + "\n  " + std::string(e.pos(), ' ') + "^"))
          << text;
    }
  }
}

TEST(ProbeSpec, ActionsAfterTheFilter) {
  auto s = parse_probe_spec("r:bad mydrv:mydrv_submit ret=$retval:s32 if ret < 0 => stop");
  EXPECT_EQ("ret < 0", s.filter);
  ASSERT_EQ(1u, s.actions.size());
  EXPECT_EQ(KTRACK_ACT_STOP, s.actions[0].type);
  EXPECT_EQ(0u, s.actions[0].count);
  // several, with counts, with or without a second '=>'; no filter
  auto m = parse_probe_spec("p vfs_read a=$arg1 => stop:3 stack:10 => start");
  EXPECT_TRUE(m.filter.empty());
  ASSERT_EQ(1u, m.args.size());
  ASSERT_EQ(3u, m.actions.size());
  EXPECT_EQ(KTRACK_ACT_STOP, m.actions[0].type);
  EXPECT_EQ(3u, m.actions[0].count);
  EXPECT_EQ(KTRACK_ACT_STACK, m.actions[1].type);
  EXPECT_EQ(10u, m.actions[1].count);
  EXPECT_EQ(KTRACK_ACT_START, m.actions[2].type);
  EXPECT_STREQ("stack", action_name(KTRACK_ACT_STACK));
  // "=>" inside a quoted string is the filter's
  auto q = parse_probe_spec("p vfs_read if comm == \"a=>b\" => stack");
  EXPECT_EQ("comm == \"a=>b\"", q.filter);
  ASSERT_EQ(1u, q.actions.size());
}

TEST(ProbeCompiler, ActionsGoToTheKernel) {
  FakeSymbols syms;
  auto s = parse_probe_spec("f:x vfs_read,vfs_write a=$arg1:u8 if a == 1 => stop:2 stack");
  resolve_symbols(s, syms);
  auto blob = compile_probe(s);
  ASSERT_EQ(0u, blob.size() % 8);
  ktrack_probe_desc d;
  std::memcpy(&d, blob.data(), sizeof(d));
  ASSERT_EQ(2, d.nr_actions);
  EXPECT_EQ(0u, d.actions_off % 8);
  ASSERT_LE(d.actions_off + 2 * sizeof(ktrack_probe_action), blob.size());
  ktrack_probe_action a[2];
  std::memcpy(a, blob.data() + d.actions_off, sizeof(a));
  EXPECT_EQ(KTRACK_ACT_STOP, a[0].type);
  EXPECT_EQ(2u, a[0].count);
  EXPECT_EQ(KTRACK_ACT_STACK, a[1].type);
  EXPECT_EQ(0u, a[1].count);
  EXPECT_EQ(0, a[0].__pad);
  // none: no section
  auto n = parse_probe_spec("p vfs_read");
  resolve_symbols(n, syms);
  auto nb = compile_probe(n);
  std::memcpy(&d, nb.data(), sizeof(d));
  EXPECT_EQ(0, d.nr_actions);
  EXPECT_EQ(0u, d.actions_off);
}

TEST(ProbeSpec, KprobeFullForm) {
  auto s = parse_probe_spec("p:myp mod-x:func a=$arg1:s32 b=+8(+16(%di)):u16 c=$comm d=@jiffies+8 e=$stack2");
  EXPECT_EQ(ProbeKind::kKprobe, s.kind);
  EXPECT_EQ("myp", s.name);
  EXPECT_EQ("mod_x", s.module);
  EXPECT_EQ("func", s.symbol);
  EXPECT_EQ(0u, s.offset);
  ASSERT_EQ(5u, s.args.size());
  EXPECT_EQ(KTRACK_FETCH_SRC_ARG, s.args[0].src);
  EXPECT_EQ(1, s.args[0].param);
  EXPECT_EQ(KTRACK_FETCH_T_S, s.args[0].type);
  EXPECT_EQ(4, s.args[0].size);
  EXPECT_EQ(KTRACK_FETCH_SRC_REG, s.args[1].src);
  EXPECT_EQ(112, s.args[1].param);  // offsetof(struct pt_regs, di)
  EXPECT_EQ((std::vector<int32_t>{16, 8}), s.args[1].deref);
  EXPECT_EQ(KTRACK_FETCH_T_STRING, s.args[2].type);
  EXPECT_EQ("jiffies", s.args[3].symbol);
  EXPECT_EQ((std::vector<int32_t>{8}), s.args[3].deref);
  EXPECT_EQ(KTRACK_FETCH_SRC_STACK, s.args[4].src);
  EXPECT_EQ(2, s.args[4].param);
}

TEST(ProbeSpec, DefaultNamesAndTypes) {
  auto p = parse_probe_spec("p vfs_read $arg2 %ax +0($arg1):u8");
  EXPECT_EQ("p_vfs_read_0", p.name);
  EXPECT_EQ("arg2", p.args[0].name);
  EXPECT_EQ("ax", p.args[1].name);
  EXPECT_EQ("arg3", p.args[2].name);
  EXPECT_EQ(KTRACK_FETCH_T_X, p.args[0].type);
  EXPECT_EQ(8, p.args[0].size);
  auto r = parse_probe_spec("r16 vfs_read $retval $duration");
  EXPECT_EQ("r_vfs_read_0", r.name);
  EXPECT_EQ(16u, r.maxactive);
  EXPECT_EQ("retval", r.args[0].name);
  EXPECT_EQ(KTRACK_FETCH_T_U, r.args[1].type);
  auto f = parse_probe_spec("f vfs_*%return $retval");
  EXPECT_TRUE(f.exit);
  EXPECT_FALSE(f.entry);
  EXPECT_EQ("vfs____exit", f.name);
  auto b = parse_probe_spec("f:both vfs_read,vfs_write%both");
  EXPECT_TRUE(b.entry && b.exit);
  EXPECT_EQ((std::vector<std::string>{"vfs_read", "vfs_write"}), b.patterns);
  auto t = parse_probe_spec("t sched/sched_process_fork $arg1 $arg2");
  EXPECT_EQ("sched_process_fork", t.name);
  EXPECT_EQ("sched", t.subsys);
}

TEST(ProbeSpec, ResolveSymbolsGlobsAndUniqueness) {
  FakeSymbols syms;
  auto f = parse_probe_spec("f vfs_*");
  resolve_symbols(f, syms);
  EXPECT_EQ((std::vector<std::string>{"vfs_fsync", "vfs_read", "vfs_write"}), f.funcs);
  auto m = parse_probe_spec("f ktrack_tpt_glob_*");
  resolve_symbols(m, syms);
  EXPECT_EQ((std::vector<std::string>{"ktrack_tpt_glob_one"}), m.funcs);
  auto a = parse_probe_spec("p vfs_read g=@jiffies:u64");
  resolve_symbols(a, syms);
  EXPECT_EQ((int64_t)0xffffffff82000000, a.args[0].param);
  auto pending = parse_probe_spec("p not_loaded_mod:fn");
  EXPECT_NO_THROW(resolve_symbols(pending, syms));
  // an alias missing from available_filter_functions attaches the traceable
  // name at its address (the first one ftrace lists), on every kernel
  auto alias = parse_probe_spec("f __x64_sys_read");
  resolve_symbols(alias, syms);
  EXPECT_EQ((std::vector<std::string>{"vfs_fsync"}), alias.funcs);
  const Refusal bad[] = {{"p nosuch", "symbol not found"},
                         {"p dup_sym", "is not unique"},
                         {"f nomatch_*", "no traceable function matches"},
                         {"f not_traceable", "not a function ftrace can attach to"},
                         {"t sched/nosuch", "no such tracepoint"},
                         {"p vfs_read @nosuch", "symbol not found"}};
  expect_refusals(syms, bad);
}

// t [MOD:][SUBSYS/]EVENT: a module's tracepoint, pending when the module is
// not loaded, refused with the closest names when it exists nowhere.
class TracepointSymbols : public FakeSymbols {
 public:
  std::vector<uint64_t> lookup(const std::string &module, const std::string &name) override {
    if (module == "mydrv" && name == "__tracepoint_mydrv_done") return {0xffffffffc0001000};
    return FakeSymbols::lookup(module, name);
  }
  bool tracepoint_exists(const std::string &subsys, const std::string &event) override {
    return event == "sched_process_fork" || (subsys != "sched" && event == "mydrv_done");
  }
  std::vector<std::string> tracepoint_names() override {
    return {"mydrv/mydrv_done", "mydrv/mydrv_start", "sched/sched_process_fork", "sched/sched_switch"};
  }
  bool module_loaded(const std::string &name) override { return name == "mydrv"; }
};

TEST(ProbeSpec, ModuleTracepoints) {
  TracepointSymbols syms;
  auto m = parse_probe_spec("t:d my-drv:mydrv/mydrv_done x=$arg1:u32");
  EXPECT_EQ("my_drv", m.module);
  EXPECT_EQ("mydrv", m.subsys);
  EXPECT_EQ("mydrv_done", m.event);
  EXPECT_NO_THROW(resolve_symbols(m, syms));  // not loaded: pending, unchecked
  auto blob = compile_probe(m);
  const auto *d = reinterpret_cast<const ktrack_probe_desc *>(blob.data());
  EXPECT_EQ(KTRACK_PROBE_TRACEPOINT, d->kind);
  EXPECT_STREQ("my_drv", d->module);
  EXPECT_STREQ("mydrv_done", d->symbol);
  auto loaded = parse_probe_spec("t mydrv:mydrv/mydrv_done");
  EXPECT_NO_THROW(resolve_symbols(loaded, syms));
  auto plain = parse_probe_spec("t mydrv/mydrv_done");
  EXPECT_NO_THROW(resolve_symbols(plain, syms));
  EXPECT_EQ("mydrv_done", plain.name);
  const Refusal bad[] = {
      {"t mydrv/mydrv_dome", "no such tracepoint: mydrv/mydrv_dome (did you mean mydrv/mydrv_done"},
      {"t mydrv_strat", "(did you mean mydrv/mydrv_start?)"},
      {"t sched_swich", "did you mean sched/sched_switch?"},
      {"t totally/unrelated_name", "no such tracepoint: totally/unrelated_name (is its module loaded?"},
      {"t mydrv:mydrv/mydrv_stop", "module mydrv has no tracepoint mydrv/mydrv_stop"}};
  expect_refusals(syms, bad);
  auto nine = parse_probe_spec("t 9pnet:9p/9p_client_req");
  EXPECT_EQ("9p", nine.subsys);
  EXPECT_EQ("9p_client_req", nine.event);
  EXPECT_EQ("t_9p_client_req", nine.name);
  EXPECT_THROW(parse_probe_spec("t :mydrv/x"), SpecError);
  EXPECT_THROW(parse_probe_spec("t my$drv:mydrv/x"), SpecError);
}

TEST(FilterCompiler, PostfixProgram) {
  auto s = parse_probe_spec(
      "p vfs_read n=$arg3:s64 f=+0($arg2):string if n > 10 && (comm ~ \"ba*\" || !(cpu == 1)) || f != "
      "\"x*\"");
  EXPECT_EQ("(n > 10) (comm ~ \"ba*\") (cpu == 1) NOT OR AND (f ~ \"x*\") NOT OR", describe_filter(s));
  auto p = parse_probe_spec("p vfs_read if pid == 1 && tgid & 0x10");
  ASSERT_EQ(3u, p.program.size());
  EXPECT_EQ(KTRACK_FLD_PID, p.program[0].insn.field_kind);
  EXPECT_EQ(KTRACK_FLT_BITAND, p.program[1].insn.cmp);
  EXPECT_EQ(16, p.program[1].insn.imm);
  auto n = parse_probe_spec("p vfs_read x=$arg1:s32 if x >= -5");
  EXPECT_EQ(-5, n.program[0].insn.imm);
  // a fetched argument named like a task field wins over it
  auto c = parse_probe_spec("p vfs_read cpu=$arg1:u32 if cpu == 3");
  EXPECT_EQ(KTRACK_FLD_FETCH, c.program[0].insn.field_kind);
}

TEST(FilterCompiler, TooLongConditionIsRejected) {
  std::string spec = "p vfs_read if pid == 1";
  for (int i = 0; i < 40; i++) spec += " || pid == 1";
  EXPECT_THROW(parse_probe_spec(spec), SpecError);
}

TEST(FilterCompiler, GlobClassesAreBoundedAsInTheKernel) {
  // ktrack.ko refuses a [...] class over KTRACK_FLT_GLOB_CLASS_MAX (E2BIG):
  // the compiler says so first, with a caret at the class.
  std::string cls(KTRACK_FLT_GLOB_CLASS_MAX + 1, 'a');
  std::string spec = "p vfs_read if comm ~ \"x[" + cls + "]\"";
  try {
    parse_probe_spec(spec);
    ADD_FAILURE() << spec;
  } catch (const SpecError &e) {
    EXPECT_NE(std::string::npos, e.message().find("class is too long")) << e.message();
    EXPECT_EQ(spec.find('['), e.pos());
  }
  EXPECT_NO_THROW(parse_probe_spec("p vfs_read if comm ~ \"x[" + cls.substr(1) + "]\""));
}

TEST(ProbeCompiler, BlobRoundTripsToSchema) {
  FakeSymbols syms;
  auto s = parse_probe_spec(
      "p:x vfs_read a=$arg1:u8 b=$arg2:x64 s=+0($arg3):string arr=+0($arg4):s16[3] if a == 1");
  resolve_symbols(s, syms);
  auto blob = compile_probe(s);
  ASSERT_EQ(0u, blob.size() % 8);
  ktrack_probe_desc d;
  std::memcpy(&d, blob.data(), sizeof(d));
  EXPECT_EQ(blob.size(), d.size);
  EXPECT_EQ(KTRACK_PROBE_KPROBE, d.kind);
  EXPECT_STREQ("vfs_read", d.symbol);
  EXPECT_EQ(4, d.nr_fetch);
  EXPECT_EQ(1, d.nr_insns);
  auto schema = schema_from_desc(blob);
  EXPECT_EQ("x", schema.name);
  ASSERT_EQ(4u, schema.fields.size());
  EXPECT_EQ(0, schema.fields[0].slot);
  EXPECT_EQ(8, schema.fields[1].slot);
  EXPECT_EQ(16, schema.fields[2].slot);
  EXPECT_EQ(20, schema.fields[3].slot);
  // a record: a=1 b=0xabc s="hi" arr={-1,2,-3}
  std::vector<uint8_t> data(26 + 2, 0);
  data[0] = 1;
  uint64_t b = 0xabc;
  std::memcpy(&data[8], &b, 8);
  uint32_t loc = (26u << 16) | 2;
  std::memcpy(&data[16], &loc, 4);
  int16_t arr[3] = {-1, 2, -3};
  std::memcpy(&data[20], arr, 6);
  data[26] = 'h';
  data[27] = 'i';
  EXPECT_EQ("a=1 b=0xabc s=\"hi\" arr={-1,2,-3}", format_probe_fields(schema, data.data(), data.size(), 0));
  EXPECT_EQ("a=1 b=(fault) s=\"hi\" arr={-1,2,-3}", format_probe_fields(schema, data.data(), data.size(), 2));
  auto dec = probe_decoder_schema(7, schema);
  EXPECT_EQ(7u, dec.probe_id);
  EXPECT_EQ(KTRACK_REC_PROBE, dec.rec_type);
  ASSERT_EQ(4u, dec.fields.size());
  EXPECT_EQ(FieldType::DynString, dec.fields[2].type);
  EXPECT_NO_THROW(dec.validate());
}

TEST(ProbeCompiler, FuncsAndTracepointBlobs) {
  FakeSymbols syms;
  auto f = parse_probe_spec("f:fs vfs_r*,vfs_w*%both $arg1");
  resolve_symbols(f, syms);
  auto blob = compile_probe(f);
  ktrack_probe_desc d;
  std::memcpy(&d, blob.data(), sizeof(d));
  EXPECT_EQ(KTRACK_PROBE_FUNCS, d.kind);
  EXPECT_EQ(KTRACK_PROBE_F_ENTRY | KTRACK_PROBE_F_EXIT, d.flags);
  EXPECT_EQ(2, d.nr_funcs);
  EXPECT_EQ(std::string("vfs_read\0vfs_write\0", 19),
            std::string(reinterpret_cast<const char *>(blob.data()) + d.funcs_off, d.funcs_len));
  auto t = parse_probe_spec("t:fk sched/sched_process_fork p=$arg1");
  resolve_symbols(t, syms);
  std::memcpy(&d, compile_probe(t).data(), sizeof(d));
  EXPECT_EQ(KTRACK_PROBE_TRACEPOINT, d.kind);
  EXPECT_STREQ("sched_process_fork", d.symbol);
}

// One glob naming more than KTRACK_PROBE_MAX_FUNCS functions (and "*",
// which is not even listed) goes to the kernel as the glob, entries only
// (KTRACK_PROBE_F_KERNEL_GLOB); exits and several patterns past the cap
// are refused with a sentence.
class ManySymbols : public FakeSymbols {
 public:
  std::vector<std::string> filter_functions() override {
    std::vector<std::string> v = FakeSymbols::filter_functions();
    for (int i = 0; i < KTRACK_PROBE_MAX_FUNCS + 10; i++) v.push_back("many_fn_" + std::to_string(i));
    return v;
  }
};

TEST(ProbeCompiler, GlobOverTheCapGoesToTheKernel) {
  ManySymbols syms;
  auto g = parse_probe_spec("f:mf many_* a=$arg1:s32");
  resolve_symbols(g, syms);
  EXPECT_TRUE(g.kernel_glob);
  EXPECT_EQ((std::vector<std::string>{"many_*"}), g.funcs);
  auto blob = compile_probe(g);
  ktrack_probe_desc d;
  std::memcpy(&d, blob.data(), sizeof(d));
  EXPECT_EQ(KTRACK_PROBE_F_ENTRY | KTRACK_PROBE_F_KERNEL_GLOB, d.flags);
  EXPECT_EQ(1, d.nr_funcs);
  EXPECT_EQ(std::string("many_*\0", 7),
            std::string(reinterpret_cast<const char *>(blob.data()) + d.funcs_off, d.funcs_len));
  // under the cap: names, as before
  auto v = parse_probe_spec("f vfs_*");
  resolve_symbols(v, syms);
  EXPECT_FALSE(v.kernel_glob);
  // "*": every function, not listed first
  class Unlisted : public FakeSymbols {
   public:
    std::vector<std::string> filter_functions() override {
      ADD_FAILURE() << "f * listed the functions";
      return {};
    }
  } unlisted;
  auto all = parse_probe_spec("f:all *");
  resolve_symbols(all, unlisted);
  EXPECT_TRUE(all.kernel_glob);
  EXPECT_EQ((std::vector<std::string>{"*"}), all.funcs);
  const Refusal bad[] = {{"f many_*%return", "exits (%return or %both) hook each function"},
                         {"f many_*%both", "exits (%return or %both) hook each function"},
                         {"f *%return", "exits (%return or %both) hook each function"},
                         {"f many_*,vfs_read", "give one glob"}};
  expect_refusals(syms, bad);
}

// An entry-only f on one name goes to the kernel's ftrace_ops when the
// module has it (an alias resolved first); anything else stays as it was.
TEST(ProbeCompiler, OneNameAtEntryGoesToFtraceOps) {
  FakeSymbols syms;
  auto routed = [&](const char *text, uint64_t features) {
    CompiledProbe c;
    c.spec = parse_probe_spec(text);
    resolve_symbols(c.spec, syms);
    c.blob = compile_probe(c.spec);
    const bool r = prefer_ftrace_ops(c, features);
    ktrack_probe_desc d;
    std::memcpy(&d, c.blob.data(), sizeof(d));
    EXPECT_EQ(r, c.spec.kernel_glob) << text;
    EXPECT_EQ(r, (d.flags & KTRACK_PROBE_F_KERNEL_GLOB) != 0) << text;
    if (r) {
      EXPECT_EQ(KTRACK_PROBE_F_ENTRY | KTRACK_PROBE_F_KERNEL_GLOB, d.flags) << text;
      EXPECT_EQ(1, d.nr_funcs) << text;
      return std::string(reinterpret_cast<const char *>(c.blob.data()) + d.funcs_off);
    }
    return std::string();
  };
  EXPECT_EQ("vfs_write", routed("f:w vfs_write a=$arg1:s32 if a > 2", KTRACK_FEAT_KERNEL_GLOB));
  EXPECT_EQ("vfs_fsync", routed("f __x64_sys_read", KTRACK_FEAT_KERNEL_GLOB));
  EXPECT_EQ("", routed("f vfs_write", 0));                               // an older module
  EXPECT_EQ("", routed("f vfs_write%return", KTRACK_FEAT_KERNEL_GLOB));  // exits hook each call
  EXPECT_EQ("", routed("f vfs_write%both", KTRACK_FEAT_KERNEL_GLOB));
  EXPECT_EQ("", routed("f vfs_w*", KTRACK_FEAT_KERNEL_GLOB));  // a glob: names, as before
  EXPECT_EQ("", routed("f vfs_write,vfs_read", KTRACK_FEAT_KERNEL_GLOB));
  EXPECT_EQ("", routed("f vfs_read", KTRACK_FEAT_KERNEL_GLOB));  // listed twice: ftrace would take both
  EXPECT_EQ("", routed("f:m ktrack_test_probe_target:ktrack_tpt_glob_one", KTRACK_FEAT_KERNEL_GLOB));
  EXPECT_EQ("", routed("p vfs_read", KTRACK_FEAT_KERNEL_GLOB));  // p has a feature bit of its own
}

// Attached now (probe add, record, trace), an entry-only f on one glob goes
// to the kernel unmatched: no function list is read, ftrace's filter matches
// it.  Exits, BTF names, several patterns and a module keep the names; and a
// SymbolSource that matches globs itself (probe compile, --graph) too.
class KernelGlobSymbols : public FakeSymbols {
 public:
  bool globs_in_kernel() override { return true; }
  std::vector<std::string> filter_functions() override {
    lists++;
    return FakeSymbols::filter_functions();
  }
  int lists = 0;
};

TEST(ProbeCompiler, OneGlobAtEntryGoesToTheKernelUnmatched) {
  KernelGlobSymbols syms;
  auto glob_of = [&](const char *text) {
    auto s = parse_probe_spec(text);
    resolve_symbols(s, syms);
    auto blob = compile_probe(s);
    ktrack_probe_desc d;
    std::memcpy(&d, blob.data(), sizeof(d));
    EXPECT_EQ(s.kernel_glob, (d.flags & KTRACK_PROBE_F_KERNEL_GLOB) != 0) << text;
    if (!s.kernel_glob) return std::string();
    EXPECT_EQ(KTRACK_PROBE_F_ENTRY | KTRACK_PROBE_F_KERNEL_GLOB, d.flags) << text;
    EXPECT_EQ(1, d.nr_funcs) << text;
    return std::string(reinterpret_cast<const char *>(blob.data()) + d.funcs_off);
  };
  EXPECT_EQ("vfs_*", glob_of("f vfs_* a=$arg1 if a > 2"));
  EXPECT_EQ("nomatch_*", glob_of("f:n nomatch_*"));  // the kernel's ENOENT says so
  EXPECT_EQ("vfs_re?d", glob_of("f vfs_re?d"));
  EXPECT_EQ(0, syms.lists);
  EXPECT_EQ("", glob_of("f vfs_*%return"));  // exits hook each function
  EXPECT_EQ("", glob_of("f vfs_*%both"));
  EXPECT_EQ("", glob_of("f vfs_*,do_sys_open"));        // several patterns
  EXPECT_EQ("", glob_of("f vfs_read"));                 // a name: prefer_ftrace_ops() decides
  auto btf = parse_probe_spec("f vfs_r* file->f_pos");  // BTF names need the function
  resolve_symbols(btf, syms);
  EXPECT_EQ((std::vector<std::string>{"vfs_read"}), btf.funcs);
  EXPECT_EQ("", glob_of("f:m ktrack_test_probe_target:ktrack_tpt_*"));  // the module's own path
  EXPECT_GT(syms.lists, 0);

  FakeSymbols here;  // globs_in_kernel() is false: names, as before
  auto s = parse_probe_spec("f vfs_*");
  resolve_symbols(s, here);
  EXPECT_FALSE(s.kernel_glob);
  EXPECT_EQ((std::vector<std::string>{"vfs_fsync", "vfs_read", "vfs_write"}), s.funcs);

  auto k = parse_probe_spec("f:n nomatch_*");
  resolve_symbols(k, syms);
  const std::string why = explain_probe_add_errno(k, ENOENT);
  EXPECT_NE(std::string::npos, why.find("no traceable function matches 'nomatch_*'")) << why;
}

// A p probe at a function's entry, by name, on a function ftrace lists:
// kind KPROBE with KTRACK_PROBE_F_KERNEL_GLOB and the symbol; else a kprobe.
TEST(ProbeCompiler, PAtEntryGoesToFtraceOps) {
  class WithWrite : public FakeSymbols {
   public:
    std::vector<uint64_t> lookup(const std::string &module, const std::string &name) override {
      if (name == "vfs_write" && module.empty()) return {0xffffffff81001000};
      return FakeSymbols::lookup(module, name);
    }
  } syms;
  auto flags = [&](const char *text, uint64_t features) {
    CompiledProbe c;
    c.spec = parse_probe_spec(text);
    resolve_symbols(c.spec, syms);
    c.blob = compile_probe(c.spec);
    prefer_ftrace_ops(c, features);
    ktrack_probe_desc d;
    std::memcpy(&d, c.blob.data(), sizeof(d));
    EXPECT_EQ(KTRACK_PROBE_KPROBE, d.kind) << text;
    EXPECT_EQ(0u, d.nr_funcs) << text;
    return d.flags;
  };
  EXPECT_EQ(KTRACK_PROBE_F_KERNEL_GLOB,
            flags("p:wr vfs_write a=$arg1 if a > 1", KTRACK_FEAT_KPROBE_FTRACE_OPS));
  EXPECT_EQ(KTRACK_PROBE_F_KERNEL_GLOB, flags("p vfs_write+0", KTRACK_FEAT_KPROBE_FTRACE_OPS));
  EXPECT_EQ(0u, flags("p vfs_write", KTRACK_FEAT_KERNEL_GLOB));                 // an older module
  EXPECT_EQ(0u, flags("p vfs_write+4", KTRACK_FEAT_KPROBE_FTRACE_OPS));         // inside the function
  EXPECT_EQ(0u, flags("p vfs_read", KTRACK_FEAT_KPROBE_FTRACE_OPS));            // ftrace lists the name twice
  EXPECT_EQ(0u, flags("p jiffies", KTRACK_FEAT_KPROBE_FTRACE_OPS));             // not a traceable function
  EXPECT_EQ(0u, flags("p 0xffffffff81000000", KTRACK_FEAT_KPROBE_FTRACE_OPS));  // by address
  EXPECT_EQ(0u, flags("p ktrack_test_probe_target:ktrack_tpt_add", KTRACK_FEAT_KPROBE_FTRACE_OPS));
}

// ktrack.ko's own functions stay where they were: its ftrace_ops handler
// leaves them out.
TEST(ProbeCompiler, KtrackOwnFunctionsStayOffFtraceOps) {
  class WithKtrack : public FakeSymbols {
   public:
    std::vector<uint64_t> lookup(const std::string &module, const std::string &name) override {
      if (name == "ktrack_session_ioctl") return {0xffffffffc1000000};
      return FakeSymbols::lookup(module, name);
    }
    std::vector<std::string> filter_functions() override {
      auto v = FakeSymbols::filter_functions();
      v.push_back("ktrack_session_ioctl [ktrack]");
      return v;
    }
  } syms;
  for (const char *text : {"p ktrack_session_ioctl", "f ktrack_session_ioctl"}) {
    CompiledProbe c;
    c.spec = parse_probe_spec(text);
    resolve_symbols(c.spec, syms);
    c.blob = compile_probe(c.spec);
    EXPECT_FALSE(prefer_ftrace_ops(c, KTRACK_FEAT_KERNEL_GLOB | KTRACK_FEAT_KPROBE_FTRACE_OPS)) << text;
  }
  CompiledProbe c;
  c.spec = parse_probe_spec("f vfs_write");
  resolve_symbols(c.spec, syms);
  c.blob = compile_probe(c.spec);
  EXPECT_TRUE(prefer_ftrace_ops(c, KTRACK_FEAT_KERNEL_GLOB));
}

// f MOD:GLOB: the globs go to the kernel as written, with the module; no
// symbol is looked up (the module may not be loaded yet).
TEST(ProbeCompiler, FuncsModuleGlobsGoToTheKernel) {
  FakeSymbols syms;
  auto f = parse_probe_spec("f:drv my-drv:*,drv_?x%both");
  EXPECT_EQ("my_drv", f.module);
  ASSERT_EQ(2u, f.patterns.size());
  resolve_symbols(f, syms);
  EXPECT_TRUE(f.funcs.empty());
  auto blob = compile_probe(f);
  ktrack_probe_desc d;
  std::memcpy(&d, blob.data(), sizeof(d));
  EXPECT_EQ(KTRACK_PROBE_FUNCS, d.kind);
  EXPECT_EQ(KTRACK_PROBE_F_ENTRY | KTRACK_PROBE_F_EXIT, d.flags);
  EXPECT_STREQ("my_drv", d.module);
  EXPECT_STREQ("", d.symbol);
  EXPECT_EQ(2, d.nr_funcs);
  EXPECT_EQ(std::string("*\0drv_?x\0", 9),
            std::string(reinterpret_cast<const char *>(blob.data()) + d.funcs_off, d.funcs_len));
  auto r = parse_probe_spec("f mydrv:mydrv_init%return");
  EXPECT_FALSE(r.entry);
  EXPECT_TRUE(r.exit);
  EXPECT_EQ("mydrv", r.module);
  // limits: a glob's length (the kernel's symbol size) and their number
  std::string too_long = "f m:" + std::string(KTRACK_PROBE_SYM_MAX, 'a');
  EXPECT_THROW(parse_probe_spec(too_long), SpecError);
  EXPECT_NO_THROW(parse_probe_spec("f m:" + std::string(KTRACK_PROBE_SYM_MAX - 1, 'a')));
  // the globs' bytes in all (matched against every function of the module
  // at each load, in the kernel, preemption off): KTRACK_PROBE_MODGLOB_MAX
  std::string many = "f m:a";
  for (int i = 1; i < KTRACK_PROBE_MODGLOB_MAX; i++) many += ",a";
  EXPECT_NO_THROW(parse_probe_spec(many));
  many += ",a";
  try {
    parse_probe_spec(many);
    ADD_FAILURE() << "accepted globs over the byte limit";
  } catch (const SpecError &e) {
    EXPECT_NE(std::string::npos, e.message().find("too long")) << e.message();
    EXPECT_EQ(many.size() - 1, e.pos());
  }
  // what the kernel's refusals mean for a module glob
  EXPECT_NE(std::string::npos,
            explain_probe_add_errno(f, ENOENT).find("no traceable function of module my_drv"));
  EXPECT_NE(std::string::npos, explain_probe_add_errno(f, E2BIG).find("matches more than 1024 functions"));
}

TEST(ProbeClient, ErrnoSentences) {
  auto s = parse_probe_spec("p vfs_read");
  EXPECT_NE(std::string::npos, explain_probe_add_errno(s, ENOENT).find("symbol not found"));
  EXPECT_NE(std::string::npos, explain_probe_add_errno(s, EOPNOTSUPP).find("not probeable"));
  EXPECT_NE(std::string::npos, explain_probe_add_errno(s, EBUSY).find("in use"));
  EXPECT_NE(std::string::npos, explain_probe_add_errno(s, EADDRNOTAVAIL).find("not unique"));
  EXPECT_NE(std::string::npos, explain_probe_add_errno(s, EACCES).find("privilege"));
  std::string perm = explain_probe_add_errno(s, EPERM);
  EXPECT_TRUE(perm.find("locked down") != std::string::npos || perm.find("root") != std::string::npos)
      << perm;
}

// EPERM is lockdown's only at confidentiality: integrity refuses no probe.
TEST(ProbeClient, EpermSaysLockedDownOnlyAtConfidentiality) {
  auto s = parse_probe_spec("p vfs_read");
  {
    test::FakeLockdown ld("confidentiality");
    std::string m = explain_probe_add_errno(s, EPERM);
    EXPECT_NE(std::string::npos, m.find("locked down (confidentiality)")) << m;
    EXPECT_NE(std::string::npos, m.find("boot without lockdown")) << m;
  }
  for (const char *mode : {"integrity", "none"}) {
    test::FakeLockdown ld(mode);
    std::string m = explain_probe_add_errno(s, EPERM);
    EXPECT_EQ(std::string::npos, m.find("locked down")) << mode << ": " << m;
    EXPECT_NE(std::string::npos, m.find("needs root")) << mode << ": " << m;
  }
  // a t probe at confidentiality: refused only when it reads kernel memory
  auto t = parse_probe_spec("t:tp sched/sched_process_fork");
  test::FakeLockdown ld("confidentiality");
  std::string m = explain_probe_add_errno(t, EPERM);
  EXPECT_NE(std::string::npos, m.find("no dereference, kernel string or @SYM")) << m;
  EXPECT_NE(std::string::npos, m.find("needs root")) << m;
}

class Btf : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists("/sys/kernel/btf/vmlinux"))
      GTEST_SKIP() << "the host kernel has no /sys/kernel/btf/vmlinux";
#ifndef KTRACK_HAVE_LIBBPF
    GTEST_SKIP() << "built without libbpf";
#endif
    btf_ = BtfResolver::open_system();
    ASSERT_NE(nullptr, btf_);
  }
  std::unique_ptr<BtfResolver> btf_;
};

TEST_F(Btf, ArgumentNamesAndMembers) {
  auto s = parse_probe_spec("p vfs_read file->f_pos count if count > 100");
  btf_->resolve(s);
  ASSERT_EQ(2u, s.args.size());
  EXPECT_EQ("f_pos", s.args[0].name);
  EXPECT_EQ(KTRACK_FETCH_SRC_ARG, s.args[0].src);
  EXPECT_EQ(1, s.args[0].param);
  ASSERT_EQ(1u, s.args[0].deref.size());
  EXPECT_LT(0, s.args[0].deref[0]);             // offsetof(struct file, f_pos)
  EXPECT_EQ(KTRACK_FETCH_T_S, s.args[0].type);  // loff_t
  EXPECT_EQ(8, s.args[0].size);
  EXPECT_EQ("count", s.args[1].name);
  EXPECT_EQ(3, s.args[1].param);
  EXPECT_EQ(KTRACK_FETCH_T_U, s.args[1].type);  // size_t
  EXPECT_EQ(1u, s.program.size());
  EXPECT_NO_THROW(compile_probe(s));
}

TEST_F(Btf, AllArgsRetvalAndStrings) {
  auto s = parse_probe_spec("p vfs_read $$args");
  btf_->resolve(s);
  ASSERT_EQ(4u, s.args.size());
  EXPECT_EQ("file", s.args[0].name);
  EXPECT_EQ("buf", s.args[1].name);
  EXPECT_EQ(KTRACK_FETCH_T_STRING, s.args[1].type);  // char *
  EXPECT_EQ("count", s.args[2].name);
  EXPECT_EQ("pos", s.args[3].name);
  auto r = parse_probe_spec("r vfs_read $retval");
  btf_->resolve(r);
  EXPECT_EQ(KTRACK_FETCH_T_S, r.args[0].type);  // ssize_t
  auto c = parse_probe_spec("p wake_up_new_task p->comm pid=p->pid");
  btf_->resolve(c);
  EXPECT_EQ(KTRACK_FETCH_T_STRING, c.args[0].type);  // char comm[16]: inline
  EXPECT_EQ(1u, c.args[0].deref.size());
  EXPECT_EQ(KTRACK_FETCH_T_S, c.args[1].type);
  EXPECT_EQ(4, c.args[1].size);
}

// ftrace's tprobe takes the prototype's names: 't sched/sched_process_fork
// parent child'.  btf_trace_<event> has none; __bpf_trace_<event> has them.
TEST_F(Btf, TracepointArgumentsByName) {
  auto t = parse_probe_spec("t sched/sched_process_fork parent child cpid=child->pid");
  btf_->resolve(t);
  ASSERT_EQ(3u, t.args.size());
  EXPECT_EQ("parent", t.args[0].name);
  EXPECT_EQ(1, t.args[0].param);
  EXPECT_EQ("child", t.args[1].name);
  EXPECT_EQ(2, t.args[1].param);
  EXPECT_EQ(2, t.args[2].param);
  EXPECT_EQ(1u, t.args[2].deref.size());
  EXPECT_EQ(KTRACK_FETCH_T_S, t.args[2].type);
  auto all = parse_probe_spec("t sched/sched_process_fork $$args");
  btf_->resolve(all);
  ASSERT_EQ(2u, all.args.size());
  EXPECT_EQ("parent", all.args[0].name);
  EXPECT_EQ("child", all.args[1].name);
}

TEST_F(Btf, TracepointArguments) {
  auto t = parse_probe_spec("t sched/sched_process_fork parent=$arg1->pid child=$arg2->pid");
  btf_->resolve(t);
  ASSERT_EQ(2u, t.args.size());
  EXPECT_EQ(1, t.args[0].param);
  EXPECT_EQ(2, t.args[1].param);
  EXPECT_EQ(t.args[0].deref, t.args[1].deref);
  EXPECT_EQ(KTRACK_FETCH_T_S, t.args[1].type);
}

// ftrace 6.12 reads a lone $argN through BTF: :string needs a char pointer
// there, and $arg* is $$args.
TEST_F(Btf, LoneArgNAndArgStar) {
  auto s = parse_probe_spec("p do_sys_open $arg2:string");
  btf_->resolve(s);
  EXPECT_EQ(KTRACK_FETCH_T_STRING, s.args[0].type);
  auto a = parse_probe_spec("p vfs_read $arg*");
  btf_->resolve(a);
  ASSERT_EQ(4u, a.args.size());
  EXPECT_EQ("file", a.args[0].name);
}

TEST_F(Btf, ErrorsPointAtTheArgument) {
  struct {
    const char *spec, *marker, *msg;
  } bad[] = {{"p vfs_read nosuch", "nosuch", "no argument named 'nosuch'"},
             {"p vfs_read file->nosuch", "nosuch", "has no member 'nosuch'"},  // ftrace's caret
             {"p vfs_read count->x", "x", "is not a pointer"},
             {"p vfs_read $arg1:string", "$arg1", "not a char pointer or array"},
             {"p kfree $arg2", "$arg2", "the function has 1 argument: there is no $arg2"},
             {"f vfs_read%return $retval->foo", "foo", "is not a pointer"},
             {"p vfs_read file.f_pos", "file.", "use '->'"},
             {"p no_such_function_xyz a", "a", "no BTF for function"},
             // accepted once, recording garbage (ftrace refuses each)
             {"r kfree $retval", "$retval", "kfree returns void"},
             {"r kfree x=$retval:u32", "x=$retval", "kfree returns void"},
             {"f kfree%return $retval", "$retval", "kfree returns void"},
             {"f vfs_read file:string", "file", "not a char pointer or array"},
             {"p vfs_read x=file->f_pos:ustring", "x=file", "not a char pointer or array"}};
  for (const auto &b : bad) {
    auto s = parse_probe_spec(b.spec);
    try {
      btf_->resolve(s);
      ADD_FAILURE() << b.spec;
    } catch (const SpecError &e) {
      EXPECT_EQ(std::string(b.spec).find(b.marker), e.pos()) << b.spec;
      EXPECT_NE(std::string::npos, e.message().find(b.msg)) << b.spec << ": " << e.message();
    }
  }
}
