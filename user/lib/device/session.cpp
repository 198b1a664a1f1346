#include "device/session.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/error.hpp"

namespace ktrack {

ktrack_cpu_stats SessionStats::total() const {
  ktrack_cpu_stats t{};
  t.cpu = UINT32_MAX;
  for (const auto &c : cpus) {
    t.online += c.online;
    t.written += c.written;
    t.lost_full += c.lost_full;
    t.lost_too_big += c.lost_too_big;
    t.overwritten += c.overwritten;
    t.bytes += c.bytes;
    t.read += c.read;
    t.filtered += c.filtered;
  }
  return t;
}

uint64_t SessionStats::total_wakeups() const {
  uint64_t t = 0;
  for (uint64_t w : wakeups) t += w;
  return t;
}

const char *state_name(uint32_t state) {
  switch (state) {
    case KTRACK_STATE_IDLE:
      return "idle";
    case KTRACK_STATE_RUNNING:
      return "running";
    case KTRACK_STATE_STOPPED:
      return "stopped";
    default:
      return "unknown";
  }
}

const char *mode_name(uint32_t mode) { return mode == KTRACK_MODE_OVERWRITE ? "overwrite" : "discard"; }

const char *clock_name(uint32_t clock) {
  switch (clock) {
    case KTRACK_CLOCK_MONO:
      return "mono";
    case KTRACK_CLOCK_BOOT:
      return "boot";
    default:
      return "local";
  }
}

uint32_t parse_mode(std::string_view s) {
  if (s == "discard") return KTRACK_MODE_DISCARD;
  if (s == "overwrite") return KTRACK_MODE_OVERWRITE;
  throw UsageError(fmt::format("unknown buffer mode '{}': use 'discard' or 'overwrite'", s));
}

uint32_t parse_clock(std::string_view s) {
  if (s == "local") return KTRACK_CLOCK_LOCAL;
  if (s == "mono") return KTRACK_CLOCK_MONO;
  if (s == "boot") return KTRACK_CLOCK_BOOT;
  throw UsageError(fmt::format("unknown clock '{}': use 'local', 'mono' or 'boot'", s));
}

void validate_session_name(std::string_view name) {
  bool ok = !name.empty() && name.size() < KTRACK_SESSION_NAME_MAX;
  for (char c : name)
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-')) ok = false;
  if (!ok)
    throw UsageError(fmt::format("invalid session name '{}': use 1 to {} characters of A-Z a-z 0-9 _ . -",
                                 name, KTRACK_SESSION_NAME_MAX - 1));
}

namespace {

ktrack_session_req make_req(const std::string &name, uint32_t flags) {
  ktrack_session_req r{};
  r.size = sizeof(r);
  r.flags = flags;
  std::strncpy(r.name, name.c_str(), sizeof(r.name) - 1);
  return r;
}

// Session-specific advice for the errno values these ioctls return.
std::string session_error(const std::string &action, int err, const std::string &name) {
  switch (err) {
    case EEXIST:
      return fmt::format("cannot {}: a session named '{}' already exists (attach to it, or destroy it first)",
                         action, name);
    case ENOENT:
      return fmt::format("cannot {}: there is no session named '{}' (see 'ktrackctl session list')", action,
                         name);
    case ENODEV:
      return fmt::format("cannot {}: the session was destroyed meanwhile", action);
    case EACCES:
      return fmt::format(
          "cannot {}: session '{}' is not shared with the ktrack group; root shares a session with "
          "'sudo ktrackctl session create {} --group' (docs/ACCESS.md)",
          action, name, name);
    default:
      return explain_errno(action, err);
  }
}

}  // namespace

Session Session::open_anonymous(const std::string &path) { return Session(Device(path), ""); }

Session Session::create(const std::string &name, const std::string &path) {
  validate_session_name(name);
  Device dev(path);
  auto req = make_req(name, 0);
  int rc = dev.ioctl_raw(KTRACK_IOC_SESSION_CREATE, &req);
  if (rc < 0) throw Error(session_error("create session '" + name + "'", -rc, name));
  return Session(std::move(dev), name);
}

Session Session::attach(const std::string &name, const std::string &path) {
  validate_session_name(name);
  Device dev(path);
  auto req = make_req(name, 0);
  int rc = dev.ioctl_raw(KTRACK_IOC_SESSION_ATTACH, &req);
  if (rc < 0) throw Error(session_error("attach to session '" + name + "'", -rc, name));
  return Session(std::move(dev), name);
}

Session Session::open_named(const std::string &name, const std::string &path, bool *created) {
  validate_session_name(name);
  Device dev(path);
  auto req = make_req(name, 0);
  bool made = false;
  int rc = dev.ioctl_raw(KTRACK_IOC_SESSION_ATTACH, &req);
  if (rc == -ENOENT) {
    rc = dev.ioctl_raw(KTRACK_IOC_SESSION_CREATE, &req);
    made = rc == 0;
    if (rc == -EEXIST) rc = dev.ioctl_raw(KTRACK_IOC_SESSION_ATTACH, &req);  // lost a race
  }
  if (rc < 0) throw Error(session_error("open session '" + name + "'", -rc, name));
  if (created) *created = made;
  return Session(std::move(dev), name);
}

uint64_t Session::id_of(const std::string &name, const std::string &path) {
  for (const SessionInfo &s : list(path))
    if (s.name == name) return s.id;
  return 0;
}

void Session::destroy_if_unused(const std::string &name, uint64_t id, const std::string &path) {
  try {
    for (const SessionInfo &s : list(path))
      if (s.name == name && s.id == id && id && s.nr_probes == 0 && s.nr_fds <= 1 &&
          s.state == KTRACK_STATE_IDLE)
        destroy(name, path);
  } catch (const Error &) {
    // it stays, as it would have without this
  }
}

void Session::destroy(const std::string &name, const std::string &path) {
  validate_session_name(name);
  Device dev(path);
  auto req = make_req(name, 0);
  int rc = dev.ioctl_raw(KTRACK_IOC_SESSION_DESTROY, &req);
  if (rc < 0) throw Error(session_error("destroy session '" + name + "'", -rc, name));
}

void Session::destroy_all(const std::string &path) {
  Device dev(path);
  auto req = make_req("", KTRACK_SESSION_F_ALL);
  int rc = dev.ioctl_raw(KTRACK_IOC_SESSION_DESTROY, &req);
  if (rc < 0) throw SysError("destroy every named session", -rc);
}

std::vector<SessionInfo> Session::list(const std::string &path) {
  Device dev(path);
  std::vector<ktrack_session_info> raw;
  for (;;) {
    ktrack_session_list l{};
    l.size = sizeof(l);
    l.count = static_cast<uint32_t>(raw.size());
    l.entries_ptr = reinterpret_cast<uintptr_t>(raw.data());
    int rc = dev.ioctl_raw(KTRACK_IOC_SESSION_LIST, &l);
    if (rc < 0) throw SysError("list the named sessions", -rc);
    if (l.count <= raw.size()) {
      raw.resize(l.count);
      break;
    }
    raw.resize(l.count + 4);  // sessions may appear meanwhile
  }
  std::vector<SessionInfo> out;
  for (const auto &r : raw) {
    SessionInfo i;
    i.name.assign(r.name, strnlen(r.name, sizeof(r.name)));
    i.id = r.id;
    i.nr_fds = r.nr_fds;
    i.state = r.state;
    i.nr_probes = r.nr_probes;
    i.buf_pages = r.buf_pages;
    out.push_back(std::move(i));
  }
  return out;
}

const char *const kRingBudgetAdvice =
    "ktrack's sessions together would hold more ring buffer pages than the module parameter "
    "max_total_pages allows (default 1/4 of RAM): destroy or reconfigure other sessions ('ktrackctl "
    "session list'), configure fewer pages per CPU, or raise /sys/module/ktrack/parameters/max_total_pages";

void Session::configure(const SessionConfig &cfg) {
  ktrack_config c{};
  c.size = sizeof(c);
  c.buf_pages = cfg.buf_pages;
  c.mode = cfg.mode;
  c.clock = cfg.clock;
  c.wakeup_bytes = cfg.wakeup_bytes;
  c.wakeup_percent = cfg.wakeup_percent;
  if (cfg.pids.size() > KTRACK_MAX_PID_FILTER)
    throw UsageError(fmt::format("too many pids to filter on: at most {}", KTRACK_MAX_PID_FILTER));
  c.nr_pids = static_cast<uint32_t>(cfg.pids.size());
  for (size_t i = 0; i < cfg.pids.size(); i++) c.pids[i] = cfg.pids[i];
  c.cpu_mask = cfg.cpu_mask;
  c.flags = (cfg.dump_on_oops ? KTRACK_CFG_F_DUMP_ON_OOPS : 0) | (cfg.pid_tree ? KTRACK_CFG_F_PID_TREE : 0) |
            (cfg.group ? KTRACK_CFG_F_GROUP : 0);
  int rc = dev_.ioctl_raw(KTRACK_IOC_SET_CONFIG, &c);
  if (rc == -E2BIG)
    throw Error(fmt::format(
        "cannot configure the session buffers: {} pages per CPU is more than the maximum {}, or more than "
        "the module parameter max_pages_per_session allows for every CPU together (default 1/16 of RAM; "
        "see /sys/module/ktrack/parameters/max_pages_per_session)",
        cfg.buf_pages, KTRACK_MAX_BUF_PAGES));
  if (rc == -EINVAL)
    throw Error(
        "cannot configure the session: the buffer size must be a power of two pages, the mode, clock, "
        "watermark (percent <= 100) and CPU mask must be valid, only a named session is shared with the "
        "ktrack group, and a shared session stays shared (destroy it instead)");
  if (rc == -EBUSY)
    throw Error("cannot configure the session: it is running (stop it first) or its buffers are mapped");
  if (rc < 0) throw SysError("configure the session", -rc);
}

SessionConfig Session::config() const {
  ktrack_config c{};
  c.size = sizeof(c);
  int rc = dev_.ioctl_raw(KTRACK_IOC_GET_CONFIG, &c);
  if (rc < 0) throw SysError("read the session configuration", -rc);
  return {.buf_pages = c.buf_pages,
          .mode = c.mode,
          .clock = c.clock,
          .wakeup_bytes = c.wakeup_bytes,
          .wakeup_percent = c.wakeup_percent,
          .pids = std::vector<int32_t>(c.pids, c.pids + std::min<uint32_t>(c.nr_pids, KTRACK_MAX_PID_FILTER)),
          .cpu_mask = c.cpu_mask,
          .dump_on_oops = (c.flags & KTRACK_CFG_F_DUMP_ON_OOPS) != 0,
          .pid_tree = (c.flags & KTRACK_CFG_F_PID_TREE) != 0,
          .group = (c.flags & KTRACK_CFG_F_GROUP) != 0};
}

void Session::start() {
  int rc = dev_.ioctl_raw(KTRACK_IOC_START, nullptr);
  if (rc == -EBUSY) throw Error("cannot start the session: it is already running");
  if (rc == -E2BIG)
    throw Error(
        "cannot start the session: its buffers for every CPU are more than the module parameter "
        "max_pages_per_session allows (default 1/16 of RAM): configure fewer pages per CPU");
  if (rc == -ENOSPC) throw Error(std::string("cannot start the session: ") + kRingBudgetAdvice);
  if (rc < 0) throw SysError("start the session", -rc);
}

void Session::stop() {
  int rc = dev_.ioctl_raw(KTRACK_IOC_STOP, nullptr);
  if (rc < 0 && rc != -EALREADY) throw SysError("stop the session", -rc);
}

void Session::flush() {
  int rc = dev_.ioctl_raw(KTRACK_IOC_FLUSH, nullptr);
  if (rc < 0) throw SysError("flush the session buffers", -rc);
}

SessionStats Session::stats() const {
  SessionStats st;
  // Entries of ktrack_cpu_stats_ext when the module has them; a module
  // without takes cpu_stats_size 0 only, and writes the first struct.
  const bool ext = dev_.version().features & KTRACK_FEAT_STATS_WAKEUPS;
  const size_t stride = ext ? sizeof(ktrack_cpu_stats_ext) : sizeof(ktrack_cpu_stats);
  std::vector<uint8_t> buf;
  for (;;) {
    ktrack_stats s{};
    s.size = sizeof(s);
    s.nr_cpus = static_cast<uint32_t>(buf.size() / stride);
    s.cpus_ptr = reinterpret_cast<uintptr_t>(buf.data());
    s.cpu_stats_size = ext ? static_cast<uint32_t>(stride) : 0;
    int rc = dev_.ioctl_raw(KTRACK_IOC_GET_STATS, &s);
    if (rc < 0) throw SysError("read the session statistics", -rc);
    st.state = s.state;
    st.trigger_stopped = s.flags & KTRACK_STATS_F_TRIG_STOPPED;
    const bool fits = s.nr_cpus <= buf.size() / stride;
    buf.resize(s.nr_cpus * stride);  // out: the possible CPUs
    if (fits) break;
  }
  for (size_t off = 0; off < buf.size(); off += stride) {
    ktrack_cpu_stats_ext e{};
    std::memcpy(&e, buf.data() + off, stride);
    st.cpus.push_back(e.s);
    if (ext) st.wakeups.push_back(e.wakeups);
  }
  return st;
}

uint32_t Session::nr_cpus() const {
  ktrack_stats s{};
  s.size = sizeof(s);
  int rc = dev_.ioctl_raw(KTRACK_IOC_GET_STATS, &s);
  if (rc < 0) throw SysError("read the session statistics", -rc);
  return s.nr_cpus;
}

bool Session::trigger_stopped() const { return stats_flags() & KTRACK_STATS_F_TRIG_STOPPED; }

uint32_t Session::stats_flags() const {
  ktrack_stats s{};
  s.size = sizeof(s);
  int rc = dev_.ioctl_raw(KTRACK_IOC_GET_STATS, &s);
  if (rc < 0) throw SysError("read the session statistics", -rc);
  return s.flags;
}

std::optional<Snapshot> Session::take_snapshot() {
  Snapshot snap;
  for (;;) {
    ktrack_snapshot req{};
    req.size = sizeof(req);
    req.buf_ptr = reinterpret_cast<uintptr_t>(snap.records.data());
    req.buf_len = snap.records.size();
    int rc = dev_.ioctl_raw(KTRACK_IOC_SNAPSHOT_GET, &req);
    if (rc == -ENOENT || rc == -EAGAIN) return std::nullopt;
    if (rc == -ENOSPC && req.buf_len > snap.records.size()) {
      snap.records.resize(req.buf_len);  // the size it needs now; it stays until taken
      continue;
    }
    if (rc == -ENOTTY)
      throw Error(
          "cannot take a snapshot: this ktrack.ko has no snapshots ('ktrackctl version' lists "
          "'snapshot' among the features): load the module built with this ktrackctl");
    if (rc < 0) throw SysError("take the session's snapshot", -rc);
    snap.records.resize(req.buf_len);
    snap.ts = req.ts;
    snap.nth = req.nth;
    snap.seq = req.seq;
    snap.missed = req.missed;
    snap.count = req.records;
    snap.probe_id = req.probe_id;
    snap.overrun = req.flags & KTRACK_SNAP_F_OVERRUN;
    return snap;
  }
}

std::pair<uint64_t, uint64_t> Session::snapshot_counts() const {
  ktrack_snapshot req{};
  req.size = sizeof(req);
  // No buffer: the struct comes back with the counts whatever the slot holds.
  int rc = dev_.ioctl_raw(KTRACK_IOC_SNAPSHOT_GET, &req);
  if (rc == 0 || rc == -ENOENT || rc == -EAGAIN || rc == -ENOSPC) return {req.seq, req.missed};
  return {0, 0};
}

bool Session::write_marker(std::string_view text) {
  if (text.size() >= KTRACK_MARKER_MAX)
    throw UsageError(fmt::format("marker text too long: at most {} bytes", KTRACK_MARKER_MAX - 1));
  ssize_t n;
  do {
    n = ::write(fd(), text.data(), text.size());
  } while (n < 0 && errno == EINTR);
  if (n >= 0) return true;
  if (errno == ENOSPC) return false;
  if (errno == ENODATA) throw Error("cannot write a marker: the session is not running (start it first)");
  throw SysError("write a marker", errno);
}

}  // namespace ktrack
