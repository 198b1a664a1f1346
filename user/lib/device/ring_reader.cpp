#include "device/ring_reader.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <poll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "device/session.hpp"
#include "util/error.hpp"

namespace ktrack {

namespace {

// The control page is shared with the kernel: access it atomically.
using u64 = __u64;
u64 load_acquire(const u64 &v) {
  return std::atomic_ref<u64>(const_cast<u64 &>(v)).load(std::memory_order_acquire);
}
u64 load_relaxed(const u64 &v) {
  return std::atomic_ref<u64>(const_cast<u64 &>(v)).load(std::memory_order_relaxed);
}
void store_release(u64 &v, u64 x) { std::atomic_ref<u64>(v).store(x, std::memory_order_release); }
void store_relaxed(u64 &v, u64 x) { std::atomic_ref<u64>(v).store(x, std::memory_order_relaxed); }

template <typename T>
T peek(const std::byte *p) {
  T v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// A length no writer makes: below a record's minimum for its type, not
// aligned, or past 'room' (the end of the data area, or of what is
// committed).
bool corrupt_record(uint16_t len, uint16_t type, uint64_t room) {
  return len < 8 || len % KTRACK_REC_ALIGN || len > room ||
         (type != KTRACK_REC_PAD && len < sizeof(ktrack_rec_hdr)) ||
         (type == KTRACK_REC_LOST && len < sizeof(ktrack_rec_hdr) + sizeof(ktrack_rec_lost));
}

}  // namespace

RingView::RingView(ktrack_ring_ctrl *ctrl, const std::byte *data, uint32_t cpu)
    : ctrl_(ctrl), data_(data), size_(ctrl->data_size), cpu_(cpu) {
  if (size_ < 4096 || (size_ & (size_ - 1)))
    throw Error(fmt::format("the ring of CPU {} reports an invalid size {} (module/ktrackctl mismatch?)", cpu,
                            size_));
  index_ = load_relaxed(ctrl_->tail_index);
  pos_ = load_acquire(ctrl_->data_tail);
}

uint64_t RingView::unread() const {
  uint64_t head = load_acquire(ctrl_->data_head);
  return head > pos_ ? head - pos_ : 0;
}

bool RingView::read_oldest(uint64_t &pos, uint64_t &index) const {
  for (;;) {
    uint64_t s1 = load_acquire(ctrl_->overwrite_seq);
    if (s1 & 1) continue;  // a writer is moving it: a few instructions
    pos = load_relaxed(ctrl_->oldest);
    index = load_relaxed(ctrl_->oldest_index);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (load_relaxed(ctrl_->overwrite_seq) == s1) return true;
  }
}

void RingView::deliver_lost(const RecordCallback &cb, uint64_t count) {
  struct {
    ktrack_rec_hdr hdr;
    ktrack_rec_lost lost;
  } r{};
  r.hdr.len = sizeof(r);
  r.hdr.type = KTRACK_REC_LOST;
  r.hdr.cpu = static_cast<uint16_t>(cpu_);
  r.hdr.ts = last_ts_;  // keeps the marker in place when CPUs are merged by time
  r.lost.count = count;
  r.lost.reason = KTRACK_LOST_OVERWRITTEN;
  counters_.records++;
  counters_.bytes += sizeof(r);
  counters_.lost += count;
  cb(cpu_, std::span<const std::byte>(reinterpret_cast<const std::byte *>(&r), sizeof(r)));
}

size_t RingView::drain(const RecordCallback &cb, size_t max_records) {
  const bool overwrite = ctrl_->mode == KTRACK_MODE_OVERWRITE;
  size_t n = 0;
  while (n < max_records) {
    uint64_t head = load_acquire(ctrl_->data_head);
    uint64_t opos = 0, oindex = 0;
    if (overwrite) {
      read_oldest(opos, oindex);
      if (opos > pos_) {  // lapped: [pos_, opos) was overwritten
        if (oindex != index_) {
          deliver_lost(cb, oindex - index_);
          n++;
        }
        pos_ = opos;
        index_ = oindex;
        store_relaxed(ctrl_->tail_index, index_);
        store_release(ctrl_->data_tail, pos_);
        continue;
      }
    }
    if (pos_ >= head) break;
    if (!overwrite && head - pos_ > size_)
      throw Error(fmt::format("the ring of CPU {} is inconsistent (head {} tail {}): another reader moved it",
                              cpu_, head, pos_));
    uint64_t off = pos_ & (size_ - 1);
    const std::byte *p = data_ + off;
    uint16_t len = peek<uint16_t>(p);
    uint16_t type = peek<uint16_t>(p + 2);
    bool bad = corrupt_record(len, type, size_ - off);
    std::span<const std::byte> rec(p, len);
    if (overwrite && !bad && type != KTRACK_REC_PAD) {
      scratch_.assign(p, p + len);
      rec = std::span<const std::byte>(scratch_.data(), len);
    }
    if (overwrite) {
      // The copy counts only if the writer did not reclaim it meanwhile.
      std::atomic_thread_fence(std::memory_order_acquire);
      read_oldest(opos, oindex);
      if (opos > pos_) continue;
    }
    if (bad)
      throw Error(
          fmt::format("the ring of CPU {} holds a corrupt record (length {} at offset {})", cpu_, len, off));
    if (type != KTRACK_REC_PAD) {
      last_ts_ = peek<uint64_t>(rec.data() + offsetof(ktrack_rec_hdr, ts));
      counters_.records++;
      counters_.bytes += len;
      if (type == KTRACK_REC_LOST) counters_.lost += peek<uint64_t>(rec.data() + sizeof(ktrack_rec_hdr));
      cb(cpu_, rec);
      // A LOST record stands for its count (see ktrack_ring_ctrl).
      index_ += type == KTRACK_REC_LOST ? peek<uint64_t>(rec.data() + sizeof(ktrack_rec_hdr)) : 1;
      n++;
    }
    pos_ += len;
    store_relaxed(ctrl_->tail_index, index_);
    store_release(ctrl_->data_tail, pos_);
  }
  return n;
}

size_t RingView::drain_runs(const RunCallback &cb) {
  if (ctrl_->mode == KTRACK_MODE_OVERWRITE)
    return drain([&](uint32_t cpu, std::span<const std::byte> rec) { cb(cpu, rec); });
  size_t n = 0;
  // What is committed now, no more: a CPU written faster than it is read
  // must not keep the sweep from the other rings.
  const uint64_t head = load_acquire(ctrl_->data_head);
  if (pos_ < head && head - pos_ > size_)
    throw Error(fmt::format("the ring of CPU {} is inconsistent (head {} tail {}): another reader moved it",
                            cpu_, head, pos_));
  while (pos_ < head) {
    // The run: from pos_ to the head, the wrap or kMaxRun bytes, whichever
    // is first (the writer gets the space back after each).
    const uint64_t off0 = pos_ & (size_ - 1);
    const uint64_t whole = std::min<uint64_t>(head - pos_, size_ - off0);
    const uint64_t stop = std::min<uint64_t>(whole, kMaxRun);
    const std::byte *base = data_ + off0;
    uint64_t at = 0, index = index_;
    uint64_t ts = last_ts_, lost = 0;
    size_t recs = 0;
    bool pad = false;
    while (at < stop) {
      const std::byte *p = base + at;
      const uint16_t len = peek<uint16_t>(p);
      const uint16_t type = peek<uint16_t>(p + 2);
      if (corrupt_record(len, type, whole - at))
        throw Error(fmt::format("the ring of CPU {} holds a corrupt record (length {} at offset {})", cpu_,
                                len, off0 + at));
      if (at + len > stop && at > 0) break;  // past kMaxRun: it starts the next run
      if (type == KTRACK_REC_PAD) {          // the tail end before the wrap: not a record
        pad = true;
        break;
      }
      ts = peek<uint64_t>(p + offsetof(ktrack_rec_hdr, ts));
      if (type == KTRACK_REC_LOST) {
        const uint64_t n = peek<uint64_t>(p + sizeof(ktrack_rec_hdr));
        lost += n;
        index += n;
      } else {
        index++;
      }
      recs++;
      at += len;
    }
    if (recs) {
      // Nothing is counted or given back before the callback returns: if
      // it throws, the run stays in the ring.
      cb(cpu_, std::span<const std::byte>(base, at));
      last_ts_ = ts;
      counters_.records += recs;
      counters_.bytes += at;
      counters_.lost += lost;
      n += recs;
    }
    if (pad) at += peek<uint16_t>(base + at);
    pos_ += at;
    index_ = index;
    store_relaxed(ctrl_->tail_index, index_);
    store_release(ctrl_->data_tail, pos_);
  }
  return n;
}

MmapReader::MmapReader(const Session &s) : fd_(s.fd()) {
  uint32_t ncpu = s.nr_cpus();
  SessionConfig cfg = s.config();
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t stride = (1 + static_cast<size_t>(cfg.buf_pages)) * page;
  try {
    rings_.reserve(ncpu);
    for (uint32_t c = 0; c < ncpu; c++) {
      off_t base = static_cast<off_t>(c * stride);
      void *ctrl = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, base);
      if (ctrl == MAP_FAILED && errno == ENOSPC)
        throw Error(std::string("cannot map the session buffers: ") + kRingBudgetAdvice);
      if (ctrl == MAP_FAILED) throw SysError(fmt::format("map the control page of CPU {}", c), errno);
      maps_.emplace_back(ctrl, page);
      size_t dlen = static_cast<size_t>(cfg.buf_pages) * page;
      void *data = mmap(nullptr, dlen, PROT_READ, MAP_SHARED, fd_, base + static_cast<off_t>(page));
      if (data == MAP_FAILED) throw SysError(fmt::format("map the ring buffer of CPU {}", c), errno);
      maps_.emplace_back(data, dlen);
      rings_.emplace_back(static_cast<ktrack_ring_ctrl *>(ctrl), static_cast<const std::byte *>(data), c);
    }
  } catch (...) {
    for (auto &[p, len] : maps_) munmap(p, len);
    throw;
  }
}

MmapReader::~MmapReader() {
  for (auto &[p, len] : maps_) munmap(p, len);
}

size_t MmapReader::drain(const RecordCallback &cb) {
  size_t n = 0;
  for (auto &r : rings_) n += r.drain(cb);
  return n;
}

namespace {

bool poll_in(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  int rc = ::poll(&p, 1, timeout_ms);
  if (rc < 0) {
    if (errno == EINTR) return false;
    throw SysError("wait for ktrack records", errno);
  }
  return rc > 0 && (p.revents & (POLLIN | POLLHUP));
}

}  // namespace

bool MmapReader::wait(int timeout_ms) { return poll_in(fd_, timeout_ms); }

void MmapReader::run(const RecordCallback &cb, const std::atomic<bool> &stop, int poll_ms) {
  while (!stop.load(std::memory_order_acquire)) {
    wait(poll_ms);
    drain(cb);
  }
  while (drain(cb) > 0) {
  }
}

size_t MmapReader::drain_runs(const RunCallback &cb) {
  size_t n = 0;
  for (auto &r : rings_) n += r.drain_runs(cb);
  return n;
}

ReaderCounters MmapReader::counters() const {
  ReaderCounters t;
  for (const auto &r : rings_) {
    t.records += r.counters().records;
    t.bytes += r.counters().bytes;
    t.lost += r.counters().lost;
  }
  return t;
}

size_t for_each_record(std::span<const std::byte> buf,
                       const std::function<void(std::span<const std::byte>)> &cb) {
  size_t off = 0;
  while (buf.size() - off >= sizeof(ktrack_rec_hdr)) {
    uint16_t len = peek<uint16_t>(buf.data() + off);
    if (len < sizeof(ktrack_rec_hdr) || len % KTRACK_REC_ALIGN)
      throw Error(fmt::format("corrupt record stream: record length {} at byte {}", len, off));
    if (buf.size() - off < len) break;
    cb(buf.subspan(off, len));
    off += len;
  }
  return off;
}

ReadReader::ReadReader(const Session &s, size_t buf_bytes) : fd_(s.fd()), buf_(buf_bytes) {
  int fl = fcntl(fd_, F_GETFL);
  if (fl < 0 || fcntl(fd_, F_SETFL, fl | O_NONBLOCK) < 0)
    throw SysError("make the session fd non-blocking", errno);
}

size_t ReadReader::drain(const RecordCallback &cb, bool *eof) {
  if (eof) *eof = false;
  ssize_t n;
  do {
    n = ::read(fd_, buf_.data(), buf_.size());
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    if (errno == EAGAIN) return 0;
    throw SysError("read records from the session", errno);
  }
  if (n == 0) {
    if (eof) *eof = true;
    return 0;
  }
  size_t count = 0;
  size_t used = for_each_record(std::span<const std::byte>(buf_.data(), static_cast<size_t>(n)),
                                [&](std::span<const std::byte> rec) {
                                  ktrack_rec_hdr h;
                                  std::memcpy(&h, rec.data(), sizeof(h));
                                  counters_.records++;
                                  counters_.bytes += rec.size();
                                  if (h.type == KTRACK_REC_LOST && rec.size() >= sizeof(h) + 8)
                                    counters_.lost += peek<uint64_t>(rec.data() + sizeof(h));
                                  count++;
                                  cb(h.cpu, rec);
                                });
  if (used != static_cast<size_t>(n)) throw Error("read() returned a partial record (module bug)");
  return count;
}

bool ReadReader::wait(int timeout_ms) { return poll_in(fd_, timeout_ms); }

void ReadReader::run(const RecordCallback &cb, const std::atomic<bool> &stop, int poll_ms) {
  bool eof = false;
  while (!stop.load(std::memory_order_acquire)) {
    if (drain(cb, &eof) == 0) {
      if (eof) return;
      wait(poll_ms);
    }
  }
  while (drain(cb, &eof) > 0) {
  }
}

}  // namespace ktrack
