// K-way merge of records by timestamp across CPUs.  Records of one CPU keep
// their order (ring order, including lost markers); between CPUs, the
// record with the smallest timestamp goes first (ties: arrival order).
// Used by the file reader (with a reorder window) and the live views (one
// drain sweep at a time).
//
// Records live in blocks: push() copies into the current block;
// push_buffer() adopts a whole buffer of records without copying.  pop()
// returns a view into a block, valid until the next pop/push.  Emptied
// blocks are recycled, so steady-state merging allocates nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <span>
#include <utility>
#include <vector>

namespace ktrack {

// Allocator whose resize() leaves new bytes uninitialized (read buffers are
// overwritten at once; zeroing them first costs a pass over every chunk).
template <typename T>
struct DefaultInitAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  using std::allocator<T>::allocator;
  template <typename U>
  void construct(U *p) noexcept {
    ::new (static_cast<void *>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U *p, Args &&...args) {
    ::new (static_cast<void *>(p)) U(std::forward<Args>(args)...);
  }
};
using ByteBuffer = std::vector<uint8_t, DefaultInitAllocator<uint8_t>>;

class RecordMerger {
 public:
  RecordMerger();
  ~RecordMerger();
  RecordMerger(const RecordMerger &) = delete;
  RecordMerger &operator=(const RecordMerger &) = delete;

  // Copies one whole record (header + payload; the caller validated its
  // length).  PAD records are dropped.  Throws Error for CPU >= kMaxCpus.
  void push(std::span<const uint8_t> rec);
  // A recycled buffer (empty, capacity kept) to fill with whole records and
  // hand to push_buffer().
  ByteBuffer take_buffer();
  // Adopts 'buf' (whole records, validated lengths) without copying.
  void push_buffer(ByteBuffer &&buf);
  // The next record in merged order; false when empty.
  bool pop(std::span<const uint8_t> &out);
  size_t buffered_bytes() const { return buffered_; }
  // Bytes of the buffers that hold records not popped yet: what the merger
  // keeps in memory.  A single pending record keeps its whole buffer (a
  // decompressed chunk can be hundreds of times the bytes it was read
  // from), so readers bound their window by this, not by the records.
  size_t held_bytes() const { return held_; }
  bool empty() const { return heap_.empty() && !has_hot_; }
  // Gives an emptied buffer back for take_buffer() to hand out again.
  void recycle(ByteBuffer &&buf);

  static constexpr uint32_t kMaxCpus = 8192;
  static constexpr size_t kBlockSize = 1 << 20;

 private:
  struct Block {
    ByteBuffer data;
    size_t live = 0;  // records not popped yet
    size_t held = 0;  // data's capacity, counted in held_ until released
  };
  struct Ref {
    Block *block;
    uint32_t off;
    uint16_t len;
    uint64_t ts;
  };
  struct Entry {
    uint64_t ts;
    uint64_t seq;
    uint16_t cpu;
    bool operator>(const Entry &o) const { return ts != o.ts ? ts > o.ts : seq > o.seq; }
  };
  // One CPU's pending records, oldest first: a ring that grows by doubling
  // (a deque allocates a node per few dozen records).
  struct RefRing {
    std::vector<Ref> v;
    size_t head = 0, size = 0;
    bool empty() const { return size == 0; }
    Ref &front() { return v[head]; }
    void pop_front() {
      head = (head + 1) & (v.size() - 1);
      size--;
    }
    void push_back(const Ref &r) {
      if (size == v.size()) grow();
      v[(head + size) & (v.size() - 1)] = r;
      size++;
    }
    void grow();
  };
  Block *new_block();
  void add(Block *b, uint32_t off);
  void release(Block *b);

  std::vector<RefRing> cpus_;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap_;
  std::vector<std::unique_ptr<Block>> blocks_;  // every block, owned
  std::vector<Block *> free_;                   // unused blocks (data empty)
  // Emptied buffers, capacity kept: recycling them means steady-state
  // reading touches no fresh pages (page faults cost more than decoding).
  std::vector<ByteBuffer> spare_;
  // The CPU popped last stays out of the heap while it keeps winning:
  // records of one CPU come in runs, and a run costs no heap operations.
  Entry hot_{};
  bool has_hot_ = false;
  Block *current_ = nullptr;      // push() appends here
  Block *popped_from_ = nullptr;  // holds the last pop()'s bytes
  uint64_t seq_ = 0;
  size_t buffered_ = 0;
  size_t held_ = 0;
};

}  // namespace ktrack
