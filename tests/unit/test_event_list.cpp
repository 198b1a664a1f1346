// 'ktrackctl events': which tracepoints and trace events a GLOB selects,
// where each lives, what t and e may name in it, and the text and JSON of
// the listing, on a synthetic system (formats as the kernel writes them).
#include <gtest/gtest.h>

#include <map>

#include "event_formats.hpp"
#include "json_mini.hpp"
#include "probes/event_list.hpp"
#include "util/error.hpp"

using namespace ktrack;
using namespace ktrack::test_formats;

namespace {

class FakeEvents : public EventSource {
 public:
  bool tracefs = true;
  std::optional<std::vector<std::string>> events() override {
    if (!tracefs) return std::nullopt;
    return std::vector<std::string>{"sched/sched_switch", "sched/sched_wakeup", "syscalls/sys_enter_openat",
                                    "raw_syscalls/sys_enter", "ktrack_tpt/ktrack_tpt_hit"};
  }
  std::vector<std::pair<std::string, std::string>> tracepoints() override {
    return {{"sched_switch", ""},
            {"sched_wakeup", ""},
            {"sys_enter", ""},
            {"sched_update_nr_running_tp", ""},
            {"ktrack_tpt_hit", "ktrack_test_probe_target"}};
  }
  bool module_loaded(const std::string &name) override { return name == "ktrack_test_probe_target"; }
  std::optional<EventFormat> format(const std::string &subsys, const std::string &event) override {
    formats_read++;
    static const std::map<std::string, const char *> text{
        {"sched_switch", kSchedSwitch}, {"sys_enter_openat", kOpenat}, {"ktrack_tpt_hit", kTptHit}};
    auto it = text.find(event);
    if (it == text.end()) return std::nullopt;
    return parse_event_format(subsys, it->second);
  }
  std::optional<std::vector<TracepointArg>> args(const std::string &module,
                                                 const std::string &event) override {
    if (!module.empty()) return std::nullopt;  // modules without BTF
    if (event == "sched_switch")
      return std::vector<TracepointArg>{{1, "preempt", "bool", "bool preempt"},
                                        {2, "prev", "struct task_struct *", "struct task_struct *prev"},
                                        {3, "next", "struct task_struct *", "struct task_struct *next"},
                                        {4, "prev_state", "unsigned int", "unsigned int prev_state"},
                                        {5, "a5", "int", "int a5"},
                                        {6, "a6", "int", "int a6"}};
    if (event == "sched_update_nr_running_tp")
      return std::vector<TracepointArg>{{1, "rq", "struct rq *", "struct rq *rq"},
                                        {2, "change", "int", "int change"}};
    if (event == "sched_wakeup")  // 6.1: btf_trace_ typedef, no names
      return std::vector<TracepointArg>{{1, "", "struct task_struct *", "struct task_struct *"}};
    return std::nullopt;
  }
  std::string no_args_reason(const std::string &module) override {
    return module.empty() ? "BTF has no prototype for it" : "module " + module + " has no BTF";
  }
  int formats_read = 0;
};

std::vector<std::string> names(const std::vector<EventInfo> &v) {
  std::vector<std::string> out;
  for (const auto &e : v) out.push_back(e.name());
  return out;
}

std::vector<std::string> list(const std::string &glob) {
  FakeEvents src;
  return names(list_events(src, parse_event_query(glob)));
}

std::string usage_error(const std::string &glob, FakeEvents *src = nullptr) {
  FakeEvents local;
  try {
    list_events(src ? *src : local, parse_event_query(glob));
  } catch (const UsageError &e) {
    return e.what();
  }
  return "(no usage error)";
}

using V = std::vector<std::string>;

}  // namespace

TEST(EventList, GlobSpellings) {
  EXPECT_EQ(list("sched/sched_switch"), V{"sched/sched_switch"});
  EXPECT_EQ(list("sched:sched_switch"), V{"sched/sched_switch"});  // ftrace's spelling
  EXPECT_EQ(list("sched/*"), (V{"sched/sched_switch", "sched/sched_wakeup"}));
  EXPECT_EQ(list("sched/"), (V{"sched/sched_switch", "sched/sched_wakeup"}));
  EXPECT_EQ(list("sched:"), (V{"sched/sched_switch", "sched/sched_wakeup"}));
  // no '/': the event name or the whole name, so tracepoints without an event too
  EXPECT_EQ(list("sched_*"), (V{"sched/sched_switch", "sched/sched_wakeup", "sched_update_nr_running_tp"}));
  EXPECT_EQ(list("*openat"), V{"syscalls/sys_enter_openat"});
  EXPECT_EQ(list("").size(), 6u);
  EXPECT_EQ(list("*/*").size(), 5u);  // a '/' names events with a subsystem
}

TEST(EventList, ModuleRestriction) {
  EXPECT_EQ(list("ktrack_test_probe_target:ktrack_tpt/*"), V{"ktrack_tpt/ktrack_tpt_hit"});
  EXPECT_EQ(list("ktrack-test-probe-target:*/*"), V{"ktrack_tpt/ktrack_tpt_hit"});
  EXPECT_EQ(list("ktrack_test_probe_target:ktrack_tpt:ktrack_tpt_hit"), V{"ktrack_tpt/ktrack_tpt_hit"});
  EXPECT_EQ(list("ktrack_*:*/*"), V{"ktrack_tpt/ktrack_tpt_hit"});
  EXPECT_NE(usage_error("ktrack_test_probe_target:sched/*")
                .find("no tracepoint or trace event in module "
                      "ktrack_test_probe_target matches"),
            std::string::npos);
  EXPECT_NE(usage_error("mydrv:*/*").find("module mydrv is not loaded"), std::string::npos);
}

TEST(EventList, BadGlobs) {
  for (const char *g : {"a:b:c:d", "a/b/c", "m:a/b:c", ":sched/x", "m y:a/b"})
    EXPECT_THROW(parse_event_query(g), UsageError) << g;
}

TEST(EventList, NothingMatchedNamesTheClosest) {
  std::string m = usage_error("sched/sched_swich");
  EXPECT_NE(m.find("no tracepoint or trace event matches 'sched/sched_swich'"), std::string::npos) << m;
  EXPECT_NE(m.find("did you mean sched/sched_switch"), std::string::npos) << m;
  m = usage_error("sched_swtch");
  EXPECT_NE(m.find("did you mean sched/sched_switch"), std::string::npos) << m;
  m = usage_error("nosuch*");
  EXPECT_NE(m.find("matches 'nosuch*' (a module's are listed while it is loaded"), std::string::npos) << m;
}

TEST(EventList, NoTracefs) {
  FakeEvents src;
  src.tracefs = false;
  try {
    list_events(src, parse_event_query(""));
    FAIL();
  } catch (const UsageError &) {
    FAIL() << "a runtime error, not a usage error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("run as root, with tracefs mounted"), std::string::npos);
  }
}

TEST(EventList, WhatTAndEMayName) {
  FakeEvents src;
  auto v = list_events(src, parse_event_query(""));
  std::map<std::string, EventInfo> by;
  for (auto &e : v) by[e.name()] = e;
  const EventInfo &sw = by["sched/sched_switch"];
  EXPECT_TRUE(sw.tracepoint && sw.trace_event && sw.args_known);
  EXPECT_EQ(sw.module, "");
  ASSERT_EQ(sw.args.size(), 6u);
  EXPECT_EQ(sw.args[1].name, "prev");
  ASSERT_EQ(sw.fields.size(), 7u);  // common_* left out
  EXPECT_EQ(sw.fields[0].name, "prev_comm");
  EXPECT_EQ(sw.fields[1].offset, 24u);

  const EventInfo &op = by["syscalls/sys_enter_openat"];
  EXPECT_FALSE(op.tracepoint);
  EXPECT_TRUE(op.trace_event);
  EXPECT_NE(op.args_note.find("raw_syscalls/sys_enter"), std::string::npos);
  EXPECT_EQ(op.fields.size(), 5u);

  const EventInfo &hit = by["ktrack_tpt/ktrack_tpt_hit"];
  EXPECT_EQ(hit.module, "ktrack_test_probe_target");
  EXPECT_TRUE(hit.tracepoint && !hit.args_known);
  EXPECT_NE(hit.args_note.find("module ktrack_test_probe_target has no BTF"), std::string::npos);
  ASSERT_EQ(hit.fields.size(), 3u);
  EXPECT_TRUE(hit.fields[2].is_dynamic);

  const EventInfo &bare = by["sched_update_nr_running_tp"];
  EXPECT_TRUE(bare.tracepoint && !bare.trace_event);
  EXPECT_EQ(bare.subsys, "");
  EXPECT_EQ(bare.args.size(), 2u);
  EXPECT_EQ(bare.fields_note, "no trace event: t only");

  const EventInfo &wk = by["sched/sched_wakeup"];  // a format the source cannot give
  EXPECT_NE(wk.fields_note.find("cannot be read"), std::string::npos);
}

TEST(EventList, NamesOnlyReadsNoFormat) {
  FakeEvents src;
  EventQuery q = parse_event_query("sched/*");
  q.details = false;
  auto v = list_events(src, q);
  EXPECT_EQ(v.size(), 2u);
  EXPECT_EQ(src.formats_read, 0);
  EXPECT_TRUE(v[0].fields.empty());
}

TEST(EventList, Text) {
  FakeEvents src;
  std::string t = format_events_text(list_events(src, parse_event_query("sched/sched_switch")));
  EXPECT_NE(t.find("sched/sched_switch (kernel)\n  t args:\n    $arg1   bool preempt\n"
                   "    $arg2   struct task_struct *prev\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("    $arg6   int a6  (t reads $arg1..$arg5 only)\n"), std::string::npos) << t;
  EXPECT_NE(t.find("  e fields:\n    $prev_comm   char[16]  offset 8    size 16\n"
                   "    $prev_pid    pid_t     offset 24   size 4\n"),
            std::string::npos)
      << t;
  t = format_events_text(list_events(src, parse_event_query("*:*openat")));
  EXPECT_NE(t.find("syscalls/sys_enter_openat (kernel)\n  t args:   no tracepoint of its own"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("$filename      const char *"), std::string::npos) << t;
  t = format_events_text(list_events(src, parse_event_query("ktrack_tpt/*")));
  EXPECT_NE(t.find("ktrack_tpt/ktrack_tpt_hit (module ktrack_test_probe_target)\n"
                   "  t args:   unknown (module ktrack_test_probe_target has no BTF): $arg1..$arg5 in "
                   "TP_PROTO order\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("$label  __data_loc char[]"), std::string::npos) << t;
  t = format_events_text(list_events(src, parse_event_query("sched_update*")));
  EXPECT_EQ(t,
            "sched_update_nr_running_tp (kernel)\n  t args:\n    $arg1   struct rq *rq\n"
            "    $arg2   int change\n  e fields: no trace event: t only\n");
}

TEST(EventList, Json) {
  FakeEvents src;
  auto v = json_mini::parse(format_events_json(list_events(src, parse_event_query(""))));
  ASSERT_EQ(v.type, json_mini::Value::Array);
  ASSERT_EQ(v.arr.size(), 6u);
  std::map<std::string, const json_mini::Value *> by;
  for (const auto &e : v.arr) by[e["name"].str] = &e;
  const auto &sw = *by["sched/sched_switch"];
  EXPECT_EQ(sw["subsys"].str, "sched");
  EXPECT_EQ(sw["event"].str, "sched_switch");
  EXPECT_EQ(sw["module"].type, json_mini::Value::Null);
  EXPECT_TRUE(sw["t"].b && sw["e"].b);
  EXPECT_EQ(sw["args"].arr[1]["name"].str, "prev");
  EXPECT_EQ(sw["args"].arr[1]["type"].str, "struct task_struct *");
  EXPECT_EQ(sw["args"].arr[1]["index"].num, 2);
  EXPECT_TRUE(sw["args"].arr[4]["readable"].b);
  EXPECT_FALSE(sw["args"].arr[5]["readable"].b);
  EXPECT_EQ(sw["fields"].arr[1]["name"].str, "prev_pid");
  EXPECT_EQ(sw["fields"].arr[1]["type"].str, "pid_t");
  EXPECT_EQ(sw["fields"].arr[1]["offset"].num, 24);
  EXPECT_EQ(sw["fields"].arr[1]["size"].num, 4);
  EXPECT_TRUE(sw["fields"].arr[1]["signed"].b);
  const auto &hit = *by["ktrack_tpt/ktrack_tpt_hit"];
  EXPECT_EQ(hit["module"].str, "ktrack_test_probe_target");
  EXPECT_EQ(hit["args"].type, json_mini::Value::Null);  // no BTF
  const auto &op = *by["syscalls/sys_enter_openat"];
  EXPECT_FALSE(op["t"].b);
  EXPECT_TRUE(op["args"].arr.empty());
  const auto &bare = *by["sched_update_nr_running_tp"];
  EXPECT_EQ(bare["subsys"].type, json_mini::Value::Null);
  EXPECT_FALSE(bare["e"].b);
  EXPECT_EQ(bare["args"].arr[0]["name"].str, "rq");
  EXPECT_EQ(sw["args"].arr.size(), 6u);
  EXPECT_EQ(json_mini::parse(format_events_json({})).arr.size(), 0u);
}
