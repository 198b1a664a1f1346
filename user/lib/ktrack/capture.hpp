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

#include "ktrack/event.hpp"
#include "ktrack/merge.hpp"
#include "ktrack/ring_reader.hpp"
#include "ktrack/session.hpp"

namespace ktrack {

// "10" (seconds), "1.5s", "500ms", "2m", "1h"; throws UsageError.
std::chrono::milliseconds parse_duration(std::string_view s);

// Extends trace/record: a hook that attaches things to the session before it
// starts.  Register from a user/cli cmd_*.cpp (a static object there is
// always linked in), e.g. the probe support:
//
//   static const ktrack::SessionSetupRegistration reg({"probes",
//       [](Session &s, SchemaRegistry &reg, std::vector<std::string> &specs) {
//         ... attach each spec it understands, reg.add(its schema), erase it ...
//       },
//       [](Session &s, SchemaRegistry &reg) { ... add schemas of attached probes ... }});
struct SessionSetup {
  std::string name;
  // Before start: attach what the positional 'specs' ask for, erase the
  // specs consumed, and register the schemas of what was attached.
  std::function<void(Session &, SchemaRegistry &, std::vector<std::string> &specs)> attach;
  // For a session that may already have things attached (a named session):
  // register their schemas so the records decode.  Optional.
  std::function<void(Session &, SchemaRegistry &)> describe;
};
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
  std::vector<uint32_t> cpus;             // -C (kernel filter)
  std::string comm;                       // -c (filter on the decoded comm)
  std::chrono::milliseconds duration{0};  // -d; 0 = until stopped
  std::vector<std::string> specs;         // positional arguments for the setup hooks
};

struct CaptureStatus {
  uint64_t events = 0;  // delivered (after the comm filter), lost markers included
  uint64_t bytes = 0;
  uint64_t lost = 0;  // records lost (sum of LOST markers)
  double seconds = 0;
};

class Capture {
 public:
  // Opens and prepares the session (nothing recorded yet).  Throws
  // UsageError for bad options (and for specs no hook consumed).
  explicit Capture(CaptureOptions opts);
  ~Capture();
  Capture(const Capture &) = delete;
  Capture &operator=(const Capture &) = delete;

  Session &session() { return *session_; }
  // Schemas of everything this session can record (built-ins + hooks).
  SchemaRegistry &schemas() { return schemas_; }
  // pid -> comm of the live system (resolved from /proc, cached).
  CommTable &comms() { return comms_; }
  uint32_t nr_cpus() const { return nr_cpus_; }
  const SessionConfig &config() const { return config_; }

  // Starts (unless the named session already runs) and delivers records in
  // timestamp order (per drain sweep) until 'stop' is set or the duration
  // elapsed; 'on_tick' (optional) is called about once a second.  Then
  // flushes, stops what it started and delivers the rest.
  void run(const std::function<void(std::span<const uint8_t>)> &on_record, const std::atomic<bool> &stop,
           const std::function<void(const CaptureStatus &)> &on_tick = {});
  const CaptureStatus &status() const { return status_; }

 private:
  bool keep(std::span<const uint8_t> rec);

  CaptureOptions opts_;
  std::unique_ptr<Session> session_;
  SchemaRegistry schemas_;
  CommTable comms_;
  SessionConfig config_;
  uint32_t nr_cpus_ = 0;
  bool started_ = false;
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
};

// "1.2 MiB", "512 B".
std::string human_bytes(uint64_t n);

}  // namespace ktrack
