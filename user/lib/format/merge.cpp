#include "format/merge.hpp"

#include <fmt/core.h>

#include <cstddef>
#include <cstring>

#include <uapi/ktrack.h>

#include "util/error.hpp"

namespace ktrack {

RecordMerger::RecordMerger() = default;

void RecordMerger::RefRing::grow() {
  // Small at first: a file may name thousands of CPUs, and a ring per CPU
  // of 16,384 refs (384 KiB) each, counted nowhere, made a 75 KB file cost
  // 3 GB (review).  Doubling keeps the growth cheap.
  std::vector<Ref> bigger(v.empty() ? 64 : v.size() * 2);
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

void RecordMerger::add(Block *b, uint32_t off) {
  ktrack_rec_hdr h;
  std::memcpy(&h, b->data.data() + off, sizeof(h));
  if (h.type == KTRACK_REC_PAD) return;
  if (h.cpu >= kMaxCpus) throw Error(fmt::format("record claims CPU {}, beyond any machine", h.cpu));
  if (h.cpu >= cpus_.size()) cpus_.resize(h.cpu + 1u);
  auto &q = cpus_[h.cpu];
  if (q.empty()) heap_.push({h.ts, seq_++, h.cpu});
  q.push_back({b, off, h.len, h.ts});
  b->live++;
  buffered_ += h.len;
}

void RecordMerger::push(std::span<const uint8_t> rec) {
  uint16_t len;
  std::memcpy(&len, rec.data(), 2);
  // Appending must never reallocate: refs point into the block.
  if (!current_ || current_->data.size() + len > current_->data.capacity()) {
    Block *old = current_;
    current_ = new_block();
    current_->data = take_buffer();
    if (current_->data.capacity() < kBlockSize) current_->data.reserve(kBlockSize);
    current_->held = current_->data.capacity();
    held_ += current_->held;
    release(old);
  }
  uint32_t off = static_cast<uint32_t>(current_->data.size());
  current_->data.insert(current_->data.end(), rec.data(), rec.data() + len);
  add(current_, off);
}

ByteBuffer RecordMerger::take_buffer() {
  if (spare_.empty()) return {};
  ByteBuffer v = std::move(spare_.back());
  spare_.pop_back();
  return v;
}

void RecordMerger::push_buffer(ByteBuffer &&buf) {
  Block *b = new_block();
  b->data = std::move(buf);
  b->held = b->data.capacity();
  held_ += b->held;
  size_t off = 0;
  while (off + sizeof(ktrack_rec_hdr) <= b->data.size()) {
    uint16_t len;
    std::memcpy(&len, b->data.data() + off, 2);
    if (len < sizeof(ktrack_rec_hdr) || off + len > b->data.size()) break;
    add(b, static_cast<uint32_t>(off));
    off += len;
  }
  release(b);
}

bool RecordMerger::pop(std::span<const uint8_t> &out) {
  Block *prev = popped_from_;
  popped_from_ = nullptr;
  release(prev);
  Entry top;
  if (has_hot_ && (heap_.empty() || !(hot_ > heap_.top()))) {
    top = hot_;
    has_hot_ = false;
  } else if (!heap_.empty()) {
    top = heap_.top();
    heap_.pop();
    if (has_hot_) {
      heap_.push(hot_);
      has_hot_ = false;
    }
  } else {
    return false;
  }
  auto &q = cpus_[top.cpu];
  Ref r = q.front();
  q.pop_front();
  out = std::span<const uint8_t>(r.block->data.data() + r.off, r.len);
  r.block->live--;
  buffered_ -= r.len;
  popped_from_ = r.block;
  if (!q.empty()) {
    hot_ = {q.front().ts, seq_++, top.cpu};
    has_hot_ = true;
  }
  return true;
}

}  // namespace ktrack
