// ktrackctl trace | record: live decoding, recording to a file,
// decoding a recorded file (or a raw `cat /dev/ktrack` stream).
#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <exception>
#include <memory>

#include "capture_options.hpp"
#include "command.hpp"
#include "device/capture.hpp"
#include "device/device.hpp"
#include "device/recorder.hpp"
#include "format/format.hpp"
#include "format/trace_file.hpp"
#include "host/kallsyms.hpp"
#include "objtrace/objtrace.hpp"
#include "util/error.hpp"

namespace ktrackctl {
namespace {

// Output to stdout; a closed pipe (`| head`) ends the command quietly.
bool write_or_pipe_closed(ktrack::BufferedOutput &out) {
  try {
    out.flush();
    return true;
  } catch (const ktrack::SysError &e) {
    if (e.err() == EPIPE) return false;
    throw;
  }
}

struct TraceOpts {
  ktrack::CaptureOptions cap;
  CaptureFlags flags;
  bool json = false;
  bool quiet = false;
};

const Command trace_cmd(30, [](CLI::App &app) {
  auto o = std::make_shared<TraceOpts>();
  auto *cmd = app.add_subcommand("trace", "Decode a session's records live to the terminal (or JSON lines)");
  add_capture_flags(cmd, o->flags);
  cmd->add_flag("--json", o->json, "One JSON object per line instead of text");
  cmd->add_flag("-q,--quiet", o->quiet, "No summary on stderr at the end");
  cmd->add_option("spec", o->cap.specs, "What to attach before starting (probe specifications)");
  cmd->footer(
      "Without a spec, streams whatever the session receives: user markers (write() on a\n"
      "session fd, 'ktrackctl marker'), ktrack_emit()/printf records of drivers, probes\n"
      "already attached to a named session (-s).  Text lines read\n"
      "  comm-pid [cpu] seconds.ns: event: field=value ...\n"
      "Probe lines on stderr ('probe x (id 1): kprobe, armed') come once recording has\n"
      "begun: every later hit is shown or counted lost.  Stop with Ctrl-C, SIGTERM or -d:\n"
      "the probes are detached first, then every record up to that point is shown; a\n"
      "summary on stderr gives records, lost records and each probe's counts.\n"
      "With '-- COMMAND [ARGS]', runs COMMAND (stdio inherited) once tracing has begun and\n"
      "stops when it exits (or at -d, whichever comes first: COMMAND then gets SIGTERM);\n"
      "ktrackctl exits with COMMAND's status (127: not found, 126: not executable).\n"
      "Examples:\n"
      "  sudo ktrackctl trace\n"
      "  sudo ktrackctl trace 'p:op do_sys_openat2' -- cat /etc/hostname\n"
      "  sudo ktrackctl trace 'u:m /lib/x86_64-linux-gnu/libc.so.6:malloc size=$arg1:u64' -- ls\n"
      "  sudo ktrackctl trace -s default --json -d 5s\n"
      "  sudo ktrackctl trace -c bash -C 0 --mode overwrite");
  cmd->callback([o] {
    if (has_snapshot_action(o->cap.specs))
      throw ktrack::UsageError(
          "'=> snapshot' saves copies to files: use 'ktrackctl record --flight SIZE -o FILE' (each copy "
          "goes to FILE.snapN.ktr)");
    apply_capture_flags(o->flags, o->cap);
    CommandUnderCapture command;
    ktrack::StopSignals signals;
    follow_process_trees(o->cap.specs, o->cap, command, signals);
    ::signal(SIGPIPE, SIG_IGN);
    // Symbols before the probes: reading kallsyms makes thousands of
    // read() calls, which a probe on vfs_read would count as idle hits.
    ktrack::Symbolizer syms;
    syms.load(ktrack::read_kallsyms());
    ktrack::Capture cap(o->cap);
    ktrack::Decoder dec(cap.schemas(), &cap.comms());
    ktrack::FormatOptions fo{syms.size() ? &syms : nullptr};
    ktrack::BufferedOutput out(STDOUT_FILENO);
    ktrack::Event ev;
    std::atomic<bool> &stop = ktrack::StopSignals::flag();
    bool closed = false;
    start_capture(cap, o->quiet ? "" : "tracing");
    command.start(signals);
    cap.run(
        [&](std::span<const uint8_t> rec) {
          syms.ingest(rec);  // a module came or went: names the records after it
          if (closed || !dec.decode(rec, ev)) return;
          if (o->json)
            ktrack::format_json(ev, fo, out.buf());
          else
            ktrack::format_text(ev, fo, out.buf());
          if (out.buf().size() >= (1u << 20) && !write_or_pipe_closed(out)) {
            closed = true;
            stop.store(true);
          }
        },
        stop,
        [&](const ktrack::CaptureStatus &) {
          if (!closed && !write_or_pipe_closed(out)) {
            closed = true;
            stop.store(true);
          }
        });
    command.finish();
    if (!closed) write_or_pipe_closed(out);
    if (!o->quiet) print_capture_summary(cap, "trace");
  });
});

struct RecordOpts {
  ktrack::CaptureOptions cap;
  CaptureFlags flags;
  std::string output;
  bool quiet = false;
  bool no_compress = false;
  bool stream = false;
  std::string compress = "lz4";
};

const Command record_cmd(31, [](CLI::App &app) {
  auto o = std::make_shared<RecordOpts>();
  auto *cmd = app.add_subcommand("record", "Record a session's records to a self-describing file");
  add_capture_flags(cmd, o->flags);
  cmd->add_option("-o,--output", o->output, "File to write (- for stdout)")->required();
  cmd->add_flag("-q,--quiet", o->quiet, "No status line and no summary");
  cmd->add_option("--compress", o->compress,
                  "How record chunks are compressed, where that saves space (records delta-encoded "
                  "first; trace format 6): lz4 (the default), zstd (about a third of the size, more "
                  "CPU while recording) or none (format 3)")
      ->check(CLI::IsMember({"lz4", "zstd", "none"}));
  cmd->add_flag("--no-compress", o->no_compress, "--compress none");
  cmd->add_flag("--stream", o->stream,
                "Write the file as records come (merged and compressed while recording) instead of "
                "parking them raw per CPU until the stop: needs no room beyond the file, costs the "
                "traced work more");
  cmd->add_option("spec", o->cap.specs, "What to attach before starting (probe specifications)");
  cmd->footer(
      "The file holds the records plus what decoding needs on another machine: record\n"
      "schemas (probes included), CPU count, clock, kernel release, hostname, process\n"
      "names and the kallsyms lines that name its records' addresses; records are\n"
      "LZ4-compressed in 1 MiB chunks where that saves space (--compress zstd: smaller).\n"
      "Decode it with 'ktrackctl report FILE'.\n"
      "While recording to a regular file (not a link, in a directory it may write to), each\n"
      "CPU's records are parked raw next to it (FILE.cpuN.spool, as trace-cmd does; any left\n"
      "there are removed, and named) and merged, compressed and written at the stop: the traced work\n"
      "pays a write(2) per run of records, not a decode of each.  Until the stop that takes\n"
      "the records' raw size on disk (several times the file).  --stream writes them\n"
      "compressed as they come, as do -o -, -c, --count, --flight and --mode overwrite.  If\n"
      "recording fails, or a Ctrl-C comes while they are merged, the parked files are kept\n"
      "and named ('ktrackctl report FILE.cpuN.spool' reads one).\n"
      "Once 'recording to FILE' (and the probe lines) are on stderr, every hit is\n"
      "recorded or counted lost.  When stderr is a terminal a status line shows events,\n"
      "bytes, lost and rates.\n"
      "Ctrl-C, SIGTERM or the -d duration stop cleanly: the session is flushed, every\n"
      "record up to the stop is written and the file is finished.\n"
      "With '-- COMMAND [ARGS]', runs COMMAND (stdio inherited) once recording has begun and\n"
      "stops when it exits (or at -d, whichever comes first: COMMAND then gets SIGTERM);\n"
      "ktrackctl exits with COMMAND's status (127: not found, 126: not executable).\n"
      "Examples:\n"
      "  sudo ktrackctl record -o trace.ktrack\n"
      "  sudo ktrackctl record -o drv.ktrack 'f:drv mydrv:*%both' -- insmod mydrv.ko\n"
      "  sudo ktrackctl record -o trace.ktrack -d 10s --buffer-pages 1024\n"
      "  sudo ktrackctl record -s mysession -o trace.ktrack -p 1234\n"
      "  sudo ktrackctl record -o app.ktrack 'ur:d /usr/bin/foo:parse ret=$retval dur=$duration' -- foo\n"
      "(SPEC forms, p r f t e u ur: 'ktrackctl probe --help')\n"
      "A probe's '=> snapshot' action (with --flight) has the kernel copy the history up to\n"
      "that hit aside while recording goes on; each copy is saved as FILE.snapN.ktr.\n"
      "  sudo ktrackctl record --flight 64M -o run.ktr 'r:bad mydrv:submit ret=$retval:s32 if ret < 0 => "
      "snapshot'");
  cmd->callback([o] {
    apply_capture_flags(o->flags, o->cap);
    const bool snapshots = has_snapshot_action(o->cap.specs);
    if (snapshots && o->output == "-")
      throw ktrack::UsageError(
          "'=> snapshot' saves each copy next to the output file: give -o FILE, not -o -");
    CommandUnderCapture command;
    ktrack::StopSignals signals;
    follow_process_trees(o->cap.specs, o->cap, command, signals);
    const std::string kallsyms = ktrack::read_kallsyms();  // before the probes (see trace)
    const ktrack::RecordCodec codec = o->no_compress || o->compress == "none" ? ktrack::RecordCodec::None
                                      : o->compress == "zstd"                 ? ktrack::RecordCodec::Zstd
                                                                              : ktrack::RecordCodec::Lz4;
    // Each snapshot to FILE.snapN.ktr as it comes, while recording goes on.
    ktrack::Capture *capture = nullptr;
    uint64_t nr_snapshots = 0;
    if (snapshots)
      o->cap.on_snapshot = [&](ktrack::Snapshot &&snap) {
        const std::string path = ktrack::snapshot_path(o->output, nr_snapshots + 1);
        const uint64_t n = ktrack::write_snapshot(*capture, path, kallsyms, codec, snap);
        nr_snapshots++;
        if (!o->quiet)
          fmt::print(
              stderr, "{}snapshot {} (probe id {}, turn {}): {} records to {}{}\n",
              ::isatty(STDERR_FILENO) ? "\r\033[K" : "", nr_snapshots, snap.probe_id, snap.nth, n, path,
              snap.overrun ? " (a CPU's ring was overwritten past the moment before the copy: a larger "
                             "--flight keeps more)"
                           : "");
      };
    ktrack::Capture cap(o->cap);
    capture = &cap;
    ktrack::Recorder writer(cap, o->output, kallsyms, codec, o->stream);
    const bool status = !o->quiet && ::isatty(STDERR_FILENO);
    // A failure's messages (the recorder's, then the error) start on a line
    // of their own, not after the status line.  Declared after 'writer', so
    // it goes first.
    struct ClearStatusOnError {
      bool on;
      ~ClearStatusOnError() {
        if (on && std::uncaught_exceptions()) fmt::print(stderr, "\r\033[K");
      }
    } clear_status{status};
    uint64_t last_events = 0, last_bytes = 0;
    double last_s = 0;
    start_capture(cap, o->quiet ? "" : fmt::format("recording to {}", o->output));
    command.start(signals);
    writer.run(ktrack::StopSignals::flag(), [&](const ktrack::CaptureStatus &st) {
      if (!status) return;
      double dt = st.seconds - last_s;
      if (dt <= 0) dt = 1;
      fmt::print(stderr, "\r\033[K{} events  {}  {} lost  {:.0f} events/s  {}/s", st.events,
                 ktrack::human_bytes(writer.bytes_so_far()), st.lost, (st.events - last_events) / dt,
                 ktrack::human_bytes(static_cast<uint64_t>((writer.bytes_so_far() - last_bytes) / dt)));
      last_events = st.events;
      last_bytes = writer.bytes_so_far();
      last_s = st.seconds;
    });
    // The Ctrl-C that ended the recording is spent; one after it (while the
    // command ends or the records merge) stops the merge, and the parked
    // files stay for 'report'.
    const unsigned interrupts = ktrack::StopSignals::interrupts();
    command.finish();
    if (status && writer.parking())
      fmt::print(stderr, "\r\033[Kmerging the {} parked into {} (Ctrl-C: stop, keep them parked)",
                 ktrack::human_bytes(writer.bytes_so_far()), o->output);
    writer.finish([interrupts] { return ktrack::StopSignals::interrupts() != interrupts; });
    if (status) fmt::print(stderr, "\r\033[K");
    if (!o->quiet) {
      const ktrack::TraceWriter &f = writer.file();
      std::string packed;
      if (f.record_bytes_stored() && f.record_bytes_stored() < f.record_bytes_raw())
        packed =
            fmt::format(", records compressed {:.1f}x", static_cast<double>(f.record_bytes_raw()) /
                                                            static_cast<double>(f.record_bytes_stored()));
      fmt::print(stderr, "recorded {} events ({}{}), {} lost, in {:.1f} s to {}\n", writer.records(),
                 ktrack::human_bytes(writer.bytes_written()), packed, writer.lost(), cap.status().seconds,
                 o->output);
      if (cap.status().after_count)
        fmt::print(stderr, "--count reached: {} more records produced before the stop were not written\n",
                   cap.status().after_count);
      const uint64_t snapshots_missed = snapshots ? cap.session().snapshot_counts().second : 0;
      if (snapshots && cap.status().snapshot_errors)
        fmt::print(stderr, "{} snapshots could not be saved: {}\n", cap.status().snapshot_errors,
                   cap.status().snapshot_error);
      if (snapshots)
        fmt::print(stderr, "{} snapshot{} saved{}\n", nr_snapshots, nr_snapshots == 1 ? "" : "s",
                   snapshots_missed
                       ? fmt::format(", {} missed (each came while the one before was still being copied or "
                                     "saved, or found no memory within the module's max_total_pages)",
                                     snapshots_missed)
                       : std::string());
      if (cap.status().trigger_stopped)
        fmt::print(stderr,
                   "a probe's '=> stop' action ended the recording (its trigger record marks the moment)\n");
      for (const auto &line : cap.summary()) fmt::print(stderr, "{}\n", line);
    }
  });
});

}  // namespace
}  // namespace ktrackctl
