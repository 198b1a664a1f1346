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
#include <cstring>
#include <memory>
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

// Appends n bytes.  ByteBuffer's allocator constructs element by element,
// so insert() copies a byte at a time: grow (nothing is constructed), then
// one memcpy.
inline void append_bytes(ByteBuffer &buf, const uint8_t *p, size_t n) {
  const size_t at = buf.size();
  buf.resize(at + n);
  std::memcpy(buf.data() + at, p, n);
}

class RecordMerger {
 public:
  RecordMerger();
  ~RecordMerger();
  RecordMerger(const RecordMerger &) = delete;
  RecordMerger &operator=(const RecordMerger &) = delete;

  // Copies one whole record (header + payload; the caller validated its
  // length).  PAD records are dropped.  Throws Error for CPU >= kMaxCpus.
  void push(std::span<const uint8_t> rec);
  // Copies whole records back to back (a ring drain's run: validated
  // lengths; PAD records dropped) with one copy per block they fill and a
  // queue entry per run of one CPU's records, not per record.  Throws
  // Error for CPU >= kMaxCpus.
  void push_records(std::span<const uint8_t> recs);
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
  bool empty() const { return active_ == 0; }
  // Gives an emptied buffer back for take_buffer() to hand out again.
  void recycle(ByteBuffer &&buf);

  static constexpr uint32_t kMaxCpus = 8192;
  static constexpr size_t kBlockSize = 1 << 20;

 private:
  struct Block {
    ByteBuffer data;
    size_t live = 0;  // segments not fully popped yet
    size_t held = 0;  // data's capacity, counted in held_ until released
  };
  // A run of one CPU's records, contiguous in a block: the recorder drains
  // per-CPU batches, so a chunk is a few long runs.  Queuing runs instead
  // of a ref per record keeps the queues small enough to stay in cache
  // (a ref per record over a 16 MiB window was megabytes, written once and
  // read once, a quarter of hist's time).  pop() reads the front run
  // through its CPU's cursor (Cpu::cur), not through 'off'.
  struct Seg {
    Block *block;
    uint32_t off, end;
  };
  // Merge key of a CPU's next record: ties in ts go to the CPU whose key
  // was set first (arrival order).  Unique, as seq only grows.
  struct Key {
    uint64_t ts, seq;
    bool operator<(const Key &o) const { return ts != o.ts ? ts < o.ts : seq < o.seq; }
  };
  static constexpr Key kNone{UINT64_MAX, UINT64_MAX};
  // One CPU's pending runs, oldest first: a ring that grows by doubling
  // (a deque allocates a node per few dozen entries).
  struct SegRing {
    std::vector<Seg> v;
    size_t head = 0, size = 0;
    bool empty() const { return size == 0; }
    Seg &front() { return v[head]; }
    Seg &back() { return v[(head + size - 1) & (v.size() - 1)]; }
    void pop_front() {
      head = (head + 1) & (v.size() - 1);
      size--;
    }
    void push_back(const Seg &r) {
      if (size == v.size()) grow();
      v[(head + size) & (v.size() - 1)] = r;
      size++;
    }
    void grow();
  };
  // pop() reads the front run through 'cur' and 'end' (q.front()'s 'off'
  // is stale while it is the front): one load reaches the next record,
  // not a chain through the queue, the block and its buffer.
  struct Cpu {
    SegRing q;
    const uint8_t *cur = nullptr, *end = nullptr;  // q.front()'s unread records
    Block *block = nullptr;                        // q.front()'s block
    uint64_t head_ts = 0;                          // ts of the record at 'cur'
    void front_to_cursor() {
      const Seg &f = q.front();
      block = f.block;
      cur = f.block->data.data() + f.off;
      end = f.block->data.data() + f.end;
    }
  };
  Block *new_block();
  void append(Block *b, uint16_t cpu, uint32_t off, uint32_t end);
  // Queues the records of b->data[off, end) as runs of one CPU each; stops
  // at a length that does not fit (a corrupt tail).
  void index_runs(Block *b, size_t off, size_t end);
  // current_, with room for 'len' more bytes (a fresh block if not).
  void make_room(size_t len);
  void release(Block *b);
  // The tournament: set_key() replays one CPU's path to the root.
  void set_key(uint32_t cpu, Key k);
  void end_run();
  uint64_t ts_at(const Block *b, uint32_t off) const;

  std::vector<Cpu> cpus_;
  // Winner tree over CPU slots: leaves at [leaves_, 2 * leaves_), each node
  // the slot whose key is smallest below it.  A pop replays one path (log2
  // of the CPUs, two compares a level) instead of a heap pop and push.
  std::vector<Key> keys_;       // per slot; kNone when its queue is empty
  std::vector<uint32_t> tree_;  // tree_[1] is the winner
  uint32_t leaves_ = 0;
  size_t active_ = 0;  // CPUs with pending records
  // The CPU popped last, while its next record is older than every other
  // CPU's (run_limit_): records of one CPU come in runs, and a run costs
  // one compare per record, no tree replay.  Its key in the tree is stale
  // until end_run().
  int32_t run_ = -1;
  uint64_t run_limit_ = 0;
  std::vector<std::unique_ptr<Block>> blocks_;  // every block, owned
  std::vector<Block *> free_;                   // unused blocks (data empty)
  // Emptied buffers, capacity kept: recycling them means steady-state
  // reading touches no fresh pages (page faults cost more than decoding).
  std::vector<ByteBuffer> spare_;
  Block *current_ = nullptr;      // push() appends here
  Block *popped_from_ = nullptr;  // holds the last pop()'s bytes
  uint64_t seq_ = 0;
  size_t buffered_ = 0;
  size_t held_ = 0;
};

}  // namespace ktrack
