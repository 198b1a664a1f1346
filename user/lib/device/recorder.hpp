// Recording a live capture to a trace file (`ktrackctl record`): the file's
// header says where and how it was recorded (CPUs, clock, kernel release,
// host, session, ring mode and size), records are appended as the capture
// delivers them, and the end chunk carries the session's per-CPU totals.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "device/capture.hpp"
#include "format/trace_file.hpp"

namespace ktrack {

class Recorder {
 public:
  // Writes the header at once.  'kallsyms' is the symbol snapshot taken
  // before the capture armed its probes (host/kallsyms.hpp).
  // 'codec': how record chunks are compressed, where that pays.
  Recorder(Capture &cap, const std::string &path, std::string_view kallsyms,
           RecordCodec codec = RecordCodec::Lz4);

  void write(std::span<const uint8_t> records) { writer_.write_records(records); }
  // After Capture::run(): the per-CPU totals, then the file is closed.
  void finish();

  uint64_t records() const { return writer_.records(); }
  uint64_t bytes_written() const { return writer_.bytes_written(); }
  uint64_t lost() const { return writer_.lost(); }
  const TraceWriter &file() const { return writer_; }

 private:
  Capture &cap_;
  TraceWriter writer_;
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
