// Live capture from a session: what `ktrackctl trace` and `record` share.
//
// Capture opens (or attaches to) a session, applies the configuration and
// filters, runs the registered SessionSetup hooks ("things to attach before
// start": probes, object tracking...), maps the rings, starts, and drains
// them merged by timestamp until stopped.  Stopping flushes
// (KTRACK_IOC_FLUSH), stops the session if Capture started it, and drains
// every record committed before the stop.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "device/ring_reader.hpp"
#include "device/session.hpp"
#include "format/event.hpp"
#include "format/merge.hpp"
#include "util/duration.hpp"

namespace ktrack {

// Extends trace/record: a hook that attaches things to the session before it
// starts, and takes them back when the capture stops.  Probes are built in
// (probes/probe_attach.hpp); another kind registers with a static object in
// a file that is always linked in (the library is static: a .cpp that
// nothing references is left out), shaped like the probe support:
//
//   static const ktrack::SessionSetupRegistration reg({"probes",
//       [](Session &s, SchemaRegistry &reg, std::vector<std::string> &specs,
//          std::vector<std::string> &notes) {
//         ... attach each spec it understands, reg.add(its schema), erase it,
//         ... add a line per attached thing to 'notes' ...
//       },
//       [](Session &s, SchemaRegistry &reg) { ... add schemas of attached probes ... },
//       [](Session &s, std::vector<std::string> &summary) { ... detach, say what they saw ... }});
struct SessionSetup {
  std::string name;
  // Before start: attach what the positional 'specs' ask for, erase the
  // specs consumed, and register the schemas of what was attached.  'notes'
  // get one line per attached thing ("probe x (id 1): kprobe, armed"); the
  // command shows them once recording has begun (Capture::start()), so a
  // line that says "armed" means every later hit is recorded or counted.
  std::function<void(Session &, SchemaRegistry &, std::vector<std::string> &specs,
                     std::vector<std::string> &notes)>
      attach;
  // For a session that may already have things attached (a named session):
  // register their schemas so the records decode.  Optional.
  std::function<void(Session &, SchemaRegistry &)> describe;
  // At stop, while the session still records: detach what 'attach' put on
  // the session, synchronously (no handler of it runs after this returns),
  // and add a line per thing to 'summary'.  Optional.
  std::function<void(Session &, std::vector<std::string> &summary)> detach;
};
// The registered extensions (the built-in probe setup is not among them).
std::vector<SessionSetup> &session_setups();
struct SessionSetupRegistration {
  explicit SessionSetupRegistration(SessionSetup s) { session_setups().push_back(std::move(s)); }
};

struct CaptureOptions {
  std::string session;  // -s NAME (attach); empty: a new anonymous session
  std::optional<uint32_t> buf_pages;
  std::optional<uint32_t> mode;           // KTRACK_MODE_*
  std::optional<uint32_t> clock;          // KTRACK_CLOCK_*
  std::vector<int32_t> pids;              // -p (kernel filter)
  bool pid_tree = false;                  // pids select their descendants (u probes, -- COMMAND)
  std::vector<uint32_t> cpus;             // -C (kernel filter)
  std::string comm;                       // -c (filter on the decoded comm)
  std::chrono::milliseconds duration{0};  // -d; 0 = until stopped
  uint64_t count = 0;                     // --count: stop after this many records; 0 = no limit
  // Flight recorder (--flight SIZE): an overwrite-mode session holding
  // about SIZE bytes over all CPUs, read only at the end, so that what is
  // kept is the newest history.  0: off.
  uint64_t flight_bytes = 0;
  // End the run when a probe's stop action paused the session (record's
  // default when no probe has a start action).
  bool end_on_trigger_stop = false;
  // Called with each snapshot a probe's '=> snapshot' action made, as it
  // becomes ready (within 100 ms) while recording goes on, and with the
  // last one after the stop.  Unset: snapshots stay in the kernel.
  std::function<void(Snapshot &&)> on_snapshot;
  std::vector<std::string> specs;  // positional arguments for the setup hooks
  // --graph FUNC --depth N (probes/graph_scope.hpp): the probe setup adds a
  // root probe on FUNC and scopes every f probe of 'specs' under it.  Empty: none.
  std::string graph_root;
  uint32_t graph_depth = 0;
};

struct CaptureStatus {
  uint64_t events = 0;  // delivered (after the comm filter), lost markers included
  uint64_t bytes = 0;
  uint64_t lost = 0;             // records lost (sum of LOST markers)
  uint64_t lost_markers = 0;     // LOST markers among 'events'
  uint64_t after_count = 0;      // --count reached: records produced before the stop, not delivered
  bool trigger_stopped = false;  // the run ended because a stop action fired
  uint64_t snapshot_errors = 0;  // snapshots that could not be taken or saved
  std::string snapshot_error;    // the first such error
  double seconds = 0;
};

// The life of a capture, and what each step guarantees:
//   Capture()  opens or attaches, configures, attaches the specs: probes are
//              armed but the session does not record yet (their hits are
//              counted as idle, see ProbeInfo::idle); when it chose the ring
//              size itself (reader_ring_pages), it maps the rings too;
//   start()    maps the rings and starts the session: from here on every
//              hit is delivered or counted lost.  Show notes() after it;
//   run()      delivers records until stopped (calls start() if needed), then
//              stops with the drain contract: it detaches what the setups
//              attached (no handler runs after that), flushes, stops the
//              session if it started it, and delivers every record committed
//              before, lost markers included (status().lost counts them).
class Capture {
 public:
  // Opens and prepares the session (nothing recorded yet).  Throws
  // UsageError for bad options (and for specs no hook consumed).
  explicit Capture(CaptureOptions opts);
  // A capture that never ran still takes back what it attached (a named
  // session keeps only what it had).
  ~Capture();
  Capture(const Capture &) = delete;
  Capture &operator=(const Capture &) = delete;

  Session &session() { return *session_; }
  // -s NAME, or "" for an anonymous session.
  const std::string &session_name() const { return opts_.session; }
  // Schemas of everything this session can record (built-ins + hooks).
  SchemaRegistry &schemas() { return schemas_; }
  // pid -> comm of the live system (resolved from /proc, cached).
  CommTable &comms() { return comms_; }
  uint32_t nr_cpus() const { return nr_cpus_; }
  const SessionConfig &config() const { return config_; }
  // What the setups attached, one line each; true once start() returned.
  const std::vector<std::string> &notes() const { return notes_; }
  // After run(): what the setups detached saw (per probe: hits, idle...).
  const std::vector<std::string> &summary() const { return summary_; }

  // Maps the rings and starts the session unless it already runs.  Idempotent.
  void start();
  // Starts (see start()) and delivers records in timestamp order (per drain
  // sweep) until 'stop' is set, the duration elapsed or 'count' records
  // were delivered (LOST markers are always delivered and not counted; the
  // records past the count are counted in status().after_count); 'on_tick'
  // (optional) is called about once a second.  Then stops as described
  // above and delivers the rest.
  void run(const std::function<void(std::span<const uint8_t>)> &on_record, const std::atomic<bool> &stop,
           const std::function<void(const CaptureStatus &)> &on_tick = {});
  // Like run(), for a consumer that orders the records itself (the
  // recorder's spool): each ring's records as drained, a run of one CPU's
  // records per call (whole records, ring order), CPUs not merged.  Only
  // when can_run_runs(): a comm filter or a count needs every record in
  // order, and a flight recorder's overwrite ring is copied record by record.
  void run_runs(const std::function<void(uint32_t cpu, std::span<const uint8_t> recs)> &on_run,
                const std::atomic<bool> &stop,
                const std::function<void(const CaptureStatus &)> &on_tick = {});
  bool can_run_runs() const;
  const CaptureStatus &status() const { return status_; }

 private:
  // The loop run() and run_runs() share: wait, sweep(false), ticks,
  // triggers and snapshots until stopped or 'done'; then the drain
  // contract and sweep(true), which drains until empty.
  void drive(const std::function<void(bool last)> &sweep, const bool &done, const std::atomic<bool> &stop,
             const std::function<void(const CaptureStatus &)> &on_tick);
  bool keep(std::span<const uint8_t> rec);
  void detach();

  CaptureOptions opts_;
  std::unique_ptr<Session> session_;
  SchemaRegistry schemas_;
  CommTable comms_;
  SessionConfig config_;
  uint32_t nr_cpus_ = 0;
  bool started_ = false;  // this capture started the session
  // The rings are reader_ring_pages(), which nobody asked for: the kernel's
  // own size (kernel_pages_) is tried when the module refuses them.
  bool implicit_pages_ = false;
  uint32_t kernel_pages_ = 0;
  bool start_done_ = false;
  void map_rings();
  std::vector<SessionSetup> setups_;
  bool detached_ = false;  // the setups took back what they attached
  std::unique_ptr<MmapReader> reader_;
  std::vector<std::string> notes_, summary_;
  RecordMerger merger_;
  CaptureStatus status_;
};

// SIGINT/SIGTERM set flag() while an instance lives (handlers restored
// after).  Blocking waits return early (no SA_RESTART).
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals &) = delete;
  StopSignals &operator=(const StopSignals &) = delete;
  static std::atomic<bool> &flag();
  // SIGINT and SIGTERM received since the first instance (SIGCHLD not
  // counted): what asks to abandon work that comes after the capture.
  static unsigned interrupts();
  // SIGCHLD sets flag() too, until this instance goes (a command run under
  // the capture ended: `record -- COMMAND`).
  void stop_on_child_exit();
};

// The ring pages per CPU of a capture's own (anonymous) session when no
// --buffer-pages is given: 1,024 (4 MiB), four times the kernel's default,
// halved while the rings of 'cpus' CPUs would take over 128 MiB or 1/64 of
// the RAM, never below the kernel's default.  A reader woken onto the CPU
// its workload keeps busy (no idle CPU shares that CPU's cache) may wait
// there for tens of milliseconds: at one 72-byte record per microsecond a
// 1 MiB ring overflows in 15 ms (records lost in 9 of 10 rounds of
// 'record' under -icount), 4 MiB rings lost none in 10.
// Also within the module's max_pages_per_session and a quarter of its
// max_total_pages when they are set (read from /sys/module/ktrack).
uint32_t reader_ring_pages(uint32_t cpus);
// The same from given figures: the page size and RAM in bytes, the module's
// limits in pages (0: not set).
uint32_t reader_ring_pages(uint32_t cpus, uint64_t page_bytes, uint64_t ram_bytes, uint64_t max_session_pages,
                           uint64_t max_total_pages);

// "1.2 MiB", "512 B".
std::string human_bytes(uint64_t n);

}  // namespace ktrack
