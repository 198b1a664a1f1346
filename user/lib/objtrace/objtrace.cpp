// Object tracker configuration: parsing sources/watches, building the ioctl
// arguments, applying them to a session.  See objtrace/objtrace.hpp.
#include "objtrace/objtrace.hpp"

#include <fmt/format.h>
#include <sys/ioctl.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "host/sysfs.hpp"
#include "util/error.hpp"

namespace ktrack {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Decimal or 0x-hex unsigned number, the whole string.
std::optional<uint64_t> parse_u64(std::string_view s) {
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    s.remove_prefix(2);
    base = 16;
  }
  if (s.empty()) return std::nullopt;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

bool valid_symbol(std::string_view s) {
  if (s.empty() || s.size() >= KTRACK_OBJ_SYM_MAX) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.') return false;
  return !std::isdigit(static_cast<unsigned char>(s[0]));
}

[[noreturn]] void bad_source(std::string_view spec, std::string_view why) {
  throw UsageError(
      fmt::format("invalid object source '{}': {}; use 'r:FUNC $retval', 'p:FUNC $argN' (N = 1..{}), "
                  "'+OFF($retval)'/'+OFF($argN)' to follow a pointer field, or an address '0xffff...'",
                  spec, why, KTRACK_OBJ_MAX_ARGS));
}

}  // namespace

ObjSource parse_obj_source(std::string_view spec) {
  ObjSource s;
  s.text = std::string(spec);
  std::string_view t = trim(spec);
  if (t.empty()) bad_source(spec, "it is empty");
  if (auto a = parse_u64(t.starts_with("addr:") ? t.substr(5) : t)) {
    // Kernel space starts at 0xffff800000000000 with 4-level paging and at
    // 0xff00000000000000 with 5-level paging (LA57, e.g. QEMU): accept both.
    if (*a < 0xff00000000000000ull) bad_source(spec, "the address is not a kernel address");
    s.type = KTRACK_OBJ_SRC_EXPLICIT;
    s.addr = *a;
    return s;
  }
  // "r:SYM FETCH", "p:SYM FETCH", "SYM%return FETCH", "SYM FETCH".
  size_t sp = t.find_first_of(" \t");
  if (sp == std::string_view::npos) bad_source(spec, "it names no value to fetch");
  std::string_view where = t.substr(0, sp), fetch = trim(t.substr(sp));
  bool ret = false;
  if (where.starts_with("r:") || where.starts_with("p:")) {
    ret = where[0] == 'r';
    where.remove_prefix(2);
    if (size_t slash = where.find('/'); slash != std::string_view::npos) where.remove_prefix(slash + 1);
  }
  if (where.ends_with("%return")) {
    ret = true;
    where.remove_suffix(7);
  }
  if (!valid_symbol(where)) bad_source(spec, fmt::format("'{}' is not a function name", where));
  s.symbol = std::string(where);
  // Optional "+OFF(...)" around the value.
  if (fetch.starts_with("+")) {
    size_t open = fetch.find('(');
    if (open == std::string_view::npos || !fetch.ends_with(")"))
      bad_source(spec, "a dereference is written +OFF($retval) or +OFF($argN)");
    auto off = parse_u64(fetch.substr(1, open - 1));
    if (!off || *off >= KTRACK_OBJ_MAX_OFFSET || *off % 8)
      bad_source(spec, fmt::format("the offset must be a multiple of 8 below {}", KTRACK_OBJ_MAX_OFFSET));
    s.deref = true;
    s.deref_offset = static_cast<uint32_t>(*off);
    fetch = fetch.substr(open + 1, fetch.size() - open - 2);
  }
  if (fetch == "$retval") {
    if (!ret) bad_source(spec, "$retval needs a return probe ('r:FUNC')");
    s.type = KTRACK_OBJ_SRC_RETVAL;
  } else if (fetch.starts_with("$arg")) {
    if (ret) bad_source(spec, "a return probe fetches $retval, not an argument");
    auto n = parse_u64(fetch.substr(4));
    if (!n || *n < 1 || *n > KTRACK_OBJ_MAX_ARGS)
      bad_source(spec, fmt::format("arguments are $arg1..$arg{}", KTRACK_OBJ_MAX_ARGS));
    s.type = KTRACK_OBJ_SRC_ARG;
    s.arg = static_cast<uint32_t>(*n - 1);
  } else {
    bad_source(spec, fmt::format("'{}' is not $retval or $argN", fetch));
  }
  return s;
}

bool parse_obj_type(std::string_view name, uint16_t &size, bool &is_signed) {
  if (name == "ptr") {
    size = 8;
    is_signed = false;
    return true;
  }
  if (name.size() < 2 || (name[0] != 'u' && name[0] != 's' && name[0] != 'x')) return false;
  auto bits = parse_u64(name.substr(1));
  if (!bits || (*bits != 8 && *bits != 16 && *bits != 32 && *bits != 64)) return false;
  size = static_cast<uint16_t>(*bits / 8);
  is_signed = name[0] == 's';
  return true;
}

ObjWatch parse_obj_watch(std::string_view spec, const BtfFields *btf) {
  ObjWatch w;
  std::string_view t = trim(spec);
  std::string_view type;
  if (size_t colon = t.rfind(':'); colon != std::string_view::npos) {
    type = t.substr(colon + 1);
    t = t.substr(0, colon);
  }
  if (!type.empty() && !parse_obj_type(type, w.size, w.is_signed))
    throw UsageError(fmt::format(
        "invalid watch '{}': unknown type '{}'; use u8/u16/u32/u64, s8..s64, x8..x64 or ptr", spec, type));
  w.label = std::string(t);
  if (t.starts_with("+")) {
    auto off = parse_u64(t.substr(1));
    if (!off || *off >= KTRACK_OBJ_MAX_OFFSET)
      throw UsageError(fmt::format("invalid watch '{}': the offset must be a number below {}", spec,
                                   KTRACK_OBJ_MAX_OFFSET));
    if (type.empty())
      throw UsageError(fmt::format("invalid watch '{}': give a type, e.g. '{}:u32'", spec, t));
    w.offset = static_cast<uint32_t>(*off);
  } else {
    size_t arrow = t.find("->");
    if (arrow == std::string_view::npos || arrow == 0 || arrow + 2 >= t.size())
      throw UsageError(
          fmt::format("invalid watch '{}': use STRUCT->FIELD[:TYPE] (with BTF) or +OFFSET:TYPE", spec));
    std::string strct(t.substr(0, arrow)), path(t.substr(arrow + 2));
    if (strct.starts_with("struct ")) strct = strct.substr(7);
    if (!btf)
      throw UsageError(fmt::format(
          "cannot resolve watch '{}' without kernel BTF (/sys/kernel/btf/vmlinux); use +OFFSET:TYPE", spec));
    uint16_t fsize = 0;
    bool fsigned = false;
    btf->resolve(strct, path, w.offset, fsize, fsigned);
    if (type.empty()) {
      if (fsize != 1 && fsize != 2 && fsize != 4 && fsize != 8)
        throw UsageError(fmt::format(
            "watch '{}': the field is {} bytes; give a type (':u32') to read part of it", spec, fsize));
      w.size = fsize;
      w.is_signed = fsigned;
    }
    w.struct_name = strct;
    if (w.offset >= KTRACK_OBJ_MAX_OFFSET)
      throw UsageError(
          fmt::format("watch '{}': offset {} is beyond the limit {}", spec, w.offset, KTRACK_OBJ_MAX_OFFSET));
  }
  w.type = type.empty() ? fmt::format("{}{}", w.is_signed ? 's' : 'u', w.size * 8) : std::string(type);
  return w;
}

void parse_obj_destructor(std::string_view spec, ObjConfig &cfg) {
  std::string_view t = trim(spec), arg;
  if (size_t colon = t.find(':'); colon != std::string_view::npos) {
    arg = t.substr(colon + 1);
    t = t.substr(0, colon);
  }
  if (!valid_symbol(t))
    throw UsageError(
        fmt::format("invalid destructor '{}': use FUNC or FUNC:argN (N = 1..{})", spec, KTRACK_OBJ_MAX_ARGS));
  uint64_t n = 1;
  if (!arg.empty()) {
    if (arg.starts_with("arg")) arg.remove_prefix(3);
    auto v = parse_u64(arg);
    if (!v || *v < 1 || *v > KTRACK_OBJ_MAX_ARGS)
      throw UsageError(
          fmt::format("invalid destructor '{}': the argument must be 1..{}", spec, KTRACK_OBJ_MAX_ARGS));
    n = *v;
  }
  cfg.destructor = std::string(t);
  cfg.destructor_arg = static_cast<uint32_t>(n - 1);
}

void ObjConfig::validate() const {
  if (max_objects < 1 || max_objects > KTRACK_OBJ_MAX_OBJECTS)
    throw UsageError(fmt::format("--max-objects must be 1..{}", KTRACK_OBJ_MAX_OBJECTS));
  if (nr_args < 1 || nr_args > KTRACK_OBJ_MAX_ARGS)
    throw UsageError(fmt::format("--args must be 1..{}", KTRACK_OBJ_MAX_ARGS));
  if (watches.size() > KTRACK_OBJ_MAX_WATCH)
    throw UsageError(fmt::format("at most {} --watch values per object", KTRACK_OBJ_MAX_WATCH));
  if (func_addrs.size() > KTRACK_OBJ_MAX_FUNC_ADDRS)
    throw UsageError(fmt::format("{} functions selected; the limit is {}: narrow --functions",
                                 func_addrs.size(), KTRACK_OBJ_MAX_FUNC_ADDRS));
  if (trim(functions).empty()) throw UsageError("--functions needs at least one function or glob");
  if (func_addrs.empty() && functions.size() > KTRACK_OBJ_FUNCS_MAX)
    throw UsageError(fmt::format("--functions is {} bytes; the limit is {}: use globs", functions.size(),
                                 KTRACK_OBJ_FUNCS_MAX));
  size_t probes = 0;
  for (auto &s : sources) probes += s.type != KTRACK_OBJ_SRC_EXPLICIT;
  if (probes > KTRACK_OBJ_MAX_SOURCES)
    throw UsageError(fmt::format("at most {} probe sources (--from)", KTRACK_OBJ_MAX_SOURCES));
}

ktrack_obj_config ObjConfig::to_uapi() const {
  ktrack_obj_config c;
  std::memset(&c, 0, sizeof(c));
  c.size = sizeof(c);
  c.flags = flags;
  c.max_objects = max_objects;
  c.nr_args = nr_args;
  c.max_hits = max_hits;
  c.max_age_ns = max_age_ns;
  c.nr_watch = static_cast<uint32_t>(watches.size());
  c.functions_ptr = reinterpret_cast<uintptr_t>(functions.data());
  c.functions_len = static_cast<uint32_t>(functions.size());
  if (!func_addrs.empty()) {
    c.flags |= KTRACK_OBJF_FUNC_ADDRS;
    c.func_size = sizeof(ktrack_obj_func);
    c.functions_ptr = reinterpret_cast<uintptr_t>(func_addrs.data());
    c.functions_len = static_cast<uint32_t>(func_addrs.size());
  }
  std::snprintf(c.destructor, sizeof(c.destructor), "%s", destructor.c_str());
  c.destructor_arg = destructor.empty() ? 0 : destructor_arg;
  c.derive_offset = (flags & KTRACK_OBJF_DERIVE) ? derive_offset : 0;
  for (size_t i = 0; i < watches.size() && i < KTRACK_OBJ_MAX_WATCH; i++) {
    c.watch[i].offset = watches[i].offset;
    c.watch[i].size = watches[i].size;
    c.watch[i].flags = watches[i].is_signed ? KTRACK_OBJ_WATCH_SIGNED : 0;
  }
  return c;
}

std::string explain_obj_errno(std::string_view what, int err) {
  const char *advice = nullptr;
  switch (err) {
    case EINVAL:
      advice =
          "a value is out of range, a function/glob matches no traceable function "
          "(see /sys/kernel/tracing/available_filter_functions), or an address of the function set is "
          "not a traceable function (try --no-btf)";
      break;
    case ENOENT:
      advice = "no such function in the running kernel (or the object is not tracked)";
      break;
    case E2BIG:
      advice =
          "a size or count is above the kernel's limit (see include/uapi/ktrack.h), or --max-objects is "
          "above "
          "ktrack.ko's max_tracked_objects (/sys/module/ktrack/parameters/max_tracked_objects)";
      break;
    case EBUSY:
      advice = "the object tracker is enabled: disable it first";
      break;
    case ENODATA:
      advice = "the object tracker is not configured in this session";
      break;
    case EEXIST:
      advice = "the object is already tracked";
      break;
    case ESTALE:
      advice =
          "a module with hooked functions was unloaded, and the object tracker let go of them; re-run "
          "objtrace (with the module loaded) to hook them again";
      break;
    case ENOSPC:
      advice = "the tracked-object table is full: raise --max-objects";
      break;
    case EFAULT:
      advice = "the address cannot be read";
      break;
    case ENOTTY:
      advice = "this ktrack.ko has no object tracker: load a matching module";
      break;
    case EPERM:
    case EACCES:
      // the tracker hooks kernel functions and reads objects: what
      // lockdown=confidentiality refuses (LOCKDOWN_KPROBES)
      if (err == EPERM && locked_down_confidentiality()) return lockdown_refusal(what, "track objects");
      advice = "run as root (CAP_PERFMON or CAP_SYS_ADMIN)";
      break;
    default:
      break;
  }
  if (advice) return fmt::format("cannot {}: {} ({})", what, advice, std::strerror(err));
  return fmt::format("cannot {}: {}", what, std::strerror(err));
}

namespace {

void obj_ioctl(int fd, unsigned long cmd, void *arg, std::string_view what) {
  if (::ioctl(fd, cmd, arg) != 0) throw Error(explain_obj_errno(what, errno));
}

}  // namespace

void apply_obj_config(int fd, const ObjConfig &cfg, bool with_addresses) {
  cfg.validate();
  ktrack_obj_config c = cfg.to_uapi();
  obj_ioctl(fd, KTRACK_IOC_OBJ_CONFIG, &c,
            fmt::format("configure the object tracker (functions '{}')", cfg.functions));
  for (auto &s : cfg.sources) {
    if (s.type == KTRACK_OBJ_SRC_EXPLICIT) continue;
    ktrack_obj_source d{};
    d.size = sizeof(d);
    d.type = s.type;
    d.arg = s.type == KTRACK_OBJ_SRC_ARG ? s.arg : 0;
    d.flags = s.deref ? KTRACK_OBJ_SRCF_DEREF : 0;
    d.deref_offset = s.deref ? s.deref_offset : 0;
    std::snprintf(d.symbol, sizeof(d.symbol), "%s", s.symbol.c_str());
    obj_ioctl(fd, KTRACK_IOC_OBJ_ADD_SOURCE, &d, fmt::format("add object source '{}'", s.text));
  }
  if (with_addresses) obj_track_addresses(fd, cfg);
}

void obj_track_addresses(int fd, const ObjConfig &cfg) {
  for (auto &s : cfg.sources) {
    if (s.type != KTRACK_OBJ_SRC_EXPLICIT) continue;
    ktrack_obj_addr a{};
    a.size = sizeof(a);
    a.addr = s.addr;
    obj_ioctl(fd, KTRACK_IOC_OBJ_TRACK, &a, fmt::format("track address {:#x}", s.addr));
  }
}

void obj_enable(int fd) { obj_ioctl(fd, KTRACK_IOC_OBJ_ENABLE, nullptr, "enable the object tracker"); }

void obj_disable(int fd) { obj_ioctl(fd, KTRACK_IOC_OBJ_DISABLE, nullptr, "disable the object tracker"); }

ktrack_obj_stats obj_stats(int fd) {
  ktrack_obj_stats st{};
  st.size = sizeof(st);
  obj_ioctl(fd, KTRACK_IOC_OBJ_GET_STATS, &st, "read the object tracker's stats");
  return st;
}

std::string obj_source_name(uint32_t src) {
  switch (src) {
    case KTRACK_OBJ_SRC_EXPLICIT:
      return "explicit";
    case KTRACK_OBJ_SRC_RETVAL:
      return "retval";
    case KTRACK_OBJ_SRC_ARG:
      return "arg";
    case KTRACK_OBJ_SRC_API:
      return "api";
    case KTRACK_OBJ_SRC_DERIVED:
      return "derived";
    default:
      return fmt::format("source{}", src);
  }
}

std::string obj_end_name(uint32_t reason) {
  switch (reason) {
    case KTRACK_OBJ_END_FREE:
      return "free";
    case KTRACK_OBJ_END_DESTRUCTOR:
      return "destructor";
    case KTRACK_OBJ_END_HITS:
      return "hit limit";
    case KTRACK_OBJ_END_AGE:
      return "time limit";
    case KTRACK_OBJ_END_EXPLICIT:
      return "explicit untrack";
    case KTRACK_OBJ_END_API:
      return "driver untrack";
    case KTRACK_OBJ_END_REUSE:
      return "address reused";
    default:
      return fmt::format("reason{}", reason);
  }
}

std::string format_obj_stats(const ktrack_obj_stats &st) {
  static const char *const drop_names[KTRACK_OBJ_DROP_MAX] = {
      "table full (raise --max-objects)", "already tracked", "bad pointer (NULL, ERR_PTR, unreadable)",
      "table busy (NMI or nested in the hook)"};
  std::string out = fmt::format(
      "objects: {} lives, {} tracked now (capacity {}), {} functions hooked, {} sources\n"
      "hits: {} seen, {} recorded, {} unchanged (changes-only), {} records lost, {} recursion skips\n",
      st.lives, st.nr_tracked, st.capacity, st.nr_functions, st.nr_sources, st.hits, st.hits_recorded,
      st.hits_unchanged, st.rec_lost, st.recursion);
  if (st.flags & KTRACK_OBJ_STATS_F_MODULE_GONE)
    out += fmt::format("module gone: {} hooked functions unhooked when their module was unloaded{}\n",
                       st.funcs_gone, st.enabled ? "" : " (tracker disabled)");
  for (uint32_t i = 0; i < KTRACK_OBJ_END_MAX; i++)
    if (st.ended[i]) out += fmt::format("ended: {} by {}\n", st.ended[i], obj_end_name(i));
  for (uint32_t i = 0; i < KTRACK_OBJ_DROP_MAX; i++)
    if (st.dropped[i])
      out += fmt::format("not tracked: {} ({})\n", st.dropped[i],
                         drop_names[i] ? drop_names[i] : fmt::format("reason {}", i).c_str());
  return out;
}

std::string serialize_watch_labels(const std::vector<ObjWatch> &w) {
  std::string out;
  for (auto &x : w) {
    if (!out.empty()) out += ';';
    out += fmt::format("{}:{}", x.label, x.type);
  }
  return out;
}

std::vector<ObjWatchLabel> parse_watch_labels(std::string_view text) {
  std::vector<ObjWatchLabel> out;
  while (!text.empty()) {
    size_t semi = text.find(';');
    std::string_view one = text.substr(0, semi);
    text = semi == std::string_view::npos ? std::string_view{} : text.substr(semi + 1);
    ObjWatchLabel l;
    size_t colon = one.rfind(':');
    l.label = std::string(one.substr(0, colon));
    if (colon != std::string_view::npos) {
      std::string_view type = one.substr(colon + 1);
      if (!parse_obj_type(type, l.size, l.is_signed)) l.size = 8;
    }
    if (!l.label.empty()) out.push_back(std::move(l));
  }
  return out;
}

}  // namespace ktrack
