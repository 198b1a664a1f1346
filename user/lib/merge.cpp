#include "ktrack/merge.hpp"

#include <fmt/core.h>

#include <cstddef>
#include <cstring>

#include <uapi/ktrack.h>

#include "ktrack/error.hpp"

namespace ktrack {

void RecordMerger::push(std::span<const uint8_t> rec) {
  ktrack_rec_hdr h;
  std::memcpy(&h, rec.data(), sizeof(h));
  if (h.type == KTRACK_REC_PAD) return;
  if (h.cpu >= kMaxCpus) throw Error(fmt::format("record claims CPU {}, beyond any machine", h.cpu));
  if (h.cpu >= cpus_.size()) cpus_.resize(h.cpu + 1u);
  CpuQueue &q = cpus_[h.cpu];
  if (q.head == q.buf.size()) {
    q.buf.clear();
    q.head = 0;
    heap_.push({h.ts, seq_++, h.cpu});
  } else if (q.head > (4u << 20) && q.head > q.buf.size() / 2) {
    q.buf.erase(q.buf.begin(), q.buf.begin() + static_cast<std::ptrdiff_t>(q.head));
    q.head = 0;
  }
  size_t len = h.len;
  q.buf.insert(q.buf.end(), rec.data(), rec.data() + len);
  buffered_ += len;
}

bool RecordMerger::pop(std::vector<uint8_t> &out) {
  if (heap_.empty()) return false;
  Entry top = heap_.top();
  heap_.pop();
  CpuQueue &q = cpus_[top.cpu];
  uint16_t len;
  std::memcpy(&len, q.buf.data() + q.head, 2);
  out.assign(q.buf.data() + q.head, q.buf.data() + q.head + len);
  q.head += len;
  buffered_ -= len;
  if (q.head < q.buf.size()) {
    uint64_t ts;
    std::memcpy(&ts, q.buf.data() + q.head + offsetof(ktrack_rec_hdr, ts), 8);
    heap_.push({ts, seq_++, top.cpu});
  }
  return true;
}

}  // namespace ktrack
