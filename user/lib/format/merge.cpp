#include "format/merge.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstddef>
#include <cstring>

#include <uapi/ktrack.h>

#include "util/error.hpp"

namespace ktrack {

RecordMerger::RecordMerger() = default;

void RecordMerger::SegRing::grow() {
  // Small at first: a file may name thousands of CPUs, and a ring per CPU
  // of 16,384 refs (384 KiB) each, counted nowhere, made a 75 KB file cost
  // 3 GB (review).  Doubling keeps the growth cheap.
  std::vector<Seg> bigger(v.empty() ? 16 : v.size() * 2);
  for (size_t i = 0; i < size; i++) bigger[i] = v[(head + i) & (v.size() - 1)];
  v = std::move(bigger);
  head = 0;
}
RecordMerger::~RecordMerger() = default;

// A block object with no buffer; the caller gives it one.
RecordMerger::Block *RecordMerger::new_block() {
  if (!free_.empty()) {
    Block *b = free_.back();
    free_.pop_back();
    b->live = 0;
    return b;
  }
  blocks_.push_back(std::make_unique<Block>());
  return blocks_.back().get();
}

void RecordMerger::release(Block *b) {
  if (!b || b->live != 0 || b == current_ || b == popped_from_) return;
  held_ -= b->held;
  b->held = 0;
  recycle(std::move(b->data));
  b->data = ByteBuffer();
  free_.push_back(b);
}

void RecordMerger::recycle(ByteBuffer &&buf) {
  if (buf.capacity() == 0) return;
  buf.clear();
  // Never more buffers than were ever in flight at once (the reorder window).
  spare_.push_back(std::move(buf));
}

uint64_t RecordMerger::ts_at(const Block *b, uint32_t off) const {
  uint64_t ts;
  std::memcpy(&ts, b->data.data() + off + offsetof(ktrack_rec_hdr, ts), sizeof(ts));
  return ts;
}

void RecordMerger::set_key(uint32_t cpu, Key k) {
  keys_[cpu] = k;
  for (uint32_t n = leaves_ + cpu; n > 1; n >>= 1) {
    uint32_t x = tree_[n], y = tree_[n ^ 1u];
    tree_[n >> 1] = keys_[y] < keys_[x] ? y : x;
  }
}

// The run's CPU gets its key now, as the heap merge gave it after each pop:
// before any other key is set, so ties keep arrival order.
void RecordMerger::end_run() {
  if (run_ < 0) return;
  uint32_t c = static_cast<uint32_t>(run_);
  run_ = -1;
  set_key(c, {cpus_[c].head_ts, seq_++});
}

// Queues the records [off, end) of one CPU in block b.
void RecordMerger::append(Block *b, uint16_t cpu, uint32_t off, uint32_t end) {
  if (cpu >= cpus_.size()) {
    end_run();
    cpus_.resize(cpu + 1u);
    if (cpus_.size() > leaves_) {
      // Rebuild for twice the slots (rare: once per doubling).
      uint32_t n = std::max<uint32_t>(leaves_ * 2, 4);
      while (n < cpus_.size()) n *= 2;
      keys_.resize(n, kNone);
      leaves_ = n;
      tree_.assign(2 * n, 0);
      for (uint32_t i = 0; i < n; i++) tree_[n + i] = i;
      for (uint32_t i = n - 1; i >= 1; i--) {
        uint32_t x = tree_[2 * i], y = tree_[2 * i + 1];
        tree_[i] = keys_[y] < keys_[x] ? y : x;
      }
    }
  }
  buffered_ += end - off;
  auto &c = cpus_[cpu];
  if (c.q.empty()) {
    end_run();
    c.q.push_back({b, off, end});
    b->live++;
    c.front_to_cursor();
    c.head_ts = ts_at(b, off);
    active_++;
    set_key(cpu, {c.head_ts, seq_++});
    return;
  }
  Seg &last = c.q.back();
  if (last.block == b && last.end == off) {  // push() of the next record
    last.end = end;
    if (c.q.size == 1) c.end = b->data.data() + end;
    return;
  }
  c.q.push_back({b, off, end});
  b->live++;
}

void RecordMerger::make_room(size_t len) {
  // Appending must never reallocate: queued runs point into the block.
  if (current_ && current_->data.size() + len <= current_->data.capacity()) return;
  Block *old = current_;
  current_ = new_block();
  current_->data = take_buffer();
  if (current_->data.capacity() < std::max(len, kBlockSize))
    current_->data.reserve(std::max(len, kBlockSize));
  current_->held = current_->data.capacity();
  held_ += current_->held;
  release(old);
}

void RecordMerger::push(std::span<const uint8_t> rec) {
  ktrack_rec_hdr h;
  std::memcpy(&h, rec.data(), sizeof(h));
  if (h.type == KTRACK_REC_PAD) return;
  if (h.cpu >= kMaxCpus) throw Error(fmt::format("record claims CPU {}, beyond any machine", h.cpu));
  make_room(h.len);
  uint32_t off = static_cast<uint32_t>(current_->data.size());
  append_bytes(current_->data, rec.data(), h.len);
  append(current_, h.cpu, off, off + h.len);
}

void RecordMerger::push_records(std::span<const uint8_t> recs) {
  // The length and type of the record at 'at' (a PAD may be short: 8
  // bytes, no header); throws on a length no ring writes.
  auto record_at = [&](size_t at, uint16_t &len) {
    uint16_t type = KTRACK_REC_PAD;
    if (recs.size() - at >= 4) {
      std::memcpy(&len, recs.data() + at, sizeof(len));
      std::memcpy(&type, recs.data() + at + 2, sizeof(type));
    } else {
      len = 0;
    }
    if (len < 8 || len % 8 || (type != KTRACK_REC_PAD && len < sizeof(ktrack_rec_hdr)) ||
        len > recs.size() - at)
      throw Error(fmt::format("a run of records holds a corrupt length {} at byte {}", len, at));
    return type == KTRACK_REC_PAD;
  };
  while (!recs.empty()) {
    uint16_t len;
    if (record_at(0, len)) {  // a PAD: not a record
      recs = recs.subspan(len);
      continue;
    }
    make_room(len);
    // As many whole records as the block still holds, up to a PAD.
    const size_t room = current_->data.capacity() - current_->data.size();
    size_t n = 0;
    while (n < recs.size() && !record_at(n, len) && n + len <= room) n += len;
    const size_t off = current_->data.size();
    append_bytes(current_->data, recs.data(), n);
    index_runs(current_, off, off + n);
    recs = recs.subspan(n);
  }
}

ByteBuffer RecordMerger::take_buffer() {
  if (spare_.empty()) return {};
  ByteBuffer v = std::move(spare_.back());
  spare_.pop_back();
  return v;
}

void RecordMerger::index_runs(Block *b, size_t off, size_t end) {
  const uint8_t *d = b->data.data();
  size_t run_start = off;
  uint32_t run_cpu = UINT32_MAX;  // none
  auto flush = [&] {
    if (run_cpu != UINT32_MAX && run_start < off)
      append(b, static_cast<uint16_t>(run_cpu), static_cast<uint32_t>(run_start), static_cast<uint32_t>(off));
    run_cpu = UINT32_MAX;
  };
  while (off + sizeof(ktrack_rec_hdr) <= end) {
    ktrack_rec_hdr h;
    std::memcpy(&h, d + off, sizeof(h));
    if (h.len < sizeof(ktrack_rec_hdr) || off + h.len > end) break;
    if (h.type == KTRACK_REC_PAD || h.cpu != run_cpu) {
      flush();
      if (h.type == KTRACK_REC_PAD) {
        off += h.len;
        continue;
      }
      if (h.cpu >= kMaxCpus) throw Error(fmt::format("record claims CPU {}, beyond any machine", h.cpu));
      run_cpu = h.cpu;
      run_start = off;
    }
    off += h.len;
  }
  flush();
}

void RecordMerger::push_buffer(ByteBuffer &&buf) {
  Block *b = new_block();
  b->data = std::move(buf);
  b->held = b->data.capacity();
  held_ += b->held;
  try {
    index_runs(b, 0, b->data.size());
  } catch (...) {
    release(b);
    throw;
  }
  release(b);
}

bool RecordMerger::pop(std::span<const uint8_t> &out) {
  Block *prev = popped_from_;
  popped_from_ = nullptr;
  // release()'s own test first: most pops leave their block in use
  if (prev && prev->live == 0) release(prev);
  uint32_t c;
  if (run_ >= 0 && cpus_[static_cast<uint32_t>(run_)].head_ts < run_limit_) {
    c = static_cast<uint32_t>(run_);
  } else {
    end_run();
    if (active_ == 0) return false;
    c = tree_[1];
  }
  auto &cpu = cpus_[c];
  const uint8_t *r = cpu.cur;
  uint16_t len;
  std::memcpy(&len, r, sizeof(len));
  out = std::span<const uint8_t>(r, len);
  popped_from_ = cpu.block;
  buffered_ -= len;
  cpu.cur = r + len;
  if (cpu.cur >= cpu.end) {
    cpu.block->live--;
    cpu.q.pop_front();
    if (cpu.q.empty()) {
      cpu.cur = cpu.end = nullptr;
      cpu.block = nullptr;
      run_ = -1;
      active_--;
      set_key(c, kNone);
      return true;
    }
    cpu.front_to_cursor();
  }
  // The records were decompressed a window ago: ask for the lines after
  // this CPU's next record now (the hardware's prefetcher loses track of
  // CPUs interleaved record by record).  Past the buffer's end it is a
  // hint that touches nothing.
  __builtin_prefetch(cpu.cur + 128);
  std::memcpy(&cpu.head_ts, cpu.cur + offsetof(ktrack_rec_hdr, ts), sizeof(cpu.head_ts));
  if (run_ == static_cast<int32_t>(c)) return true;  // checked at the next pop
  set_key(c, {cpu.head_ts, seq_++});
  if (tree_[1] == c) {
    // Still the oldest: a run, until another CPU's next record is as old
    // (those keys are older, so they win ties).
    uint64_t limit = UINT64_MAX;
    for (uint32_t n = leaves_ + c; n > 1; n >>= 1) limit = std::min(limit, keys_[tree_[n ^ 1u]].ts);
    run_ = static_cast<int32_t>(c);
    run_limit_ = limit;
  }
  return true;
}

}  // namespace ktrack
