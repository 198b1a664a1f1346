// Probe ioctl wrappers and schema bridge (see probes/probe_client.hpp).
#include "probes/probe_client.hpp"

#include <fmt/core.h>
#include <sys/ioctl.h>

#include <cerrno>
#include <cstring>

#include "host/sysfs.hpp"
#include "probes/btf_resolver.hpp"
#include "probes/probe_batch.hpp"
#include "util/error.hpp"
#include "util/glob.hpp"

namespace ktrack {

namespace {

int do_ioctl(int fd, unsigned long cmd, void *arg) {
  int rc;
  do {
    rc = ::ioctl(fd, cmd, arg);
  } while (rc < 0 && errno == EINTR);
  return rc < 0 ? -errno : rc;
}

std::string target_of(const ProbeSpec &s) {
  switch (s.kind) {
    case ProbeKind::kFuncs:
      if (!s.module.empty()) {
        std::string globs;
        for (const auto &p : s.patterns) globs += (globs.empty() ? "" : ",") + p;
        return s.module + ":" + globs;
      }
      if (s.kernel_glob && !has_glob(s.funcs.at(0))) return s.funcs.at(0);
      if (s.kernel_glob) return fmt::format("every function matching {} (kernel glob)", s.funcs.at(0));
      return fmt::format("{} function{}", s.funcs.size(), s.funcs.size() == 1 ? "" : "s");
    case ProbeKind::kTracepoint:
      return (s.module.empty() ? "" : s.module + ":") +
             (s.subsys.empty() ? s.event : s.subsys + "/" + s.event);
    case ProbeKind::kEvent:
      return (s.module.empty() ? "" : s.module + ":") + s.subsys + "/" + s.event;
    case ProbeKind::kUserEvent:
      return "user event " + s.user_event();
    case ProbeKind::kUprobe:
    case ProbeKind::kUretprobe:
      if (s.symbol.empty()) return fmt::format("{}:0x{:x}", s.path, s.addr);
      return s.path + ":" + s.symbol + (s.offset ? fmt::format("+{}", s.offset) : "");
    default:
      if (s.symbol.empty()) return fmt::format("0x{:x}", s.addr);
      return (s.module.empty() ? "" : s.module + ":") + s.symbol +
             (s.offset ? fmt::format("+{}", s.offset) : "");
  }
}

}  // namespace

void check_probe_features(const ProbeSpec &spec, uint64_t features) {
  if (spec.is_user() && !(features & KTRACK_FEAT_UPROBE))
    throw Error(fmt::format(
        "the loaded ktrack.ko cannot probe user code (no KTRACK_FEAT_UPROBE) for probe '{}': unload it and "
        "run 'ktrackctl load' to load the module that matches this ktrackctl",
        spec.name));
  if (spec.kernel_glob && !(features & KTRACK_FEAT_KERNEL_GLOB))
    throw Error(fmt::format(
        "the loaded ktrack.ko cannot match an f glob itself (no KTRACK_FEAT_KERNEL_GLOB) for probe '{}': "
        "unload it and run 'ktrackctl load' to load the module that matches this ktrackctl",
        spec.name));
  if (spec.kind == ProbeKind::kUserEvent && !(features & KTRACK_FEAT_USER_EVENT))
    throw Error(fmt::format(
        "the loaded ktrack.ko has no user events (no KTRACK_FEAT_USER_EVENT) for probe '{}': unload it and "
        "run 'ktrackctl load' to load the module that matches this ktrackctl",
        spec.name));
}

bool prefer_ftrace_ops(CompiledProbe &c, uint64_t features) {
  ProbeSpec &s = c.spec;
  if (s.kernel_glob || !s.module.empty() || s.graph_flags) return false;
  if (s.kind == ProbeKind::kKprobe) {
    // by name, at offset 0, a function ftrace lists (resolve_symbols)
    if (!(features & KTRACK_FEAT_KPROBE_FTRACE_OPS) || !s.ftrace_entry || s.symbol.empty() || s.offset ||
        s.maxactive)
      return false;
  } else if (!(features & KTRACK_FEAT_KERNEL_GLOB) || s.kind != ProbeKind::kFuncs || !s.entry || s.exit ||
             s.patterns.size() != 1 || has_glob(s.patterns[0]) || s.funcs.size() != 1 || !s.ftrace_entry) {
    return false;
  }
  // f: funcs[0] is the name ftrace lists (an alias resolved: resolve_symbols)
  s.kernel_glob = true;
  c.blob = compile_probe(s);
  return true;
}

namespace {

// u / ur: what the kernel's uprobes answered.
std::string explain_uprobe_add_errno(const ProbeSpec &spec, const std::string &t, int err) {
  switch (err) {
    case ENOENT:
      return fmt::format("cannot add probe '{}': {} does not exist (in the kernel's view of the file system)",
                         spec.name, spec.path);
    case EINVAL:
      return fmt::format(
          "cannot add probe '{}': the kernel rejected {} (file offset 0x{:x}): the offset is not on an "
          "instruction boundary, or the description is bad (ktrackctl and ktrack.ko out of sync? rebuild "
          "both)",
          spec.name, t, spec.file_offset);
    case ENOTSUP:  // EOPNOTSUPP too (one value on Linux)
    case 524:      // the kernel's own ENOTSUPP, should it come through
      return fmt::format(
          "cannot add probe '{}': the kernel cannot place a uprobe at {} (file offset 0x{:x}): an "
          "instruction it cannot step out of line, or a file system without uprobes",
          spec.name, t, spec.file_offset);
    case EPERM:
    case EACCES:
      return fmt::format(
          "cannot add probe '{}': permission denied: a uprobe needs root (CAP_PERFMON or CAP_SYS_ADMIN)",
          spec.name);
    default:
      return {};
  }
}

}  // namespace

namespace {
// The kernel matched an f probe's glob (kernel_glob) to no function.
bool glob_matched_nothing(const ProbeSpec &spec, int err) {
  return err == ENOENT && spec.kind == ProbeKind::kFuncs && spec.kernel_glob && has_glob(spec.funcs.at(0));
}
}  // namespace

std::string explain_probe_add_errno(const ProbeSpec &spec, int err) {
  std::string t = target_of(spec);
  if (spec.is_user())
    if (std::string m = explain_uprobe_add_errno(spec, t, err); !m.empty()) return m;
  const bool mod_glob = spec.kind == ProbeKind::kFuncs && !spec.module.empty();
  if (mod_glob && err == ENOENT)
    return fmt::format("cannot add probe '{}': no traceable function of module {} matches {}", spec.name,
                       spec.module, t);
  if (mod_glob && err == E2BIG)
    return fmt::format(
        "cannot add probe '{}': {} matches more than {} functions, or its patterns exceed {} bytes in all: "
        "narrow the glob",
        spec.name, t, KTRACK_PROBE_MAX_FUNCS, KTRACK_PROBE_MODGLOB_MAX);
  if (mod_glob && err == EINVAL)
    return fmt::format(
        "cannot add probe '{}': the kernel rejected {} (a ktrack.ko older than f MOD:GLOB, or ktrackctl "
        "and ktrack.ko are out of sync? rebuild both)",
        spec.name, t);
  for (const auto &a : spec.actions)
    if (a.type == KTRACK_ACT_SNAPSHOT && err == EINVAL)
      return fmt::format(
          "cannot add probe '{}': '=> snapshot' needs a session in overwrite mode (record --flight SIZE, or "
          "'ktrackctl session create NAME --mode overwrite'), or a ktrack.ko with snapshots ('ktrackctl "
          "version' lists 'snapshot')",
          spec.name);
  if (!spec.actions.empty() && err == EINVAL)
    return fmt::format(
        "cannot add probe '{}': the kernel rejected it with its actions ('=> {}'): a ktrack.ko without "
        "triggers ('ktrackctl version' lists 'triggers' among the features)? load the module built with "
        "this ktrackctl",
        spec.name, action_name(spec.actions[0].type));
  if (glob_matched_nothing(spec, err))
    return fmt::format(
        "cannot add probe '{}': no traceable function matches '{}' (see "
        "/sys/kernel/tracing/available_filter_functions)",
        spec.name, spec.funcs[0]);
  switch (err) {
    case ENOENT:
      if (spec.kind == ProbeKind::kEvent)
        return fmt::format(
            "cannot add probe '{}': no trace event {} in this kernel (see "
            "/sys/kernel/tracing/events)",
            spec.name, t);
      return spec.kind == ProbeKind::kTracepoint
                 ? fmt::format(
                       "cannot add probe '{}': no tracepoint {} in this kernel or its loaded modules (see "
                       "/sys/kernel/tracing/events; for a module not loaded yet write MODULE:{})",
                       spec.name, t, t)
                 : fmt::format(
                       "cannot add probe '{}': symbol not found: {} (check /proc/kallsyms; for a module "
                       "function write MOD:SYM and load the module)",
                       spec.name, t);
    case EADDRNOTAVAIL:
      return fmt::format("cannot add probe '{}': {} is not unique: write MOD:SYM or probe by address",
                         spec.name, t);
    case EOPNOTSUPP:
      return fmt::format(
          "cannot add probe '{}': {} is not probeable (blacklisted for kprobes, notrace, or the "
          "offset is not on an instruction boundary)",
          spec.name, t);
    case EEXIST:
      return fmt::format(
          "cannot add probe '{}': a probe with that name already exists in this session: "
          "delete it ('ktrackctl probe del {}') or choose another name with p:NAME",
          spec.name, spec.name);
    case EBUSY:
      return fmt::format("cannot add probe '{}': {} is in use by another tracer that excludes this one",
                         spec.name, t);
    case EPERM: {
      // integrity refuses no probe (as it refuses no kprobe event): only
      // confidentiality is lockdown's doing, and only for what hooks a
      // function or reads kernel memory (kmod/probe.c kt_locked_down()).
      const bool hooks = spec.kind == ProbeKind::kKprobe || spec.kind == ProbeKind::kKretprobe ||
                         spec.kind == ProbeKind::kFuncs;
      const bool reads = spec.kind == ProbeKind::kTracepoint || spec.kind == ProbeKind::kEvent;
      if ((hooks || reads) && locked_down_confidentiality()) {
        if (hooks)
          return lockdown_refusal(
              fmt::format("add probe '{}'", spec.name), "use this one",
              "of the probes, only t probes that read no kernel memory, u/ur and U probes are allowed");
        return fmt::format(
            "cannot add probe '{}': permission denied: {}, so a t or e probe may fetch no dereference, "
            "kernel string or @SYM; if this one fetches none, it needs root (CAP_PERFMON or "
            "CAP_SYS_ADMIN)",
            spec.name, kLockdownForbids);
      }
      const std::string mode = read_lockdown_mode();
      return fmt::format(
          "cannot add probe '{}': permission denied: this needs root (CAP_PERFMON or "
          "CAP_SYS_ADMIN): run it with sudo (a member of the ktrack group may only record the sessions "
          "root shares: docs/ACCESS.md){}",
          spec.name, mode.empty() ? ", or the kernel is locked down against kprobes" : "");
    }
    case EACCES:
      return fmt::format(
          "cannot add probe '{}': missing privilege: run it as root (CAP_PERFMON or CAP_SYS_ADMIN)",
          spec.name);
    case ENOSPC:
      return fmt::format(
          "cannot add probe '{}': the session has too many probes (the limit is ktrack.ko's max_probes, "
          "/sys/module/ktrack/parameters/max_probes): delete some first",
          spec.name);
    case EINVAL:
      return fmt::format(
          "cannot add probe '{}': the kernel rejected its description (ktrackctl and ktrack.ko "
          "are out of sync? rebuild both)",
          spec.name);
    case E2BIG:
      return fmt::format("cannot add probe '{}': the description is too large: use fewer functions",
                         spec.name);
    case ENOTTY:
      return "cannot add a probe: the loaded ktrack module has no probe support: load the module built with "
             "this ktrackctl";
    default:
      return explain_errno(fmt::format("add probe '{}'", spec.name), err);
  }
}

int ProbeClient::add_raw(const void *blob, uint32_t size, ProbeAdded *out) const {
  ktrack_probe_add req{};
  req.size = sizeof(req);
  req.desc_size = size;
  req.desc_ptr = (uint64_t)(uintptr_t)blob;
  int rc = do_ioctl(fd_, KTRACK_IOC_PROBE_ADD, &req);
  if (rc == 0 && out) {
    out->id = req.id;
    out->state = req.state;
    out->mechanism = req.mechanism;
  }
  return rc;
}

ProbeAdded ProbeClient::add(const ProbeSpec &spec, const std::vector<uint8_t> &blob) const {
  ProbeAdded out;
  int rc = add_raw(blob.data(), (uint32_t)blob.size(), &out);
  if (rc < 0) {
    // a glob the kernel matched to nothing is the spec's fault, as when
    // ktrackctl matches it (resolve_symbols): a usage error
    if (glob_matched_nothing(spec, -rc)) throw UsageError(explain_probe_add_errno(spec, -rc));
    throw Error(explain_probe_add_errno(spec, -rc));
  }
  return out;
}

bool ProbeClient::del(const std::string &name) const {
  ktrack_probe_del req{};
  req.size = sizeof(req);
  if (name.size() >= sizeof(req.name)) throw UsageError(fmt::format("probe name '{}' is too long", name));
  std::memcpy(req.name, name.c_str(), name.size());
  int rc = do_ioctl(fd_, KTRACK_IOC_PROBE_DEL, &req);
  if (rc == -ENOENT) return false;
  if (rc < 0) throw SysError(fmt::format("delete probe '{}'", name), -rc);
  return true;
}

void ProbeClient::del_all() const {
  ktrack_probe_del req{};
  req.size = sizeof(req);
  req.flags = KTRACK_PROBE_DEL_ALL;
  int rc = do_ioctl(fd_, KTRACK_IOC_PROBE_DEL, &req);
  if (rc < 0) throw SysError("delete every probe", -rc);
}

std::vector<ProbeInfo> ProbeClient::list() const {
  std::vector<ktrack_probe_info> buf(16);
  ktrack_probe_list req{};
  for (;;) {
    req = {};
    req.size = sizeof(req);
    req.count = (uint32_t)buf.size();
    req.entries_ptr = (uint64_t)(uintptr_t)buf.data();
    req.entry_size = sizeof(ktrack_probe_info);
    int rc = do_ioctl(fd_, KTRACK_IOC_PROBE_LIST, &req);
    if (rc < 0) throw SysError("list probes", -rc);
    if (req.count <= buf.size()) break;
    buf.resize(req.count);
  }
  std::vector<ProbeInfo> out;
  for (uint32_t i = 0; i < req.count; i++) {
    const auto &k = buf[i];
    out.push_back({.id = k.id,
                   .kind = k.kind,
                   .mechanism = k.mechanism,
                   .state = k.state,
                   .hits = k.hits,
                   .misses = k.misses,
                   .filtered = k.filtered,
                   .dropped = k.dropped,
                   .faults = k.faults,
                   .idle = k.idle,
                   .nr_funcs = k.nr_funcs,
                   .arm_count = k.arm_count,
                   .name = std::string(k.name, strnlen(k.name, sizeof(k.name))),
                   .target = std::string(k.target, strnlen(k.target, sizeof(k.target)))});
  }
  return out;
}

std::vector<uint8_t> ProbeClient::get(uint32_t id) const {
  ktrack_probe_get req{};
  req.size = sizeof(req);
  req.id = id;
  int rc = do_ioctl(fd_, KTRACK_IOC_PROBE_GET, &req);
  if (rc < 0) throw SysError(fmt::format("read the description of probe {}", id), -rc);
  std::vector<uint8_t> blob(req.desc_size);
  req.desc_ptr = (uint64_t)(uintptr_t)blob.data();
  rc = do_ioctl(fd_, KTRACK_IOC_PROBE_GET, &req);
  if (rc < 0) throw SysError(fmt::format("read the description of probe {}", id), -rc);
  blob.resize(req.desc_size);
  return blob;
}

std::vector<ktrack_profile_entry> ProbeClient::profile(uint32_t id, uint64_t *overflow) const {
  std::vector<ktrack_profile_entry> buf(64);
  ktrack_probe_profile req{};
  for (;;) {
    req = {};
    req.size = sizeof(req);
    req.id = id;
    req.count = static_cast<uint32_t>(buf.size());
    req.entry_size = sizeof(ktrack_profile_entry);
    req.entries_ptr = (uint64_t)(uintptr_t)buf.data();
    int rc = do_ioctl(fd_, KTRACK_IOC_PROBE_PROFILE, &req);
    if (rc == -EINVAL)
      throw Error(
          fmt::format("probe {} does not profile (add it with profile --live), or this ktrack.ko is older "
                      "than ktrackctl: unload it and run 'ktrackctl load' to load the matching module",
                      id));
    if (rc < 0) throw SysError(fmt::format("read the profile of probe {}", id), -rc);
    if (req.count <= buf.size()) break;
    buf.resize(req.count);
  }
  buf.resize(req.count);
  if (overflow) *overflow = req.overflow;
  return buf;
}

Schema probe_decoder_schema(uint32_t id, const ProbeSchema &ps) {
  Schema s;
  s.rec_type = KTRACK_REC_PROBE;
  s.probe_id = id;
  s.name = ps.name;
  if (ps.kind == KTRACK_PROBE_UPROBE || ps.kind == KTRACK_PROBE_URETPROBE) {
    // user addresses: the site from the spec the probe was made from
    s.user_ip = true;
    try {
      ProbeSpec spec = parse_probe_spec(ps.spec);
      if (!spec.symbol.empty())
        s.user_site = spec.kind == ProbeKind::kUretprobe ? spec.symbol
                                                         : fmt::format("{}+0x{:x}", spec.symbol, spec.offset);
    } catch (const Error &) {
      // a spec this ktrackctl cannot read: the hex address then
    }
  }
  for (const auto &f : ps.fields) {
    FieldType t;
    uint32_t size = (uint32_t)f.size * f.count;
    switch (f.type) {
      case KTRACK_FETCH_T_STRING:
      case KTRACK_FETCH_T_USTRING:
        t = FieldType::DynString;
        size = 4;
        break;
      case KTRACK_FETCH_T_SYMBOL:
        t = FieldType::Symbol;
        break;
      case KTRACK_FETCH_T_S:
        t = f.size == 1   ? FieldType::S8
            : f.size == 2 ? FieldType::S16
            : f.size == 4 ? FieldType::S32
                          : FieldType::S64;
        break;
      case KTRACK_FETCH_T_U:
        t = f.size == 1   ? FieldType::U8
            : f.size == 2 ? FieldType::U16
            : f.size == 4 ? FieldType::U32
                          : FieldType::U64;
        break;
      default:
        t = f.size == 1   ? FieldType::X8
            : f.size == 2 ? FieldType::X16
            : f.size == 4 ? FieldType::X32
                          : FieldType::X64;
        break;
    }
    s.fields.push_back(make_field(f.name, t, f.slot, size));
  }
  return s;
}

void register_probe_schemas(int fd, SchemaRegistry &reg) {
  ProbeClient pc(fd);
  for (const auto &p : pc.list()) {
    ProbeSchema ps = schema_from_desc(pc.get(p.id));
    reg.add(probe_decoder_schema(p.id, ps));
  }
}

CompiledProbe compile_probe_for_system(const std::string &text, uint32_t stack_depth, uint64_t hit_limit,
                                       bool globs_in_kernel) {
  SystemSymbols syms(globs_in_kernel);
  return ProbeCompiler::for_system(syms).compile(text, stack_depth, hit_limit);
}

}  // namespace ktrack
