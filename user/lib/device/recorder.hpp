// Recording a live capture to a trace file (`ktrackctl record`): the file's
// header says where and how it was recorded (CPUs, clock, kernel release,
// host, session, ring mode and size), then the records, and the end chunk
// carries the session's per-CPU totals.
//
// Two ways to get the records there (Recorder::run):
//   parked (the default for a regular file): each ring's runs go to a file
//     per CPU as drained (format/record_spool.hpp, trace-cmd's way), and
//     finish() merges, picks symbols and compresses once recording
//     stopped: the traced workload pays a copy of each run and a write(2)
//     per 256 KiB of a CPU's records, not a decode per record;
//   streamed (-o - or anything but a regular file, --stream, and what needs
//     each record in order while recording: a comm filter, a count, a
//     flight recorder, overwrite mode): records are merged, and written in
//     compressed chunks, as they come.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "device/capture.hpp"
#include "format/record_spool.hpp"
#include "format/trace_file.hpp"

namespace ktrack {

class Recorder {
 public:
  // Writes the header at once.  'kallsyms' is the symbol snapshot taken
  // before the capture armed its probes (host/kallsyms.hpp).
  // 'codec': how record chunks are compressed, where that pays.  'stream':
  // never park (see above).
  Recorder(Capture &cap, const std::string &path, std::string_view kallsyms,
           RecordCodec codec = RecordCodec::Lz4, bool stream = false);
  // Unfinished with records parked (an error): the file is left without
  // its END chunk and the parked files stay, named on stderr.
  ~Recorder();
  Recorder(const Recorder &) = delete;
  Recorder &operator=(const Recorder &) = delete;

  // Records the capture until stopped (Capture::run's contract).
  void run(const std::atomic<bool> &stop, const std::function<void(const CaptureStatus &)> &on_tick = {});
  // For a caller that runs the capture itself (latency): written as they come.
  void write(std::span<const uint8_t> records) { writer_.write_records(records); }
  // After run(): merges what was parked, writes the per-CPU totals, closes
  // the file.  'abandon' returning true stops the merge (an Error; the
  // parked files stay, see ~Recorder).
  void finish(const std::function<bool()> &abandon = {});
  // run() parks records in per-CPU files until finish().
  bool parking() const { return spool_ != nullptr; }

  uint64_t records() const { return writer_.records(); }
  // The file's bytes (after finish(): all of it).
  uint64_t bytes_written() const { return writer_.bytes_written(); }
  // What recording has written so far: the file, and what is parked.
  uint64_t bytes_so_far() const { return writer_.bytes_written() + (spool_ ? spool_->bytes() : 0); }
  uint64_t lost() const { return writer_.lost(); }
  const TraceWriter &file() const { return writer_; }

 private:
  Capture &cap_;
  TraceWriter writer_;
  std::string path_;
  bool may_park_;
  std::unique_ptr<RecordSpool> spool_;  // run() parks here
};

// A probe's '=> snapshot' copy saved as a trace file of its own: the
// capture's header (plus snapshot=SEQ, snapshot_ts, snapshot_nth and
// snapshot_probe_id), schemas and kallsyms, its records merged by
// timestamp.  Returns the records written (LOST records included).
uint64_t write_snapshot(Capture &cap, const std::string &path, std::string_view kallsyms, RecordCodec codec,
                        const Snapshot &snap);
// Where snapshot SEQ of a recording to 'output' goes: "crash.ktr" ->
// "crash.snap1.ktr" (also .ktrack), anything else gets ".snap1" appended.
std::string snapshot_path(const std::string &output, uint64_t seq);

}  // namespace ktrack
