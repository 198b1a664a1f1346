// ktrackctl hist | profile | graph | top | stack | export: answers from a
// recorded file (ktrackctl record -o FILE, or `cat /dev/ktrack > FILE`).
// The logic lives in user/lib (hist.hpp, profile.hpp, graph.hpp, ...).
#include <fmt/core.h>
#include <stdio.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <memory>

#include "analysis/analysis_source.hpp"
#include "analysis/export_html.hpp"
#include "analysis/export_perfetto.hpp"
#include "analysis/graph.hpp"
#include "analysis/hist.hpp"
#include "analysis/profile.hpp"
#include "analysis/stackagg.hpp"
#include "analysis/top.hpp"
#include "analysis/view_source.hpp"
#include "capture_options.hpp"
#include "command.hpp"
#include "device/capture.hpp"
#include "format/ctf_writer.hpp"
#include "format/format.hpp"
#include "format/symbols.hpp"
#include "host/kallsyms.hpp"
#include "objtrace/objtrace.hpp"
#include "probes/live_profile.hpp"
#include "util/duration.hpp"
#include "util/error.hpp"

namespace ktrackctl {
namespace {

namespace ka = ktrack::analysis;

// Flags every view shares.
struct ViewFlags {
  std::string file;
  std::string session;              // -s NAME: live, from a running named session
  std::vector<std::string> probes;  // --probe SPEC: live, from a new session
  std::string output;
  std::string color = "auto";
  std::string duration;
  bool json = false;
  ka::FilterSpec filter;
};

void add_view_flags(CLI::App *cmd, ViewFlags &f, bool json = true) {
  cmd->add_option("FILE", f.file,
                  "Recorded file (ktrackctl record -o FILE, or a raw /dev/ktrack stream; - = stdin)");
  cmd->add_option("-s,--session", f.session,
                  "Live: read the running named session NAME (see 'ktrackctl session')");
  cmd->add_option("--probe", f.probes,
                  "Live: attach this probe spec to a new session for the run, e.g. 'f vfs_*' (repeatable)");
  cmd->add_option("-p,--pid", f.filter.pids, "Only these pids or tgids (repeatable)");
  cmd->add_option("-C,--cpu", f.filter.cpus, "Only records from these CPUs (repeatable)");
  cmd->add_option("-c,--comm", f.filter.comms, "Only tasks whose name matches this glob (repeatable)");
  cmd->add_option("-e,--event", f.filter.events, "Only these probes/events (glob over names; repeatable)");
  cmd->add_option("--since", f.filter.since,
                  "Start at this time: 1.5s/200ms after the first record, or @SEC.FRAC");
  cmd->add_option("--until", f.filter.until, "End at this time (same forms as --since)");
  cmd->add_option("-d,--duration", f.duration,
                  "Live: stop after DURATION; file: only its first DURATION (500us, 250ms, 10s, 2m, 1h)");
  cmd->add_option(
      "--where", f.filter.where,
      "Field predicate, in a probe's 'if' grammar: 'len > 10 && comm == \"bash*\"' (== != < <= > >= & ~, "
      "&& || ! ( ))");
  cmd->add_option("-o,--output", f.output, "Write to FILE instead of stdout");
  if (json) cmd->add_flag("--json", f.json, "JSON output (one object per line)");
  cmd->add_option("--color", f.color, "Colour: auto (on a terminal), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
}

// The output stream (stdout or -o FILE) and whether it gets colour.
class Output {
 public:
  explicit Output(const ViewFlags &f) {
    if (!f.output.empty() && f.output != "-") {
      file_ = std::fopen(f.output.c_str(), "w");
      if (!file_) throw ktrack::FileError("open " + f.output + " for writing", errno);
    }
    FILE *fp = file_ ? file_ : stdout;
    bool tty = isatty(fileno(fp)) && !std::getenv("NO_COLOR");
    const char *term = std::getenv("TERM");
    if (term && std::string_view(term) == "dumb") tty = false;
    color_ = f.color == "always" || (f.color == "auto" && tty);
    tty_ = tty;
    out_ = std::make_unique<ka::Out>(fp);
  }
  ~Output() {
    out_.reset();
    if (file_) std::fclose(file_);
  }
  Output(const Output &) = delete;
  Output &operator=(const Output &) = delete;
  ka::Out &out() { return *out_; }
  ka::Colors colors() const { return color_ ? ka::Colors::on() : ka::Colors::off(); }
  bool tty() const { return tty_; }
  void close() {
    out_->flush();
    if (file_ && std::fclose(file_) != 0) {
      file_ = nullptr;
      throw ktrack::SysError("close the output file", errno);
    }
    file_ = nullptr;
  }

 private:
  FILE *file_ = nullptr;
  bool color_ = false, tty_ = false;
  std::unique_ptr<ka::Out> out_;
};

// The views' record source (analysis/view_source.hpp) from the shared flags;
// live runs show the capture's probe lines once recording has begun.
class ViewSource : public ka::ViewSource {
 public:
  explicit ViewSource(const ViewFlags &f) : ka::ViewSource(options(f)) {
    on_start = [](ktrack::Capture &cap) { start_capture(cap); };
  }

 private:
  static ka::ViewSourceOptions options(const ViewFlags &f) {
    return {f.file, f.session, f.probes, f.duration, f.filter};
  }
};

// ---- report -----------------------------------------------------------------

struct ReportFlags {
  ViewFlags v;
  bool csv = false;
  bool follow = false;
  bool header = false;
  bool objects = false;  // object tracker: one life per object
};

// The aggregating views (hist, profile, stack, export -F folded): every
// sample of the selection goes to View::add, then View::print writes the
// result.  The options get --json and the output's colours ('colored'
// false: none, for machine formats such as folded stacks).
// A raw '/dev/ktrack' stream carries no symbols or task names: this
// machine's, as 'report' takes them.
void names_from_this_machine(ViewSource &src) {
  if (auto *fs = src.file(); fs && fs->reader().info().raw_stream) {
    fs->reader().symbols().load(ktrack::read_kallsyms());
    fs->reader().comms().set_resolver(ktrack::proc_comm);
  }
}

template <class View, class Options>
void aggregate(const ViewFlags &v, Options o, bool colored = true) {
  ViewSource src(v);
  names_from_this_machine(src);
  Output out(v);
  o.json = v.json;
  o.colors = colored ? out.colors() : ka::Colors::off();
  View view(o, src.names());
  src.run([&](const ka::Sample &s) { view.add(s); });
  view.print(out.out());
  out.close();
}

void print_header(ktrack::TraceReader &reader, fmt::memory_buffer &buf) {
  const auto &m = reader.info().meta;
  if (reader.info().raw_stream) {
    fmt::format_to(fmt::appender(buf), "# raw /dev/ktrack record stream\n");
    return;
  }
  fmt::format_to(fmt::appender(buf), "# host {} kernel {} cpus {} clock {} session {} abi {}\n# {} symbols\n",
                 m.hostname, m.kernel_release, m.nr_cpus, m.clock,
                 m.session.empty() ? "(anonymous)" : m.session, m.abi_version, reader.symbols().size());
  for (const auto &[k, v] : m.extra) fmt::format_to(fmt::appender(buf), "# {}={}\n", k, v);
  for (const ktrack::Schema *s : reader.schemas().all()) {
    fmt::format_to(fmt::appender(buf), "# schema {} (type {}", s->name, s->rec_type);
    if (s->rec_type == KTRACK_REC_PROBE && s->probe_id)
      fmt::format_to(fmt::appender(buf), ", probe {}", s->probe_id);
    buf.append(std::string_view("):"));
    for (const auto &f : s->fields)
      fmt::format_to(fmt::appender(buf), " {}:{}@{}", f.name, ktrack::field_type_name(f.type), f.offset);
    buf.push_back('\n');
  }
}

const Command report_cmd(32, [](CLI::App &app) {
  auto f = std::make_shared<ReportFlags>();
  auto *cmd = app.add_subcommand("report", "Decode records as text (like ftrace's trace), JSON or CSV");
  add_view_flags(cmd, f->v);
  cmd->add_flag("--csv", f->csv, "CSV output: timestamp,cpu,pid,tgid,comm,event,function,fields");
  cmd->add_flag("--follow", f->follow,
                "Live: keep printing a running session's records (with -s NAME or --probe)");
  cmd->add_flag("--header", f->header, "Print the file's header (machine, clock, schemas) first");
  cmd->add_flag("--objects", f->objects, "Rebuild each tracked object's life (from 'ktrackctl objtrace -o')");
  cmd->footer(
      "Text lines are 'comm-pid [cpu] seconds: event: fields', like ftrace's trace.  Accepts\n"
      "files from 'ktrackctl record' and raw streams from 'cat /dev/ktrack > FILE' (detected\n"
      "by the file's magic).  Events come merged by timestamp across CPUs.  A raw stream\n"
      "carries no symbol map or process names: those come from this machine.  A truncated\n"
      "or damaged file is decoded up to the damage, then reported (exit 2).\n"
      "Examples:\n"
      "  ktrackctl report trace.ktrack\n"
      "  ktrackctl report trace.ktrack -e 'vfs*' -c bash --since 1s --until 2s\n"
      "  ktrackctl report trace.ktrack --where 'count > 4096' --csv -o big.csv\n"
      "  ktrackctl report --json trace.ktrack | jq .event\n"
      "  sudo ktrackctl report --follow -s mysession        # live, until Ctrl-C\n"
      "  sudo cat /dev/ktrack > raw.bin; ktrackctl report raw.bin");
  cmd->callback([f] {
    ::signal(SIGPIPE, SIG_IGN);
    if (f->objects) {
      if (f->v.file.empty())
        throw ktrack::UsageError("--objects needs a recorded FILE (from 'ktrackctl objtrace -o')");
      Output out(f->v);
      out.out().write(ktrack::report_objects(f->v.file, f->v.json));
      out.close();
      return;
    }
    if (f->csv && f->v.json) throw ktrack::UsageError("--csv and --json are two output formats: pick one");
    bool live_source = !f->v.session.empty() || !f->v.probes.empty();
    if (f->follow && !live_source)
      throw ktrack::UsageError(
          "--follow reads a running session: give -s NAME (or --probe SPEC), not a FILE");
    ViewSource src(f->v);
    names_from_this_machine(src);
    Output out(f->v);
    fmt::memory_buffer &buf = out.out().buf();
    if (f->header && src.file()) print_header(src.file()->reader(), buf);
    if (f->csv) ktrack::format_csv_header(buf);
    const ktrack::Symbolizer &syms = src.symbols();
    // Always the symbolizer: a format-3 file read from a pipe gets its
    // symbols as the records that need them come.
    ktrack::FormatOptions fo{&syms};
    try {
      src.run([&](const ka::Sample &s) {
        const ktrack::Event *ev = static_cast<const ka::RecordRef *>(s.origin)->event();
        if (!ev) return;
        if (f->v.json)
          ktrack::format_json(*ev, fo, buf);
        else if (f->csv)
          ktrack::format_csv(*ev, fo, buf);
        else
          ktrack::format_text(*ev, fo, buf);
        out.out().maybe_flush();
      });
      out.close();
    } catch (const ktrack::Error &) {
      // '| head' closed the pipe: stop quietly, like other Unix tools.
      if (errno == EPIPE) return;
      throw;
    }
  });
});

// ---- hist -------------------------------------------------------------------

struct HistFlags {
  ViewFlags v;
  std::string field = "$duration";
  std::string by;
  std::string linear;
};

const Command hist_cmd(50, [](CLI::App &app) {
  auto f = std::make_shared<HistFlags>();
  auto *cmd = app.add_subcommand("hist", "Histogram of a numeric field or of $duration, grouped by a key");
  add_view_flags(cmd, f->v);
  cmd->add_option(
      "-f,--field", f->field,
      "Value to histogram: a numeric probe field, $duration (entry/exit pairs or the probe's own), "
      "pid, cpu... (default $duration)");
  cmd->add_option(
      "-k,--by", f->by,
      "Group by: func, caller, probe, pid, tgid, comm, cpu or any field (default func for $duration, "
      "none otherwise; 'none' for one group)");
  cmd->add_option("--linear", f->linear, "Linear buckets MIN,MAX,STEP instead of powers of two");
  cmd->footer(
      "Prints bpftrace-style bars with count, min, avg, p50/p90/p99 and max per group,\n"
      "and the records lost on each CPU.\n"
      "Examples:\n"
      "  ktrackctl hist trace.ktr                       # latency of every function (ns)\n"
      "  ktrackctl hist trace.ktr -e vfs_read -k comm    # vfs_read latency per task name\n"
      "  ktrackctl hist trace.ktr -f count -k pid --where 'count > 0'\n"
      "  ktrackctl hist trace.ktr -f count --linear 0,65536,4096 --json");
  cmd->callback([f] {
    ka::HistOptions o;
    o.value = f->field;
    o.key = f->by;
    if (o.key.empty() && (o.value == "$duration" || o.value == "duration")) o.key = "func";
    if (o.key == "none") o.key.clear();
    if (!f->linear.empty()) {
      long long a, b, c;
      char extra;
      if (std::sscanf(f->linear.c_str(), "%lld,%lld,%lld%c", &a, &b, &c, &extra) != 3)
        throw ktrack::UsageError(
            fmt::format("--linear '{}' is not MIN,MAX,STEP (e.g. 0,1000,100)", f->linear));
      o.linear = true;
      o.lin_min = a;
      o.lin_max = b;
      o.lin_step = c;
    }
    aggregate<ka::Hist>(f->v, o);
  });
});

// ---- profile ----------------------------------------------------------------

struct ProfileFlags {
  ViewFlags v;
  std::string sort = "total";
  bool callers = false;
  size_t limit = 0;
  std::vector<std::string> live;
};

// profile --live: the kernel counts (probes/live_profile.hpp); this prints.
void profile_live(const ProfileFlags &f, ka::ProfileOptions o) {
  const ViewFlags &v = f.v;
  if (!v.file.empty() || !v.session.empty() || !v.probes.empty())
    throw ktrack::UsageError("--live profiles in the kernel now: give no FILE, -s or --probe with it");
  if (!v.filter.comms.empty() || !v.filter.events.empty() || !v.filter.where.empty() ||
      !v.filter.since.empty() || !v.filter.until.empty() || f.callers)
    throw ktrack::UsageError(
        "--live keeps totals only: -c, -e, --where, --since, --until and --callers need a recording "
        "(ktrackctl record ... 'f GLOB%both', then ktrackctl profile FILE)");
  if (o.sort == ka::ProfileOptions::BySelf)
    throw ktrack::UsageError("--sort self needs a recording: the kernel's totals have no self time");
  ktrack::LiveProfileOptions lo;
  lo.targets = f.live;
  for (uint32_t p : v.filter.pids) lo.pids.push_back(static_cast<int32_t>(p));
  lo.cpus = v.filter.cpus;
  if (!v.duration.empty()) lo.duration = ktrack::parse_duration(v.duration);
  CommandUnderCapture command;
  ktrack::StopSignals signals;
  bool quiet = !trailing_command().empty() || lo.duration.count() != 0;
  // Once this is said, every call of the functions is counted.
  auto r =
      ktrack::run_live_profile(lo, ktrack::StopSignals::flag(), [&](const std::vector<std::string> &notes) {
        for (const auto &n : notes) fmt::print(stderr, "{}\n", n);
        fmt::print(stderr, "profiling in the kernel{}\n", quiet ? "" : "; Ctrl-C to stop");
        command.start(signals);
      });
  command.finish();
  ktrack::Symbolizer syms;
  syms.load(ktrack::read_kallsyms());
  ktrack::SchemaRegistry schemas;
  ka::EventNames names(schemas, &syms, nullptr);
  Output out(v);
  o.json = v.json;
  o.colors = out.colors();
  o.kernel_totals = true;
  ka::Profile prof(o, names);
  for (const auto &fn : r.funcs)
    prof.add_totals(fn.ip, {.hits = fn.hits, .timed = fn.timed, .total = fn.time_ns, .max = fn.max_ns});
  prof.print(out.out());
  out.close();
  if (r.overflow)
    fmt::print(stderr,
               "{} calls were not counted: the profile table was full (a module reloaded at new addresses "
               "during the run)\n",
               r.overflow);
  if (r.misses)
    fmt::print(
        stderr,
        "{} calls were missed by the kernel (out of return-probe instances, or a probe handler already "
        "running on that CPU)\n",
        r.misses);
}

const Command profile_cmd(51, [](CLI::App &app) {
  auto f = std::make_shared<ProfileFlags>();
  auto *cmd =
      app.add_subcommand("profile", "Per-function hits and total/avg/max/self time from entry/exit pairs");
  add_view_flags(cmd, f->v);
  cmd->add_option("--sort", f->sort, "Sort by total, hits, avg, max, self or name (default total)")
      ->check(CLI::IsMember({"total", "hits", "avg", "max", "self", "name"}));
  cmd->add_flag("--callers", f->callers, "Break each function down by caller");
  cmd->add_option("-n,--limit", f->limit, "Print at most N functions");
  cmd->add_option("--live", f->live,
                  "Count and time the functions matching GLOB (or MOD:GLOB) in the kernel, now: no "
                  "recording (repeatable)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->footer(
      "Like ftrace's function_profile: time is inclusive (callees included), Self excludes\n"
      "the traced callees.  Calls are paired per task; nesting and lost records are handled\n"
      "(unpaired records count as hits without time, and lost records are reported).\n"
      "With --live the kernel counts each call and its time in per-CPU tables (no record per\n"
      "call) until -d, Ctrl-C or the end of '-- COMMAND'; -p and -C filter; no Self column.\n"
      "Examples:\n"
      "  ktrackctl profile trace.ktr\n"
      "  ktrackctl profile trace.ktr --sort hits -n 20\n"
      "  ktrackctl profile trace.ktr -c 'dd*' --callers --json\n"
      "  sudo ktrackctl profile --live 'vfs_*' -d 5s\n"
      "  sudo ktrackctl profile --live 'ext4_*' --live 'jbd2:*' --json -- tar xf linux.tar");
  cmd->callback([f] {
    ka::ProfileOptions o;
    static const std::pair<const char *, ka::ProfileOptions::Sort> sorts[] = {
        {"total", ka::ProfileOptions::ByTotal}, {"hits", ka::ProfileOptions::ByHits},
        {"avg", ka::ProfileOptions::ByAvg},     {"max", ka::ProfileOptions::ByMax},
        {"self", ka::ProfileOptions::BySelf},   {"name", ka::ProfileOptions::ByName}};
    for (const auto &[n, s] : sorts)
      if (f->sort == n) o.sort = s;
    o.callers = f->callers;
    o.limit = f->limit;
    if (!f->live.empty()) return profile_live(*f, o);
    if (!trailing_command().empty()) throw ktrack::UsageError("'-- COMMAND' goes with --live");
    aggregate<ka::Profile>(f->v, o);
  });
});

// ---- graph ------------------------------------------------------------------

struct GraphFlags {
  ViewFlags v;
  bool per_task = false;
  bool abstime = false;
};

const Command graph_cmd(52, [](CLI::App &app) {
  auto f = std::make_shared<GraphFlags>();
  auto *cmd = app.add_subcommand("graph",
                                 "Function-graph view (nested calls with durations) from entry/exit records");
  add_view_flags(cmd, f->v, false);
  cmd->add_flag("--per-task", f->per_task, "Task column first, no per-CPU context-switch separators");
  cmd->add_flag("-t,--abstime", f->abstime, "Print the timestamp of each line");
  cmd->footer(
      "Like ftrace's function_graph: calls nest per task; a call with nothing inside prints\n"
      "as 'func();', exits show the duration with a delay marker (+ > 10us, ! > 100us,\n"
      "# > 1ms, * > 10ms, @ > 100ms, $ > 1s); lost records print where they happened.\n"
      "Examples:\n"
      "  ktrackctl graph trace.ktr | less\n"
      "  ktrackctl graph trace.ktr -p 1234 --per-task\n"
      "  ktrackctl graph trace.ktr -C 1 --since 2s --until 2.5s -t");
  cmd->callback([f] {
    ViewSource src(f->v);
    names_from_this_machine(src);
    ka::GraphOptions o;
    o.per_task = f->per_task;
    o.abstime = f->abstime;
    Output out(f->v);
    o.colors = out.colors();
    ka::Graph g(o, src.names(), out.out());
    g.header();
    try {
      src.run([&](const ka::Sample &s) { g.add(s); });
    } catch (const ktrack::Error &) {
      g.finish();
      throw;
    }
    g.finish();
    out.close();
  });
});

// ---- stack ------------------------------------------------------------------

struct StackFlags {
  ViewFlags v;
  bool folded = false, offsets = false, per_comm = false;
  size_t limit = 0;
};

const Command stack_cmd(53, [](CLI::App &app) {
  auto f = std::make_shared<StackFlags>();
  auto *cmd = app.add_subcommand("stack", "Aggregated kernel stacks (stackcount-style) or folded stacks");
  add_view_flags(cmd, f->v);
  cmd->add_flag("--folded", f->folded, "Folded output ('root;...;leaf count') for flamegraph.pl/inferno");
  cmd->add_flag("--offsets", f->offsets, "Keep sym+off in folded frames");
  cmd->add_flag("--per-comm", f->per_comm, "Separate stacks per task name");
  cmd->add_option("-n,--limit", f->limit, "Print at most N stacks");
  cmd->footer(
      "Needs probes recorded with a stack option.  Stacks print innermost frame first,\n"
      "most frequent first; folded stacks put the root first.\n"
      "Examples:\n"
      "  ktrackctl stack trace.ktr -n 10\n"
      "  ktrackctl stack trace.ktr --folded | flamegraph.pl > kernel.svg\n"
      "  ktrackctl stack trace.ktr -e vfs_read --per-comm --json");
  cmd->callback([f] {
    if (f->folded && f->v.json)
      throw ktrack::UsageError("--folded and --json are different formats: pick one");
    ka::StackOptions o;
    o.folded = f->folded;
    o.offsets = f->offsets;
    o.per_comm = f->per_comm;
    o.limit = f->limit;
    aggregate<ka::StackAgg>(f->v, o, !o.folded);
  });
});

// ---- export -----------------------------------------------------------------

struct ExportFlags {
  ViewFlags v;
  std::string format = "perfetto";
};

// What the HTML report's header says: the file's own header, or this
// machine for a live run.
ka::HtmlHeader html_header(ViewSource &src, const ViewFlags &v) {
  ka::HtmlHeader h;
  h.file = v.file.empty() ? (v.session.empty() ? "live capture" : "session " + v.session) : v.file;
  if (auto *fs = src.file(); fs && !fs->reader().info().raw_stream) {
    const auto &m = fs->reader().info().meta;
    h.host = m.hostname;
    h.kernel = m.kernel_release;
    h.cpus = m.nr_cpus;
    h.clock = m.clock;
    h.session = m.session;
    for (const ktrack::Schema *s : fs->reader().schemas().all())
      if (s->rec_type == KTRACK_REC_PROBE && s->probe_id) h.probes.push_back(s->name);
  } else {
    struct utsname u {};
    if (uname(&u) == 0) {
      h.host = u.nodename;
      h.kernel = u.release;
    }
    h.cpus = static_cast<uint32_t>(sysconf(_SC_NPROCESSORS_CONF));
    h.session = v.session;
    h.probes = v.probes;
  }
  return h;
}

void export_html(const ViewFlags &v) {
  if ((v.output.empty() || v.output == "-") && isatty(STDOUT_FILENO))
    throw ktrack::UsageError("--format html writes a whole page: give -o report.html (or redirect stdout)");
  ViewSource src(v);
  names_from_this_machine(src);
  Output out(v);  // before a live run: an unwritable -o fails first
  ka::HtmlExport ex(src.names(), html_header(src, v));
  // Object lives are rebuilt in the same pass (a pipe is read once).
  ktrack::ObjLifeBuilder lives;
  src.run([&](const ka::Sample &s) {
    ex.add(s);
    if (s.type >= KTRACK_REC_OBJ_HIT && s.type <= KTRACK_REC_OBJ_UNTRACK)
      if (const ktrack::Event *ev = static_cast<const ka::RecordRef *>(s.origin)->event()) lives.add(*ev);
  });
  if (ex.saw_objects()) {
    std::vector<ktrack::ObjWatchLabel> labels;
    if (auto *fs = src.file()) {
      const auto &extra = fs->reader().info().meta.extra;
      if (auto it = extra.find("objtrace.watch"); it != extra.end())
        labels = ktrack::parse_watch_labels(it->second);
    }
    ex.set_objects_json(ktrack::format_lives_json(lives.lives(), labels, src.symbols()));
  }
  ex.write(out.out());
  out.close();
}

// CTF 1.8 for babeltrace2 and Trace Compass: a directory.
void export_ctf(const ViewFlags &v) {
  if (v.output.empty() || v.output == "-")
    throw ktrack::UsageError("--format ctf writes a directory (metadata and a stream per CPU): give -o DIR");
  ViewSource src(v);
  names_from_this_machine(src);
  ktrack::CtfTraceInfo info;
  if (auto *fs = src.file(); fs && !fs->reader().info().raw_stream) {
    const auto &m = fs->reader().info().meta;
    info = {m.hostname, m.kernel_release, m.clock, m.session};
  }
  ktrack::CtfWriter ctf(v.output, info, &src.symbols());
  src.run([&](const ka::Sample &s) {
    if (const ktrack::Event *ev = static_cast<const ka::RecordRef *>(s.origin)->event()) ctf.add(*ev);
  });
  ctf.finish();
  if (ctf.clamped())
    fmt::print(stderr,
               "ktrackctl: {} timestamps went backwards on their CPU and were written as the one before\n",
               ctf.clamped());
}

const Command export_cmd(54, [](CLI::App &app) {
  auto f = std::make_shared<ExportFlags>();
  auto *cmd = app.add_subcommand(
      "export", "Export to a self-contained HTML report, Perfetto/Chrome JSON or folded stacks");
  add_view_flags(cmd, f->v, false);
  cmd->add_option("-F,--format", f->format, "perfetto (= chrome, trace-event JSON), html, ctf or folded")
      ->check(CLI::IsMember({"perfetto", "chrome", "html", "ctf", "folded"}));
  cmd->footer(
      "perfetto: open the file in https://ui.perfetto.dev or chrome://tracing: a track per\n"
      "task with a slice per entry/exit pair, instant events for tracepoint hits and\n"
      "markers, a track per CPU with the tasks that ran and a counter of lost records.\n"
      "html: one self-contained page (no network, no server) for any browser: flame\n"
      "graphs of stacks and of the call graph (click to zoom, search), latency\n"
      "histograms (log2 and linear) and latency over time per function and probe, a\n"
      "per-CPU timeline with lost-record and marker flags, objtrace lives, and a header\n"
      "with what was recorded.  Big files are aggregated: the page says how.\n"
      "ctf: a CTF 1.8 trace directory (the format LTTng writes) for babeltrace2 and\n"
      "Trace Compass: an event per record with report --json's names and values.\n"
      "folded: one 'root;...;leaf count' line per distinct stack.\n"
      "Examples:\n"
      "  ktrackctl export trace.ktr -o trace.json\n"
      "  ktrackctl export --format html -o report.html trace.ktr\n"
      "  ktrackctl export --format ctf -o trace-ctf trace.ktr && babeltrace2 trace-ctf\n"
      "  ktrackctl export trace.ktr -F folded -o stacks.folded\n"
      "  ktrackctl export trace.ktr -p 1234 --since 1s -d 500ms -o slice.json");
  cmd->callback([f] {
    if (f->format == "folded") {
      ka::StackOptions o;
      o.folded = true;
      aggregate<ka::StackAgg>(f->v, o, false);
      return;
    }
    if (f->format == "html") {
      export_html(f->v);
      return;
    }
    if (f->format == "ctf") {
      export_ctf(f->v);
      return;
    }
    ViewSource src(f->v);
    names_from_this_machine(src);
    Output out(f->v);
    ka::PerfettoExport ex(src.names(), out.out());
    src.run([&](const ka::Sample &s) { ex.add(s); });
    ex.finish();
    out.close();
  });
});

// ---- top --------------------------------------------------------------------

struct TopFlags {
  ViewFlags v;
  std::string interval = "1s";
  size_t iterations = 0;
  bool once = false;
  std::string sort = "rate";
  size_t limit = 20;
};

const Command top_cmd(55, [](CLI::App &app) {
  auto f = std::make_shared<TopFlags>();
  auto *cmd = app.add_subcommand("top", "Per-function/per-probe hit rates, window by window");
  add_view_flags(cmd, f->v);
  cmd->add_option("-i,--interval", f->interval, "Window length (default 1s)");
  cmd->add_option("-n,--iterations", f->iterations, "Stop after N windows");
  cmd->add_flag("--once", f->once, "One window over everything (same as a window as long as the input)");
  cmd->add_option("--sort", f->sort, "Sort by rate, total or name (default rate)")
      ->check(CLI::IsMember({"rate", "total", "name"}));
  cmd->add_option("--rows", f->limit, "Rows per window (default 20, 0 = all)");
  cmd->footer(
      "Live (-s NAME or --probe SPEC): a table every INTERVAL (at least 1s) until Ctrl-C,\n"
      "-d or -n.  On a recorded file, steps through it by record time: one table per\n"
      "INTERVAL of recorded time.  On a terminal each table replaces the last.\n"
      "Examples:\n"
      "  sudo ktrackctl top --probe 'f vfs_*'          # live, refreshed every second\n"
      "  sudo ktrackctl top -s mysession -n 5 --json\n"
      "  ktrackctl top trace.ktr -i 500ms\n"
      "  ktrackctl top trace.ktr --once --rows 10\n"
      "  ktrackctl top trace.ktr -n 3 --json");
  cmd->callback([f] {
    ViewSource src(f->v);
    names_from_this_machine(src);
    ka::TopOptions o;
    o.sort = f->sort == "total"  ? ka::TopOptions::ByTotal
             : f->sort == "name" ? ka::TopOptions::ByName
                                 : ka::TopOptions::ByRate;
    o.limit = f->limit;
    o.json = f->v.json;
    Output out(f->v);
    o.colors = out.colors();
    o.clear = out.tty() && !o.json && !f->once;
    uint64_t window = ka::parse_duration_ns(f->interval, "-i/--interval");
    if (window == 0) throw ktrack::UsageError("-i/--interval must be longer than 0");
    ka::Top top(o, src.names());
    bool started = false;
    uint64_t win_start = 0, last_ts = 0;
    size_t printed = 0;
    if (src.live()) {
      // Windows of wall-clock time, checked about once a second.
      using clock = std::chrono::steady_clock;
      auto t0 = clock::now(), wstart = t0;
      src.run(
          [&](const ka::Sample &s) {
            top.add(s);
            last_ts = std::max(last_ts, s.ts);
          },
          [&] {
            auto now = clock::now();
            auto ns = static_cast<uint64_t>(
                std::chrono::duration_cast<std::chrono::nanoseconds>(now - wstart).count());
            if (f->once || ns < window) return;
            top.print(out.out(), last_ts, ns);
            wstart = now;
            if (f->iterations && ++printed >= f->iterations) ViewSource::stop();
          });
      if (f->once || printed == 0 || !f->iterations || printed < f->iterations) {
        auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - (f->once ? t0 : wstart))
                      .count();
        top.print(out.out(), last_ts, std::max<uint64_t>(static_cast<uint64_t>(ns), 1));
      }
      out.close();
      return;
    }
    bool done = false;
    struct Stop {};
    try {
      src.run([&](const ka::Sample &s) {
        if (done) throw Stop{};
        if (!started) {
          started = true;
          win_start = s.ts;
        }
        while (!f->once && s.ts >= win_start + window) {
          top.print(out.out(), win_start + window, window);
          win_start += window;
          if (f->iterations && ++printed >= f->iterations) {
            done = true;
            throw Stop{};
          }
        }
        top.add(s);
        last_ts = std::max(last_ts, s.ts);
      });
    } catch (const Stop &) {
    }
    if (!done && started)
      top.print(out.out(), f->once ? last_ts : win_start + window,
                f->once ? std::max<uint64_t>(last_ts - win_start, 1) : window);
    if (!started && !o.json) out.out().write("no records in the selection\n");
    out.close();
  });
});

}  // namespace
}  // namespace ktrackctl
