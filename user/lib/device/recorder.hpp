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

}  // namespace ktrack
