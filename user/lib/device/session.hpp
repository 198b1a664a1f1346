// A ktrack session: one open /dev/ktrack file descriptor attached to an
// anonymous session (lives as long as the fd) or to a named one (survives
// its creator until destroyed).  Wraps the transport ioctls of
// include/uapi/ktrack.h; every failure throws SysError with an action
// string, so the message says what to fix.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "device/device.hpp"

namespace ktrack {

// Mirrors struct ktrack_config (defaults are the kernel's defaults).
struct SessionConfig {
  uint32_t buf_pages = KTRACK_DEFAULT_BUF_PAGES;  // per CPU, power of two
  uint32_t mode = KTRACK_MODE_DISCARD;            // KTRACK_MODE_*
  uint32_t clock = KTRACK_CLOCK_LOCAL;            // KTRACK_CLOCK_*
  uint32_t wakeup_bytes = 0;                      // poll wakes at >= this many unread bytes...
  uint32_t wakeup_percent = 0;                    // ... or at this fill level; both 0: any data
  std::vector<int32_t> pids;                      // record only these pids/tgids (max 8); empty: all
  uint64_t cpu_mask = 0;                          // record only on these CPUs; 0: all
  bool dump_on_oops = false;                      // print the newest records on oops/panic
  bool pid_tree = false;                          // pids select their descendants too
  bool group = false;                             // shared with the ktrack group (docs/ACCESS.md)
};

// Per-session counters: one entry per possible CPU plus the sum.
struct SessionStats {
  uint32_t state = KTRACK_STATE_IDLE;  // KTRACK_STATE_*
  std::vector<ktrack_cpu_stats> cpus;
  ktrack_cpu_stats total() const;  // sum over cpus (cpu = UINT32_MAX)
  // Wake-ups sent to sleeping readers, per CPU as 'cpus' (empty: the
  // module predates KTRACK_FEAT_STATS_WAKEUPS).
  std::vector<uint64_t> wakeups;
  uint64_t total_wakeups() const;
  // A probe's stop action paused recording (KTRACK_STATS_F_TRIG_STOPPED).
  bool trigger_stopped = false;
};

// A copy of the rings made by a probe's '=> snapshot' action
// (KTRACK_IOC_SNAPSHOT_GET): every CPU's records up to the moment, each
// CPU's part led by a LOST record counting what its ring no longer held.
struct Snapshot {
  std::vector<uint8_t> records;  // whole records, CPU by CPU, as read() returns them
  uint64_t ts = 0;               // the moment (session clock)
  uint64_t nth = 0;              // the action's turn (its trigger record's nth)
  uint64_t seq = 0;              // snapshots the session took, this one included
  uint64_t missed = 0;           // actions that found the previous one not taken (or no memory)
  uint64_t count = 0;            // records in 'records'
  uint32_t probe_id = 0;
  // Some CPU's ring was overwritten past the moment before the copy got
  // there (KTRACK_SNAP_F_OVERRUN): its part has nothing up to the moment.
  bool overrun = false;
};

// One entry of Session::list().
struct SessionInfo {
  std::string name;
  uint64_t id = 0;
  uint32_t nr_fds = 0;
  uint32_t state = KTRACK_STATE_IDLE;
  uint32_t nr_probes = 0;
  uint32_t buf_pages = 0;
};

// "idle", "running", "stopped".
const char *state_name(uint32_t state);
// "discard" / "overwrite"; "local" / "mono" / "boot".  parse_* throw UsageError.
const char *mode_name(uint32_t mode);
const char *clock_name(uint32_t clock);
uint32_t parse_mode(std::string_view s);
uint32_t parse_clock(std::string_view s);
// Throws UsageError unless 'name' is 1..31 chars of [A-Za-z0-9_.-].
void validate_session_name(std::string_view name);

// What to do when START or mmap get ENOSPC: every session's rings together
// would exceed the module parameter max_total_pages.
extern const char *const kRingBudgetAdvice;

class Session {
 public:
  // A new anonymous session (ends when this object is destroyed).
  static Session open_anonymous(const std::string &path = kDevicePath);
  // Creates the named session 'name' (EEXIST if it exists) and attaches.
  static Session create(const std::string &name, const std::string &path = kDevicePath);
  // Attaches to the existing named session 'name' (ENOENT if unknown).
  static Session attach(const std::string &name, const std::string &path = kDevicePath);
  // Attaches to 'name', creating it first when it does not exist
  // ('*created' says whether this call created it).
  static Session open_named(const std::string &name, const std::string &path = kDevicePath,
                            bool *created = nullptr);
  // The id of the named session 'name' (0: none), as 'session list' shows.
  static uint64_t id_of(const std::string &name, const std::string &path = kDevicePath);
  // Destroys the named session 'name' if it is still the one with 'id' and as
  // open_named() left it when creating it (idle, no probe, only this process
  // attached): what a command that created it does when it then fails, so a
  // refused command leaves no session behind.  Best effort: a session someone
  // else took is kept, except one attached to, and given a probe, between
  // this check and the destroy (the kernel has no conditional destroy).
  static void destroy_if_unused(const std::string &name, uint64_t id, const std::string &path = kDevicePath);
  // Destroys the named session (stops it, detaches its probes).
  static void destroy(const std::string &name, const std::string &path = kDevicePath);
  // Destroys every named session (lets 'rmmod ktrack' succeed).
  static void destroy_all(const std::string &path = kDevicePath);
  static std::vector<SessionInfo> list(const std::string &path = kDevicePath);

  Session(Session &&) noexcept = default;
  Session &operator=(Session &&) noexcept = default;

  int fd() const { return dev_.fd(); }
  const Device &device() const { return dev_; }
  const std::string &name() const { return name_; }  // "" when anonymous
  bool named() const { return !name_.empty(); }

  // Applies 'cfg' (session stopped; EBUSY while running or when mapped and
  // the size changes; E2BIG when buf_pages > KTRACK_MAX_BUF_PAGES).
  void configure(const SessionConfig &cfg);
  SessionConfig config() const;
  void start();
  // Stops recording; every record committed before returns stays readable.
  void stop();
  // Writes pending lost-record markers and wakes every reader.
  void flush();
  SessionStats stats() const;
  // Number of possible CPUs: ring index range for RingReader.
  uint32_t nr_cpus() const;
  // Has a probe's stop action paused recording since the last start?  (One
  // ioctl, no per-CPU counters; false on a module without triggers.)
  bool trigger_stopped() const;
  // KTRACK_STATS_F_* now (one ioctl): a stop action paused it, a snapshot
  // is being copied or waits to be taken.  0 on a module without them.
  uint32_t stats_flags() const;
  // Takes the snapshot that waits (the slot is then free for the next);
  // nullopt when none is ready.
  std::optional<Snapshot> take_snapshot();
  // Snapshots taken and missed in this run so far ({0, 0} on a module
  // without snapshots).
  std::pair<uint64_t, uint64_t> snapshot_counts() const;
  // Inserts a KTRACK_REC_MARKER record (returns false when it was dropped
  // because the buffer is full; throws when not running or too long).
  bool write_marker(std::string_view text);

 private:
  Session(Device dev, std::string name) : dev_(std::move(dev)), name_(std::move(name)) {}
  Device dev_;
  std::string name_;
};

}  // namespace ktrack
