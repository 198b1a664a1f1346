// Reading records out of a session.
//
//   RingView       one CPU's ring (control page + data area) in memory: the
//                  consumer protocol of include/uapi/ktrack.h, discard and
//                  overwrite modes, usable on a fake ring (unit tests).
//   MmapReader     maps every CPU's ring of a Session and drains them from
//                  ONE thread with poll(2) on the session fd: the kernel
//                  wakes one waiter per watermark crossing for all CPUs,
//                  and a single loop that sweeps every ring per wakeup
//                  drains faster on few CPUs than a thread per CPU (no
//                  cross-thread hand-off, records of a CPU stay in order).
//   ReadReader     the plain read(2) stream (records of all CPUs, whole).
//
// Both readers deliver raw records: a byte span starting with struct
// ktrack_rec_hdr (hdr.len bytes), in stream order per CPU.  Gaps appear as
// KTRACK_REC_LOST records: written by the kernel (discard mode, reason
// FULL), or synthesised by the reader when an overwrite-mode writer lapped
// it (reason OVERWRITTEN, count exact, first_ts/last_ts 0 = unknown).
// Spans are valid only during the callback.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include <uapi/ktrack.h>

namespace ktrack {

class Session;

// cpu: ring index; rec: hdr.len bytes starting with ktrack_rec_hdr.
using RecordCallback = std::function<void(uint32_t cpu, std::span<const std::byte> rec)>;

struct ReaderCounters {
  uint64_t records = 0;  // delivered, lost markers included
  uint64_t bytes = 0;    // delivered bytes
  uint64_t lost = 0;     // sum of the counts of every LOST record delivered
};

// cpu: ring index; recs: whole records back to back (each hdr.len bytes),
// no PAD records.
using RunCallback = std::function<void(uint32_t cpu, std::span<const std::byte> recs)>;

// Throws ktrack::Error when the ring data is inconsistent (corrupt length).
class RingView {
 public:
  // 'ctrl' and 'data' (ctrl->data_size bytes) stay owned by the caller.
  RingView(ktrack_ring_ctrl *ctrl, const std::byte *data, uint32_t cpu);
  // Delivers every record committed now (at most max_records); returns how
  // many were delivered.  Advances data_tail/tail_index after each record.
  size_t drain(const RecordCallback &cb, size_t max_records = SIZE_MAX);
  // The records committed when it is called, as drain() gives them, in
  // runs: each contiguous stretch of the ring (up to the wrap, at most
  // kMaxRun bytes) in one call, its space given back to the writer after
  // the call returns.  What a recorder wants: one copy per run, not
  // a call per record.  Overwrite mode delivers a record per call (each is
  // copied and checked against the writer, see drain()).
  size_t drain_runs(const RunCallback &cb);
  // The longest run one call hands over: the writer waits for no longer
  // write(2) than this (its space comes back after each call).
  static constexpr uint64_t kMaxRun = 256 << 10;
  // Unread bytes (head - tail) as published now.
  uint64_t unread() const;
  uint32_t cpu() const { return cpu_; }
  const ReaderCounters &counters() const { return counters_; }

 private:
  bool read_oldest(uint64_t &pos, uint64_t &index) const;
  void deliver_lost(const RecordCallback &cb, uint64_t count);

  ktrack_ring_ctrl *ctrl_;
  const std::byte *data_;
  uint64_t size_;
  uint32_t cpu_;
  uint64_t pos_;
  uint64_t index_;
  uint64_t last_ts_ = 0;
  std::vector<std::byte> scratch_;
  ReaderCounters counters_;
};

class MmapReader {
 public:
  // Maps every CPU's ring (allocates the buffers if the session has none).
  explicit MmapReader(const Session &s);
  ~MmapReader();
  MmapReader(const MmapReader &) = delete;
  MmapReader &operator=(const MmapReader &) = delete;

  // One sweep over every CPU; returns records delivered.
  size_t drain(const RecordCallback &cb);
  // One sweep over every CPU in runs (RingView::drain_runs).
  size_t drain_runs(const RunCallback &cb);
  // poll(2) on the session fd: true when data is ready, false on timeout.
  bool wait(int timeout_ms);
  // wait + drain until 'stop' becomes true, then a final drain (call
  // Session::stop() or flush() first so the last records are committed).
  void run(const RecordCallback &cb, const std::atomic<bool> &stop, int poll_ms = 100);
  uint32_t nr_cpus() const { return static_cast<uint32_t>(rings_.size()); }
  ReaderCounters counters() const;  // sum over CPUs

 private:
  int fd_;
  std::vector<std::pair<void *, size_t>> maps_;
  std::vector<RingView> rings_;
};

// Sets O_NONBLOCK on the session fd (drain() never blocks; wait() polls).
class ReadReader {
 public:
  // buf_bytes: read(2) size (at least KTRACK_REC_MAX + 1 is safe).
  explicit ReadReader(const Session &s, size_t buf_bytes = 1 << 20);
  // One read(2) (non-blocking); returns records delivered, 0 when nothing
  // was available.  'eof' is set when read() returned 0 (stopped, drained).
  size_t drain(const RecordCallback &cb, bool *eof = nullptr);
  bool wait(int timeout_ms);
  void run(const RecordCallback &cb, const std::atomic<bool> &stop, int poll_ms = 100);
  const ReaderCounters &counters() const { return counters_; }

 private:
  int fd_;
  std::vector<std::byte> buf_;
  ReaderCounters counters_;
};

// Splits a buffer of concatenated records (a read(2) result or a raw
// stream file) into records; returns the bytes consumed (a trailing
// partial record is left).  Throws Error on a malformed length.
size_t for_each_record(std::span<const std::byte> buf,
                       const std::function<void(std::span<const std::byte>)> &cb);

}  // namespace ktrack
