// e probes: event formats through libtraceevent, $FIELD resolution into
// record offsets and types, and the refusals (against format files as the
// kernel writes them, not the host's tracefs).
#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "event_formats.hpp"
#include "host/event_format.hpp"
#include "probes/probe_spec.hpp"

using namespace ktrack;
using namespace ktrack::test_formats;

namespace {

class EventSymbols : public SymbolSource {
 public:
  std::vector<uint64_t> lookup(const std::string &, const std::string &) override { return {}; }
  std::vector<std::string> filter_functions() override { return {}; }
  bool tracepoint_exists(const std::string &, const std::string &) override { return true; }
  std::vector<std::string> aliases(const std::string &) override { return {}; }
  std::optional<EventFormat> event_format(const std::string &subsys, const std::string &event) override {
    static const std::map<std::string, std::pair<std::string, const char *>> formats = {
        {"sched_switch", {"sched", kSchedSwitch}},
        {"sys_enter_openat", {"syscalls", kOpenat}},
        {"sched_process_exec", {"sched", kExec}}};
    auto it = formats.find(event);
    if (it == formats.end() || it->second.first != subsys) return std::nullopt;
    return parse_event_format(subsys, it->second.second);
  }
};

ProbeSpec resolved(const std::string &text) {
  EventSymbols syms;
  ProbeSpec s = parse_probe_spec(text);
  resolve_symbols(s, syms);
  return s;
}

// The message of the SpecError that 'text' raises, "" when none.
std::string refusal(const std::string &text) {
  try {
    resolved(text);
  } catch (const SpecError &e) {
    return e.message();
  }
  return "";
}

}  // namespace

TEST(EventFormat, ParsesFieldsOffsetsAndKinds) {
  auto f = parse_event_format("sched", kSchedSwitch);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->id, 316u);
  EXPECT_EQ(f->event, "sched_switch");
  const EventField *pid = f->find("prev_pid");
  ASSERT_TRUE(pid);
  EXPECT_EQ(pid->offset, 24u);
  EXPECT_EQ(pid->size, 4u);
  EXPECT_TRUE(pid->is_signed);
  const EventField *comm = f->find("next_comm");
  ASSERT_TRUE(comm);
  EXPECT_TRUE(comm->is_array && comm->is_string);
  EXPECT_EQ(comm->count, 16u);
  EXPECT_TRUE(f->find("common_pid")->common);
  EXPECT_EQ(f->field_names(), "prev_comm, prev_pid, prev_prio, prev_state, next_comm, next_pid, next_prio");
  auto x = parse_event_format("sched", kExec);
  ASSERT_TRUE(x);
  EXPECT_TRUE(x->find("filename")->is_dynamic);
  EXPECT_TRUE(parse_event_format("openat", kOpenat)->find("filename")->is_pointer);
}

TEST(EventProbe, FieldsBecomeRecordOffsetsWithTheFormatsTypes) {
  ProbeSpec s = resolved("e:sw sched/sched_switch prev=$prev_pid $next_comm st=$prev_state:x64");
  EXPECT_EQ(s.kind, ProbeKind::kEvent);
  EXPECT_EQ(s.subsys, "sched");
  EXPECT_EQ(s.event, "sched_switch");
  ASSERT_EQ(s.args.size(), 3u);
  // a number: the field's address, read at +0, typed by the format
  EXPECT_EQ(s.args[0].src, KTRACK_FETCH_SRC_FIELD);
  EXPECT_EQ(s.args[0].param, 24);
  EXPECT_EQ(s.args[0].type, KTRACK_FETCH_T_S);
  EXPECT_EQ(s.args[0].size, 4);
  EXPECT_EQ(s.args[0].deref, std::vector<int32_t>{0});
  // char[16]: a string read in place, named after the field
  EXPECT_EQ(s.args[1].name, "next_comm");
  EXPECT_EQ(s.args[1].param, 40);
  EXPECT_EQ(s.args[1].type, KTRACK_FETCH_T_STRING);
  EXPECT_TRUE(s.args[1].deref.empty());
  EXPECT_EQ(s.args[2].type, KTRACK_FETCH_T_X);
  EXPECT_EQ(s.args[2].size, 8);

  auto blob = compile_probe(s);
  ktrack_probe_desc d;
  std::memcpy(&d, blob.data(), sizeof(d));
  EXPECT_EQ(d.kind, (uint32_t)KTRACK_PROBE_EVENT);
  EXPECT_STREQ(d.symbol, "sched/sched_switch");
}

TEST(EventProbe, PointersStringsAndDataLoc) {
  ProbeSpec s = resolved("e:op syscalls/sys_enter_openat path=$filename:ustring dfd=$dfd:s32 p=$filename");
  // the string at the pointer the field holds: load it, read at +0
  EXPECT_EQ(s.args[0].type, KTRACK_FETCH_T_USTRING);
  EXPECT_EQ(s.args[0].deref, (std::vector<int32_t>{0, 0}));
  EXPECT_EQ(s.args[0].param, 24);
  EXPECT_EQ(s.args[1].size, 4);  // narrower than the 8-byte field: fits
  EXPECT_EQ(s.args[2].type, KTRACK_FETCH_T_X);
  ProbeSpec d = resolved("e:op syscalls/sys_enter_openat v=+8($filename):u64");
  EXPECT_EQ(d.args[0].deref, (std::vector<int32_t>{0, 8}));
  ProbeSpec x = resolved("e:ex sched/sched_process_exec $filename $pid if pid > 1");
  EXPECT_EQ(x.args[0].type, KTRACK_FETCH_T_STRING);
  EXPECT_EQ(x.args[0].flags, KTRACK_FETCH_F_DATA_LOC);
  EXPECT_EQ(x.args[0].param, 8);
  EXPECT_FALSE(x.program.empty());  // the filter, typed once the fields are
}

TEST(EventProbe, RefusalsSayWhatToFix) {
  EXPECT_NE(refusal("e sched/sched_switch x=$nope").find("no field 'nope'; its fields: prev_comm"),
            std::string::npos);
  EXPECT_NE(refusal("e sched/sched_switch x=$prev_pid:u64").find("does not fit"), std::string::npos);
  EXPECT_NE(refusal("e sched/sched_switch x=$prev_pid:string").find("not a string"), std::string::npos);
  EXPECT_NE(refusal("e sched/sched_switch x=+8($prev_pid):u64").find("only a pointer"), std::string::npos);
  EXPECT_NE(refusal("e sched/no_such x=$a").find("no trace event sched/no_such"), std::string::npos);
  EXPECT_NE(refusal("e mymod:my/ev x=$a").find("give 'a' a type ($a:u32"), std::string::npos);
  EXPECT_NE(refusal("e mymod:my/ev x=+8($a):string").find("no dereference"), std::string::npos);
  EXPECT_NE(refusal("e mymod:my/ev x=+u8($a):u32").find("+uOFFS() cannot start"), std::string::npos);
  EXPECT_THROW(parse_probe_spec("e sched_switch"), SpecError);
  EXPECT_THROW(parse_probe_spec("e sched/sched_switch %ax"), SpecError);
  EXPECT_THROW(parse_probe_spec("e sched/sched_switch prev_pid"), SpecError);
}

// A module not loaded yet: fields go by name, with the type the user gave;
// the kernel finds them in the event's layout when the module loads.
TEST(EventProbe, FieldsOfAModuleNotLoadedGoByName) {
  ProbeSpec s = resolved("e:h mymod:my/ev seq=$seq:s32 m=$magic:x64 p=+8($ptr):u32 $name:string if seq > 2");
  ASSERT_EQ(s.args.size(), 4u);
  for (const auto &a : s.args) EXPECT_TRUE(a.flags & KTRACK_FETCH_F_BY_NAME) << a.name;
  EXPECT_EQ(s.args[0].deref, (std::vector<int32_t>{0}));
  EXPECT_EQ(s.args[0].size, 4);
  EXPECT_EQ(s.args[2].deref, (std::vector<int32_t>{0, 8}));
  EXPECT_TRUE(s.args[3].deref.empty());  // the kernel picks in place, __data_loc or pointer
  EXPECT_FALSE(s.program.empty());
  // the names travel in the string table, each fetch's param pointing at its own
  auto blob = compile_probe(s);
  const auto *d = reinterpret_cast<const ktrack_probe_desc *>(blob.data());
  const auto *f = reinterpret_cast<const ktrack_probe_fetch *>(blob.data() + d->fetch_off);
  const char *strtab = reinterpret_cast<const char *>(blob.data() + d->strtab_off);
  ASSERT_GT(d->strtab_len, 0u);
  EXPECT_STREQ(strtab + f[0].param, "seq");
  EXPECT_STREQ(strtab + f[1].param, "magic");
  EXPECT_STREQ(strtab + f[2].param, "ptr");
  EXPECT_STREQ(strtab + f[3].param, "name");
}
