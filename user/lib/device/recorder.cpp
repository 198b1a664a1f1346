#include "device/recorder.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "device/ring_reader.hpp"
#include "format/merge.hpp"
#include "util/error.hpp"

namespace ktrack {

namespace {

// Records are parked next to a regular file only: beside /dev/stdout (a
// link), a FIFO or /dev/fd/N there is nowhere to park, and in a directory
// we may not write to neither.
bool parkable(const std::string &path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  std::string dir = std::filesystem::path(path).parent_path().string();
  return ::access(dir.empty() ? "." : dir.c_str(), W_OK) == 0;
}

std::string kernel_release_of(const Session &s) {
  try {
    return s.device().version().kernel_release;
  } catch (const Error &) {
    return {};
  }
}

TraceMeta meta_of(Capture &cap) {
  TraceMeta meta;
  meta.nr_cpus = cap.nr_cpus();
  meta.clock = clock_name(cap.config().clock);
  meta.kernel_release = kernel_release_of(cap.session());
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) == 0) meta.hostname = host;
  meta.session = cap.session_name();
  meta.extra["mode"] = mode_name(cap.config().mode);
  meta.extra["buf_pages"] = std::to_string(cap.config().buf_pages);
  meta.extra["ktrackctl_version"] = KTRACK_VERSION;
  return meta;
}

}  // namespace

Recorder::Recorder(Capture &cap, const std::string &path, std::string_view kallsyms, RecordCodec codec,
                   bool stream)
    : cap_(cap),
      writer_(path, meta_of(cap), cap.schemas(), kallsyms, codec),
      path_(path),
      may_park_(!stream && path != "-" && parkable(path)) {}

Recorder::~Recorder() {
  if (!spool_) return;  // streamed, or parked and finished
  // Parked and not finished: the file must not look complete.
  writer_.abandon();
  try {
    const std::vector<std::string> files = spool_->files();
    spool_.reset();  // writes out what it still held in memory
    if (files.empty()) return;
    std::string list;
    for (const auto &f : files) list += " " + f;
    fmt::print(stderr,
               "ktrackctl: {} is unfinished; the records were kept, raw, in{} ('ktrackctl report FILE' "
               "reads each)\n",
               path_, list);
  } catch (...) {
    // a destructor never throws
  }
}

void Recorder::run(const std::atomic<bool> &stop, const std::function<void(const CaptureStatus &)> &on_tick) {
  if (may_park_ && cap_.can_run_runs()) {
    spool_ = std::make_unique<RecordSpool>(path_);
    // They go as the file of a recording to the same path does, but said:
    // every CPU's, not only those that will park records again.
    std::string list;
    for (const auto &f : spool_->leftovers()) {
      if (::unlink(f.c_str()) == 0)
        list += " " + f;
      else
        fmt::print(stderr, "ktrackctl: cannot remove {}, left by an earlier recording to {}: {}\n", f, path_,
                   std::strerror(errno));
    }
    if (!list.empty())
      fmt::print(stderr, "ktrackctl: removed{}, kept by an earlier recording to {} that did not finish\n",
                 list, path_);
  }
  if (!spool_) {
    cap_.run([&](std::span<const uint8_t> rec) { writer_.write_records(rec); }, stop, on_tick);
    return;
  }
  cap_.run_runs(
      [&](uint32_t cpu, std::span<const uint8_t> recs) {
        // A task's name is read from /proc when its first record comes: at
        // the merge it may have exited.
        writer_.note_tasks(recs);
        spool_->append(cpu, recs);
      },
      stop, on_tick);
}

uint64_t write_snapshot(Capture &cap, const std::string &path, std::string_view kallsyms, RecordCodec codec,
                        const Snapshot &snap) {
  TraceMeta meta = meta_of(cap);
  meta.extra["snapshot"] = std::to_string(snap.seq);
  meta.extra["snapshot_ts"] = std::to_string(snap.ts);
  meta.extra["snapshot_nth"] = std::to_string(snap.nth);
  meta.extra["snapshot_probe_id"] = std::to_string(snap.probe_id);
  TraceWriter w(path, meta, cap.schemas(), kallsyms, codec);
  RecordMerger merger;
  const auto bytes = std::as_bytes(std::span(snap.records));
  size_t used = for_each_record(bytes, [&](std::span<const std::byte> r) {
    merger.push(std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(r.data()), r.size()));
  });
  if (used != bytes.size())
    throw Error(fmt::format("snapshot {}: its last record is cut at byte {}", snap.seq, used));
  std::span<const uint8_t> rec;
  while (merger.pop(rec)) w.write_records(rec);
  const uint64_t n = w.records();
  w.finish(fmt::format("snapshot={}\nrecords={}\nlost={}\n", snap.seq, n, w.lost()));
  return n;
}

std::string snapshot_path(const std::string &output, uint64_t seq) {
  for (const char *ext : {".ktr", ".ktrack"}) {
    const std::string e = ext;
    if (output.size() > e.size() && output.compare(output.size() - e.size(), e.size(), e) == 0)
      return fmt::format("{}.snap{}{}", output.substr(0, output.size() - e.size()), seq, e);
  }
  return fmt::format("{}.snap{}", output, seq);
}

void Recorder::finish(const std::function<bool()> &abandon) {
  if (spool_) spool_->merge([&](std::span<const uint8_t> rec) { writer_.write_records(rec); }, abandon);
  std::string totals;
  SessionStats st = cap_.session().stats();
  for (const auto &c : st.cpus)
    totals += fmt::format("cpu{}=written:{} lost_full:{} lost_too_big:{} overwritten:{} bytes:{}\n", c.cpu,
                          c.written, c.lost_full, c.lost_too_big, c.overwritten, c.bytes);
  writer_.finish(totals);
  // Written and closed: the parked copies can go.
  if (spool_) {
    spool_->discard();
    spool_.reset();
  }
}

}  // namespace ktrack
