#include "device/capture.hpp"

#include <fmt/core.h>
#include <signal.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <exception>
#include <fstream>
#include <thread>

#include "probes/probe_attach.hpp"
#include "util/error.hpp"

namespace ktrack {

std::vector<SessionSetup> &session_setups() {
  static std::vector<SessionSetup> setups;
  return setups;
}

uint32_t reader_ring_pages(uint32_t cpus, uint64_t page_bytes, uint64_t ram_bytes, uint64_t max_session_pages,
                           uint64_t max_total_pages) {
  // In pages, control pages included, as the module counts them.
  page_bytes = std::max<uint64_t>(page_bytes, 1);
  uint64_t budget = std::min<uint64_t>(128ull << 20, ram_bytes / 64) / page_bytes;
  if (max_session_pages) budget = std::min(budget, max_session_pages);
  if (max_total_pages) budget = std::min(budget, max_total_pages / 4);  // room for other sessions
  uint32_t pages = 1024;
  while (pages > KTRACK_DEFAULT_BUF_PAGES && uint64_t(pages + 1) * std::max<uint32_t>(cpus, 1) > budget)
    pages /= 2;
  return pages;
}

namespace {
uint64_t module_parameter(const char *name) {
  std::ifstream in(std::string("/sys/module/ktrack/parameters/") + name);
  uint64_t v = 0;
  return in >> v ? v : 0;
}
}  // namespace

uint32_t reader_ring_pages(uint32_t cpus) {
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  struct sysinfo si;
  const uint64_t ram = ::sysinfo(&si) == 0 ? uint64_t(si.totalram) * si.mem_unit : 0;
  return reader_ring_pages(cpus, page, ram, module_parameter("max_pages_per_session"),
                           module_parameter("max_total_pages"));
}

std::string human_bytes(uint64_t n) {
  if (n < 1024) return fmt::format("{} B", n);
  if (n < (1u << 20)) return fmt::format("{:.1f} KiB", n / 1024.0);
  if (n < (1u << 30)) return fmt::format("{:.1f} MiB", n / 1048576.0);
  return fmt::format("{:.2f} GiB", n / 1073741824.0);
}

Capture::Capture(CaptureOptions opts) : opts_(std::move(opts)) {
  if (opts_.pids.size() > KTRACK_MAX_PID_FILTER)
    throw UsageError(fmt::format("-p accepts at most {} pids", KTRACK_MAX_PID_FILTER));
  for (uint32_t c : opts_.cpus)
    if (c >= 64) throw UsageError(fmt::format("-C {}: the CPU filter covers CPUs 0-63", c));
  if (opts_.session.empty()) {
    session_ = std::make_unique<Session>(Session::open_anonymous());
  } else {
    validate_session_name(opts_.session);
    session_ = std::make_unique<Session>(Session::attach(opts_.session));
  }
  nr_cpus_ = session_->nr_cpus();
  for (uint32_t c : opts_.cpus)
    if (c >= nr_cpus_)
      throw UsageError(fmt::format("-C {}: this machine has CPUs 0-{}", c, nr_cpus_ ? nr_cpus_ - 1 : 0));
  config_ = session_->config();
  bool change = opts_.buf_pages || opts_.mode || opts_.clock || !opts_.pids.empty() || !opts_.cpus.empty();
  kernel_pages_ = config_.buf_pages;
  if (opts_.buf_pages) {
    config_.buf_pages = *opts_.buf_pages;
  } else if (opts_.session.empty() && !opts_.flight_bytes &&
             reader_ring_pages(nr_cpus_) > config_.buf_pages) {
    config_.buf_pages = reader_ring_pages(nr_cpus_);
    change = implicit_pages_ = true;
  }
  if (opts_.mode) config_.mode = *opts_.mode;
  if (opts_.clock) config_.clock = *opts_.clock;
  if (!opts_.pids.empty()) config_.pids = opts_.pids;
  if (opts_.pid_tree && !opts_.pids.empty()) {
    if (!(session_->device().version().features & KTRACK_FEAT_PID_TREE))
      throw Error(
          "the loaded ktrack.ko cannot select a process and its children (no KTRACK_FEAT_PID_TREE): unload "
          "it "
          "and load this version's ('ktrackctl unload && ktrackctl load')");
    config_.pid_tree = true;
    change = true;
  }
  if (!opts_.cpus.empty()) {
    config_.cpu_mask = 0;
    for (uint32_t c : opts_.cpus) {
      // the session's CPU mask is 64 bits (struct ktrack_config)
      if (c >= 64)
        throw UsageError(
            fmt::format("CPU {} cannot be selected: sessions record CPUs 0..63 by mask (leave out "
                        "-C to record every CPU, and filter the views with -C)",
                        c));
      config_.cpu_mask |= 1ull << c;
    }
  }
  if (opts_.flight_bytes) {
    if (opts_.count)
      throw UsageError("--flight keeps the newest records and --count the first ones: use one of them");
    if (opts_.buf_pages || (opts_.mode && *opts_.mode != KTRACK_MODE_OVERWRITE))
      throw UsageError(
          "--flight sizes the buffer and keeps the newest records: leave out --buffer-pages and --mode");
    const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    const uint64_t want = opts_.flight_bytes / std::max<uint32_t>(nr_cpus_, 1) / page;
    uint32_t pages = 1;
    while (pages * 2ull <= want && pages * 2u <= KTRACK_MAX_BUF_PAGES) pages *= 2;
    config_.buf_pages = pages;
    config_.mode = KTRACK_MODE_OVERWRITE;
    change = true;
    std::string why;
    if (want > KTRACK_MAX_BUF_PAGES)
      why = fmt::format(" (at most {} per CPU)", human_bytes(KTRACK_MAX_BUF_PAGES * page));
    else if (want < 1)
      why = fmt::format(" (at least one page per CPU)");
    notes_.push_back(fmt::format("flight recorder: keeping the newest {}: {} per CPU x {} CPUs{}",
                                 human_bytes(uint64_t(pages) * page * nr_cpus_), human_bytes(pages * page),
                                 nr_cpus_, why));
  }
  if (change) {
    try {
      session_->configure(config_);
    } catch (const Error &) {
      if (!implicit_pages_) throw;
      // Limits we could not see refuse the larger rings nobody asked for:
      // the kernel's own size then.
      config_.buf_pages = kernel_pages_;
      implicit_pages_ = false;
      session_->configure(config_);
    }
  }
  // Mapped now, before a recorder writes the size into its file's header:
  // if the module refuses rings nobody asked for, the smaller ones are known.
  if (implicit_pages_) map_rings();

  setups_.push_back(probe_session_setup(opts_.graph_root, opts_.graph_depth));
  for (const auto &ext : session_setups()) setups_.push_back(ext);
  for (auto &setup : setups_) {
    if (setup.describe) setup.describe(*session_, schemas_);
  }
  try {
    for (auto &setup : setups_) {
      if (setup.attach) setup.attach(*session_, schemas_, opts_.specs, notes_);
    }
    if (!opts_.specs.empty())
      throw UsageError(fmt::format(
          "'{}' is not understood: trace/record take no such argument here (not a valid probe specification)",
          opts_.specs[0]));
  } catch (...) {
    // Take back what the earlier setups attached; the error the user
    // sees stays the one that stopped the capture.
    try {
      detach();
    } catch (const std::exception &e) {
      fmt::print(stderr, "warning: {}\n", e.what());
    }
    throw;
  }
  comms_.set_resolver(proc_comm);
}

Capture::~Capture() {
  try {
    detach();
  } catch (const std::exception &e) {
    fmt::print(stderr, "warning: {}\n", e.what());
  } catch (...) {
    // a destructor never throws
  }
}

void Capture::detach() {
  if (detached_) return;
  detached_ = true;
  // Every setup takes back what it attached, even when one before it fails;
  // the first failure is rethrown after.
  std::exception_ptr first;
  for (auto &setup : setups_) {
    if (!setup.detach) continue;
    try {
      setup.detach(*session_, summary_);
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

bool Capture::keep(std::span<const uint8_t> rec) {
  if (opts_.comm.empty()) return true;
  ktrack_rec_hdr h;
  std::memcpy(&h, rec.data(), sizeof(h));
  // Lost markers, and what names the other records (a module came or went,
  // whoever loaded it), pass every filter, as in the kernel.
  if (h.type == KTRACK_REC_LOST || h.type == KTRACK_REC_MODULE || h.type == KTRACK_REC_MODULE_SYMS)
    return true;
  if (comms_.lookup(h.pid) == opts_.comm) return true;
  return h.tgid != h.pid && comms_.lookup(h.tgid) == opts_.comm;
}

void Capture::map_rings() {
  if (reader_) return;
  try {
    reader_ = std::make_unique<MmapReader>(*session_);
  } catch (const Error &) {
    // The first mapping allocates the rings: other sessions may hold most
    // of the module's ring budget (ENOSPC).  The kernel's own size then,
    // said; any other error comes again.
    if (!implicit_pages_) throw;
    implicit_pages_ = false;
    config_.buf_pages = kernel_pages_;
    session_->configure(config_);
    reader_ = std::make_unique<MmapReader>(*session_);
    const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    notes_.push_back(fmt::format(
        "rings of {} per CPU, the kernel's default: the larger ones were refused (other sessions hold "
        "ktrack's ring budget; see /sys/module/ktrack/parameters/max_total_pages)",
        human_bytes(uint64_t(kernel_pages_) * page)));
  }
}

void Capture::start() {
  if (start_done_) return;
  map_rings();
  if (session_->stats().state != KTRACK_STATE_RUNNING) {
    session_->start();
    started_ = true;
  }
  start_done_ = true;
}

void Capture::run(const std::function<void(std::span<const uint8_t>)> &on_record,
                  const std::atomic<bool> &stop, const std::function<void(const CaptureStatus &)> &on_tick) {
  start();
  MmapReader &reader = *reader_;
  std::span<const uint8_t> rec;
  // Whole runs of a ring at a time: one copy each, merged by time below.
  auto push = [&](uint32_t, std::span<const std::byte> r) {
    merger_.push_records(std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(r.data()), r.size()));
  };
  bool counted_out = false;  // --count reached
  uint64_t meta_records = 0;
  auto emit = [&] {
    while (merger_.pop(rec)) {
      if (!keep(rec)) continue;
      ktrack_rec_hdr h;
      std::memcpy(&h, rec.data(), sizeof(h));
      const bool lost = h.type == KTRACK_REC_LOST && rec.size() >= sizeof(h) + 8;
      // Module records name the others: always delivered, never counted.
      const bool meta = h.type == KTRACK_REC_MODULE || h.type == KTRACK_REC_MODULE_SYMS;
      meta_records += meta;
      if (!lost && !meta && counted_out) {
        status_.after_count++;
        continue;
      }
      status_.events++;
      status_.bytes += rec.size();
      if (lost) {
        uint64_t n;
        std::memcpy(&n, rec.data() + sizeof(h), 8);
        status_.lost += n;
        status_.lost_markers++;
      }
      on_record(rec);
      if (opts_.count && status_.events - status_.lost_markers - meta_records >= opts_.count)
        counted_out = true;
    }
  };
  drive(
      [&](bool last) {
        // The last sweep drains until the rings are empty.
        while (reader.drain_runs(push) > 0 && last) {
        }
        emit();
      },
      counted_out, stop, on_tick);
}

bool Capture::can_run_runs() const {
  return opts_.comm.empty() && !opts_.count && !opts_.flight_bytes && config_.mode == KTRACK_MODE_DISCARD;
}

void Capture::run_runs(const std::function<void(uint32_t cpu, std::span<const uint8_t> recs)> &on_run,
                       const std::atomic<bool> &stop,
                       const std::function<void(const CaptureStatus &)> &on_tick) {
  if (!can_run_runs())
    throw Error("internal: records in runs are for a capture with no comm filter, count or flight recorder");
  start();
  MmapReader &reader = *reader_;
  auto deliver = [&](uint32_t cpu, std::span<const std::byte> r) {
    const std::span<const uint8_t> recs(reinterpret_cast<const uint8_t *>(r.data()), r.size());
    on_run(cpu, recs);
    // The status counts what run() counts: records, bytes, lost markers.
    for (size_t off = 0; off < recs.size();) {
      ktrack_rec_hdr h;
      std::memcpy(&h, recs.data() + off, sizeof(h));
      status_.events++;
      if (h.type == KTRACK_REC_LOST && h.len >= sizeof(h) + 8) {
        uint64_t n;
        std::memcpy(&n, recs.data() + off + sizeof(h), 8);
        status_.lost += n;
        status_.lost_markers++;
      }
      off += h.len;
    }
    status_.bytes += recs.size();
  };
  const bool never = false;
  drive(
      [&](bool last) {
        // The last sweep drains until the rings are empty.
        while (reader.drain_runs(deliver) > 0 && last) {
        }
      },
      never, stop, on_tick);
}

void Capture::drive(const std::function<void(bool last)> &sweep, const bool &done,
                    const std::atomic<bool> &stop,
                    const std::function<void(const CaptureStatus &)> &on_tick) {
  MmapReader &reader = *reader_;
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  auto next_tick = t0 + std::chrono::seconds(1);
  const uint64_t features = session_->device().version().features;
  const bool check_trigger = opts_.end_on_trigger_stop && (features & KTRACK_FEAT_TRIGGERS);
  const bool check_snapshot = opts_.on_snapshot && (features & KTRACK_FEAT_SNAPSHOT);
  // A snapshot that cannot be taken or saved must not cost the recording.
  auto take_snapshot = [&] {
    try {
      if (auto snap = session_->take_snapshot()) opts_.on_snapshot(std::move(*snap));
    } catch (const std::exception &e) {
      if (!status_.snapshot_errors++) status_.snapshot_error = e.what();
    }
  };
  while (!stop.load(std::memory_order_relaxed) && !done) {
    auto now = clock::now();
    int wait_ms = 100;
    if (opts_.duration.count() > 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(t0 + opts_.duration - now).count();
      if (left <= 0) break;
      wait_ms = static_cast<int>(std::min<int64_t>(left, wait_ms));
    }
    if (opts_.flight_bytes) {
      // The rings keep the newest records; they are read once, at the end.
      std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    } else {
      reader.wait(wait_ms);
      sweep(false);
    }
    if (check_trigger || check_snapshot) {
      const uint32_t flags = session_->stats_flags();
      if (check_snapshot && (flags & KTRACK_STATS_F_SNAP_READY)) take_snapshot();
      if (check_trigger && (flags & KTRACK_STATS_F_TRIG_STOPPED)) {
        status_.trigger_stopped = true;
        break;
      }
    }
    now = clock::now();
    if (on_tick && now >= next_tick) {
      status_.seconds = std::chrono::duration<double>(now - t0).count();
      on_tick(status_);
      next_tick = now + std::chrono::seconds(1);
    }
  }
  // A flight recorder keeps the history up to now: stop before detaching,
  // which takes a grace period per probe while the others would go on
  // overwriting it.
  if (opts_.flight_bytes && started_) session_->stop();
  // The drain contract: first detach what this capture attached (after it,
  // none of its handlers runs, so every hit it made is in a ring or counted
  // lost), then flush pending lost markers and stop what we started (the
  // kernel waits for writers in flight), then drain until empty.
  detach();
  session_->flush();
  if (started_) session_->stop();
  if (check_snapshot) {
    // A snapshot asked for before the stop: its copy takes milliseconds.
    for (int i = 0; i < 1000 && (session_->stats_flags() & KTRACK_STATS_F_SNAP_PENDING); i++)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    take_snapshot();
  }
  sweep(true);
  status_.seconds = std::chrono::duration<double>(clock::now() - t0).count();
}

namespace {
std::atomic<bool> g_stop{false};
struct sigaction g_old_int, g_old_term, g_old_chld;
bool g_chld = false;
std::atomic<unsigned> g_interrupts{0};
void on_signal(int sig) {
  if (sig != SIGCHLD) g_interrupts.fetch_add(1);
  g_stop.store(true);
}
}  // namespace

StopSignals::StopSignals() {
  g_stop.store(false);
  struct sigaction sa;
  std::memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: poll() returns at once
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

void StopSignals::stop_on_child_exit() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_NOCLDSTOP;  // no SA_RESTART: poll() returns at once
  sigaction(SIGCHLD, &sa, g_chld ? nullptr : &g_old_chld);
  g_chld = true;
}

StopSignals::~StopSignals() {
  if (g_chld) sigaction(SIGCHLD, &g_old_chld, nullptr);
  g_chld = false;
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
}

std::atomic<bool> &StopSignals::flag() { return g_stop; }

unsigned StopSignals::interrupts() { return g_interrupts.load(); }

}  // namespace ktrack
