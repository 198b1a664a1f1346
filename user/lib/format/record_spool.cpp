#include "format/record_spool.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <queue>

#include <uapi/ktrack.h>

#include "format/merge.hpp"
#include "util/error.hpp"

namespace ktrack {

RecordSpool::~RecordSpool() {
  // Not merged: keep what was parked (see the header), memory included.
  for (uint32_t c = 0; c < cpus_.size(); c++) {
    try {
      if (!cpus_[c].buf.empty()) write_out(c, cpus_[c].buf);
    } catch (...) {
      // Best effort from a destructor: what was written stays.
    }
    if (cpus_[c].fd >= 0) ::close(cpus_[c].fd);
  }
}

std::vector<std::string> RecordSpool::files() const {
  std::vector<std::string> out;
  for (uint32_t c = 0; c < cpus_.size(); c++)
    if (cpus_[c].fd >= 0 || !cpus_[c].buf.empty()) out.push_back(path(c));
  return out;
}

std::vector<std::string> RecordSpool::leftovers() const {
  namespace fs = std::filesystem;
  const fs::path base(base_);
  const std::string prefix = base.filename().string() + ".cpu";
  std::vector<std::string> out;
  std::error_code ec;
  const fs::path dir = base.has_parent_path() ? base.parent_path() : fs::path(".");
  // No throwing increments: a directory that cannot be read names nothing.
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() + 6 || name.compare(0, prefix.size(), prefix) != 0 ||
        !name.ends_with(".spool"))
      continue;
    const std::string_view cpu(name.data() + prefix.size(), name.size() - prefix.size() - 6);
    if (cpu.find_first_not_of("0123456789") == std::string_view::npos)
      out.push_back(base.has_parent_path() ? (dir / name).string() : name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string RecordSpool::path(uint32_t cpu) const { return fmt::format("{}.cpu{}.spool", base_, cpu); }

void RecordSpool::remove_files() {
  for (uint32_t c = 0; c < cpus_.size(); c++) {
    cpus_[c].buf = ByteBuffer();
    if (cpus_[c].fd < 0) continue;
    ::close(cpus_[c].fd);
    cpus_[c].fd = -1;
    ::unlink(path(c).c_str());
  }
}

void RecordSpool::write_out(uint32_t cpu, std::span<const uint8_t> bytes) {
  int &fd = cpus_[cpu].fd;
  if (fd < 0) {
    // A file a killed recorder left behind is replaced, as trace-cmd does;
    // never through a link planted in a shared directory.
    ::unlink(path(cpu).c_str());
    fd = ::open(path(cpu).c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
      throw SysError(fmt::format("create {} (the records of CPU {} until the end)", path(cpu), cpu), errno);
  }
  const off_t good = ::lseek(fd, 0, SEEK_END);
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : ENOSPC;
      // No half record at the end of the file: it ends where the last
      // whole write did.
      if (good >= 0 && ::ftruncate(fd, good) != 0) {
        // the error to report is the write's
      }
      throw SysError(fmt::format("park records in {}{}", path(cpu),
                                 err == ENOSPC ? " (record --stream writes them compressed as they come, "
                                                 "in far less room)"
                                               : ""),
                     err);
    }
    bytes = bytes.subspan(static_cast<size_t>(n));
  }
}

void RecordSpool::append(uint32_t cpu, std::span<const uint8_t> recs) {
  if (cpu >= cpus_.size()) cpus_.resize(cpu + 1u);
  ByteBuffer &buf = cpus_[cpu].buf;
  if (!buf.empty() && (buf.size() + recs.size() > kParkBytes || recs.size() >= kDirectBytes)) {
    write_out(cpu, buf);
    buf.clear();
  }
  if (recs.size() >= kDirectBytes) {
    write_out(cpu, recs);
  } else {
    append_bytes(buf, recs.data(), recs.size());
  }
  bytes_ += recs.size();
}

namespace {

// A CPU's file is read this much at a time: memory for the merge is this
// times the CPUs; a whole record always fits (KTRACK_REC_MAX).
constexpr size_t kReadBlock = 128 << 10;
static_assert(kReadBlock > KTRACK_REC_MAX);

// One CPU's file, read a block at a time; 'at' is its next record.
struct Cursor {
  int fd;
  uint32_t cpu;
  std::string name;
  ByteBuffer buf;
  size_t at = 0;
  uint64_t read_off = 0;
  bool eof = false;

  // True with a whole record at 'at'; false at the end of the file.
  bool ready() {
    for (;;) {
      const size_t have = buf.size() - at;
      if (have >= sizeof(ktrack_rec_hdr)) {
        uint16_t len;
        std::memcpy(&len, buf.data() + at, sizeof(len));
        if (len < sizeof(ktrack_rec_hdr) || len % KTRACK_REC_ALIGN)
          throw Error(fmt::format("{} holds a corrupt record length {} at byte {}", name, len,
                                  read_off - buf.size() + at));
        if (have >= len) return true;
      }
      if (eof) {
        if (have) throw Error(fmt::format("{} ends in the middle of a record", name));
        return false;
      }
      // Keep the partial record, read the next block after it.
      if (have) std::memmove(buf.data(), buf.data() + at, have);
      buf.resize(kReadBlock);
      ssize_t n;
      do {
        n = ::pread(fd, buf.data() + have, buf.size() - have, static_cast<off_t>(read_off));
      } while (n < 0 && errno == EINTR);
      if (n < 0) throw SysError(fmt::format("read {}", name), errno);
      read_off += static_cast<uint64_t>(n);
      buf.resize(have + static_cast<size_t>(n));
      at = 0;
      if (n == 0) eof = true;
    }
  }
  uint64_t ts() const {
    uint64_t ts;
    std::memcpy(&ts, buf.data() + at + offsetof(ktrack_rec_hdr, ts), sizeof(ts));
    return ts;
  }
  std::span<const uint8_t> record() const {
    uint16_t len;
    std::memcpy(&len, buf.data() + at, sizeof(len));
    return std::span<const uint8_t>(buf.data() + at, len);
  }
};

}  // namespace

void RecordSpool::merge(const std::function<void(std::span<const uint8_t>)> &out,
                        const std::function<bool()> &abandon) {
  std::vector<Cursor> cursors;
  for (uint32_t c = 0; c < cpus_.size(); c++) {
    if (!cpus_[c].buf.empty()) write_out(c, cpus_[c].buf);
    cpus_[c].buf = ByteBuffer();
    if (cpus_[c].fd >= 0) cursors.push_back(Cursor{cpus_[c].fd, c, path(c), {}});
  }
  // The oldest next record first; ties to the lower CPU (a cursor index).
  using Key = std::pair<uint64_t, size_t>;
  std::priority_queue<Key, std::vector<Key>, std::greater<Key>> next;
  for (size_t i = 0; i < cursors.size(); i++)
    if (cursors[i].ready()) next.push({cursors[i].ts(), i});
  // A Ctrl-C may have come before the merge: a short merge never asks again.
  if (abandon && abandon()) throw Error("stopped merging the parked records, as asked");
  uint64_t merged = 0;
  while (!next.empty()) {
    const size_t i = next.top().second;
    next.pop();
    Cursor &c = cursors[i];
    // A CPU's records come in runs: deliver while it stays the oldest.
    const uint64_t limit = next.empty() ? UINT64_MAX : next.top().first;
    do {
      const std::span<const uint8_t> rec = c.record();
      out(rec);
      c.at += rec.size();
      if (abandon && ++merged % 4096 == 0 && abandon())
        throw Error("stopped merging the parked records, as asked");
    } while (c.ready() && (c.ts() < limit || (!next.empty() && c.ts() == limit && i < next.top().second)));
    if (c.ready()) next.push({c.ts(), i});
  }
}

void RecordSpool::discard() {
  remove_files();
  cpus_.clear();
}

}  // namespace ktrack
