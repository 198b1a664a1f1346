// K-way merge of records by timestamp across CPUs.  Records of one CPU keep
// their order (ring order, including lost markers); between CPUs, the
// record with the smallest timestamp goes first (ties: arrival order).
// Used by the file reader (with a reorder window) and the live views (one
// drain sweep at a time).
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <span>
#include <string>
#include <vector>

namespace ktrack {

class RecordMerger {
 public:
  // Copies one whole record (header + payload; the caller validated its
  // length).  PAD records are dropped.  Throws Error for CPU >= kMaxCpus.
  void push(std::span<const uint8_t> rec);
  // Removes the next record in merged order into 'out' (valid until the
  // next pop); false when empty.
  bool pop(std::vector<uint8_t> &out);
  size_t buffered_bytes() const { return buffered_; }
  bool empty() const { return heap_.empty(); }

  static constexpr uint32_t kMaxCpus = 8192;

 private:
  struct CpuQueue {
    std::vector<uint8_t> buf;
    size_t head = 0;
  };
  struct Entry {
    uint64_t ts;
    uint64_t seq;
    uint16_t cpu;
    bool operator>(const Entry &o) const { return ts != o.ts ? ts > o.ts : seq > o.seq; }
  };
  std::vector<CpuQueue> cpus_;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap_;
  uint64_t seq_ = 0;
  size_t buffered_ = 0;
};

}  // namespace ktrack
