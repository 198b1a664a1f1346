// BTF resolution of probe arguments (see probes/btf_resolver.hpp).
#include "probes/btf_resolver.hpp"

#include <fmt/core.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string_view>

#ifdef KTRACK_HAVE_LIBBPF
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#endif

namespace ktrack {

bool BtfResolver::needed(const ProbeSpec &spec) {
  for (const auto &a : spec.args)
    if (a.all_args || !a.btf_expr.empty()) return true;
  return false;
}

void reject_btf_names(const ProbeSpec &spec, const std::string &why) {
  for (const auto &a : spec.args)
    if (a.all_args || !a.btf_expr.empty())
      throw SpecError(spec.text, a.pos,
                      fmt::format("BTF names need kernel BTF: {}; use $argN and +OFFS()", why));
}

#ifndef KTRACK_HAVE_LIBBPF

BtfResolver::BtfResolver(const std::string &path) : path_(path) {
  throw Error("ktrackctl was built without libbpf: BTF names are not available");
}
std::unique_ptr<TracepointProtos> TracepointProtos::open_system(std::string *why) {
  if (why) *why = "ktrackctl was built without libbpf";
  return nullptr;
}
TracepointProtos::~TracepointProtos() = default;
std::optional<std::vector<TracepointArg>> TracepointProtos::args(const std::string &, const std::string &) {
  return std::nullopt;
}
bool TracepointProtos::module_has_btf(const std::string &) const { return false; }
BtfResolver::~BtfResolver() = default;
std::unique_ptr<BtfResolver> BtfResolver::open_system() { return nullptr; }
void BtfResolver::resolve(ProbeSpec &spec) { reject_btf_names(spec, "ktrackctl was built without libbpf"); }

#else

BtfResolver::BtfResolver(const std::string &path) : path_(path) {
  std::string why;
  btf_ = KernelBtf::open(&why, path);
  if (!btf_) throw Error(fmt::format("cannot read BTF from {}: {}", path, why));
  vmlinux_ = btf_->vmlinux();
}

BtfResolver::~BtfResolver() = default;

std::unique_ptr<BtfResolver> BtfResolver::open_system() {
  std::error_code ec;
  if (!std::filesystem::exists("/sys/kernel/btf/vmlinux", ec)) return nullptr;
  return std::make_unique<BtfResolver>("/sys/kernel/btf/vmlinux");
}

namespace {

struct Ctx {
  const ProbeSpec &spec;
  const struct btf *btf;
  size_t pos;
  [[noreturn]] void err(const std::string &m) const { throw SpecError(spec.text, pos, m); }
};

// Skips typedefs and qualifiers.
uint32_t strip(const struct btf *b, uint32_t id) {
  int r = btf__resolve_type(b, id);
  return r < 0 ? id : (uint32_t)r;
}

std::string type_name(const struct btf *b, uint32_t id) {
  const struct btf_type *t = btf__type_by_id(b, id);
  if (!t) return "?";
  const char *n = btf__name_by_offset(b, t->name_off);
  return n && *n ? n : "(anonymous)";
}

bool is_char(const struct btf *b, uint32_t id) {
  const struct btf_type *t = btf__type_by_id(b, strip(b, id));
  return t && btf_is_int(t) && t->size == 1;
}

// Member 'name' of struct/union 'sid' (anonymous members searched too).
bool find_member(const struct btf *b, uint32_t sid, const std::string &name, uint32_t &bit_off,
                 uint32_t &type, bool &bitfield) {
  const struct btf_type *t = btf__type_by_id(b, sid);
  if (!t || !btf_is_composite(t)) return false;
  const struct btf_member *m = btf_members(t);
  for (uint16_t i = 0; i < btf_vlen(t); i++, m++) {
    const char *mn = btf__name_by_offset(b, m->name_off);
    uint32_t off = btf_member_bit_offset(t, i);
    if (mn && name == mn) {
      bit_off = off;
      type = m->type;
      bitfield = btf_member_bitfield_size(t, i) != 0;
      return true;
    }
    if (!mn || !*mn) {
      uint32_t sub_off, sub_type;
      if (find_member(b, strip(b, m->type), name, sub_off, sub_type, bitfield)) {
        bit_off = off + sub_off;
        type = sub_type;
        return true;
      }
    }
  }
  return false;
}

// Gives 'a' the type of BTF type 'id' unless the user typed it; 'in_memory'
// says whether the value is read from memory (deref) or is the register.
void apply_type(const Ctx &c, FetchArg &a, uint32_t id, bool in_memory) {
  const struct btf *b = c.btf;
  uint32_t rid = strip(b, id);
  const struct btf_type *t = btf__type_by_id(b, rid);
  if (!t) c.err("BTF type not found");
  if (btf_is_ptr(t) && is_char(b, t->type)) {
    if (a.type_given && a.type != KTRACK_FETCH_T_STRING && a.type != KTRACK_FETCH_T_USTRING) return;
    // the string is where the pointer points
    if (in_memory) {
      if (a.deref.size() >= KTRACK_FETCH_MAX_DEREF) c.err("the expression dereferences too deep (max 4)");
      a.deref.push_back(0);
    }
    if (!a.type_given) {
      a.type = KTRACK_FETCH_T_STRING;
      a.size = 1;
    }
    return;
  }
  if (btf_is_array(t)) {
    const struct btf_array *arr = btf_array(t);
    if (!in_memory) c.err("an array argument cannot be read");
    if (is_char(b, arr->type)) {
      if (!a.type_given) {
        a.type = KTRACK_FETCH_T_STRING;
        a.size = 1;
      }
      return;
    }
    const struct btf_type *et = btf__type_by_id(b, strip(b, arr->type));
    if (!a.type_given && et && (btf_is_int(et) || btf_is_enum(et) || btf_is_ptr(et))) {
      a.size = btf_is_ptr(et) ? 8 : (uint8_t)et->size;
      a.type = btf_is_int(et) && (btf_int_encoding(et) & BTF_INT_SIGNED) ? KTRACK_FETCH_T_S
               : btf_is_ptr(et)                                          ? KTRACK_FETCH_T_X
                                                                         : KTRACK_FETCH_T_U;
      a.count = (uint16_t)std::min<uint32_t>(arr->nelems ? arr->nelems : 1, KTRACK_FETCH_MAX_ARRAY);
    }
    return;
  }
  if (a.type_given && (a.type == KTRACK_FETCH_T_STRING || a.type == KTRACK_FETCH_T_USTRING))
    c.err(fmt::format("'{}' is {}, not a char pointer or array: :{} would show its bytes as text",
                      a.btf_expr.empty() ? a.name : a.btf_expr, type_name(b, rid),
                      a.type == KTRACK_FETCH_T_STRING ? "string" : "ustring"));
  if (a.type_given) return;
  if (btf_is_ptr(t)) {
    a.type = KTRACK_FETCH_T_X;
    a.size = 8;
  } else if (btf_is_int(t)) {
    uint32_t sz = t->size;
    if (sz != 1 && sz != 2 && sz != 4 && sz != 8)
      c.err(fmt::format("{} has an unsupported size", type_name(b, rid)));
    a.size = (uint8_t)sz;
    bool sign = btf_int_encoding(t) & BTF_INT_SIGNED;
    a.type = sign ? KTRACK_FETCH_T_S : KTRACK_FETCH_T_U;
    if (btf_int_encoding(t) & BTF_INT_BOOL) a.type = KTRACK_FETCH_T_U;
  } else if (btf_is_any_enum(t)) {
    a.size = (uint8_t)t->size;
    a.type = KTRACK_FETCH_T_S;
  } else if (btf_is_composite(t)) {
    c.err(fmt::format("'{}' is a struct {}: name one of its members with -> or .", a.btf_expr,
                      type_name(b, rid)));
  } else {
    a.type = KTRACK_FETCH_T_X;
    a.size = 8;
  }
}

// Finds a type by name and kind: libbpf's btf__find_by_name_kind() (a scan
// of every type) or an index of the names (TracepointProtos, which asks
// for every tracepoint).  -1 when there is none.
using FindType = std::function<int(const struct btf *, const std::string &, int kind)>;

int find_type(const struct btf *b, const std::string &name, int kind) {
  return btf__find_by_name_kind(b, name.c_str(), (uint32_t)kind);
}

// The names tracepoint_proto() looks up, and TracepointProtos indexes:
// functions first, then the typedef.
constexpr std::string_view kProtoFuncPrefixes[] = {"__bpf_trace_", "__probestub_"};
constexpr std::string_view kProtoTypedefPrefix = "btf_trace_";

// The prototype of tracepoint 'event' (its first parameter is 'void
// *__data'); null when 'b' does not describe it.  The argument names:
// btf_trace_<event> has none, but the functions that take the same
// arguments do: __bpf_trace_<event> (BPF's raw tracepoint glue, 6.1 and
// 6.12) and __probestub_<event> (6.12).
const struct btf_type *tracepoint_proto(const struct btf *b, const std::string &event,
                                        const FindType &find = find_type) {
  for (std::string_view prefix : kProtoFuncPrefixes) {
    int fid = find(b, std::string(prefix) + event, BTF_KIND_FUNC);
    if (fid < 0) continue;
    const struct btf_type *f = btf__type_by_id(b, (uint32_t)fid);
    const struct btf_type *t = f ? btf__type_by_id(b, f->type) : nullptr;
    if (t && btf_is_func_proto(t) && btf_vlen(t) >= 1) return t;
  }
  int id = find(b, std::string(kProtoTypedefPrefix) + event, BTF_KIND_TYPEDEF);
  if (id < 0) return nullptr;
  const struct btf_type *t = btf__type_by_id(b, strip(b, (uint32_t)id));
  if (t && btf_is_ptr(t)) t = btf__type_by_id(b, strip(b, t->type));
  return t && btf_is_func_proto(t) && btf_vlen(t) >= 1 ? t : nullptr;
}

// The function prototype to resolve names against.
struct Proto {
  const struct btf_type *proto = nullptr;
  int first = 0;  // tracepoints: skip the leading 'void *__data'
};

Proto find_proto(const ProbeSpec &spec, const struct btf *b, size_t pos) {
  Proto p;
  if (spec.kind == ProbeKind::kTracepoint) {
    p.proto = tracepoint_proto(b, spec.event);
    if (!p.proto)
      throw SpecError(
          spec.text, pos,
          fmt::format("no BTF for tracepoint {} (a module not loaded yet, or without BTF: use $argN)",
                      spec.event));
    p.first = 1;  // 'void *__data'
    return p;
  }
  std::string fn = spec.symbol;
  if (spec.kind == ProbeKind::kFuncs) {
    if ((spec.funcs.size() != 1 && !spec.funcs.empty()) || spec.kernel_glob)
      throw SpecError(spec.text, pos, "BTF names need a single function; use $argN over several functions");
    fn = spec.funcs.empty() ? spec.patterns[0] : spec.funcs[0];
  }
  if (fn.empty()) throw SpecError(spec.text, pos, "BTF names need a function symbol, not an address");
  int id = btf__find_by_name_kind(b, fn.c_str(), BTF_KIND_FUNC);
  if (id < 0)
    throw SpecError(spec.text, pos,
                    fmt::format("no BTF for function {} (is it in a module without BTF?)", fn));
  const struct btf_type *f = btf__type_by_id(b, (uint32_t)id);
  p.proto = btf__type_by_id(b, f->type);
  return p;
}

// A lone $argN (not NAME=$argN, not inside +OFFS()): what ftrace 6.12
// checks against the prototype.
bool is_plain_arg(const ProbeSpec &spec, const FetchArg &a) {
  return a.src == KTRACK_FETCH_SRC_ARG && a.deref.empty() && a.btf_expr.empty() && !a.all_args &&
         spec.text.compare(a.pos, 4, "$arg") == 0;
}

void resolve_expr(const Ctx &c, const Proto &p, FetchArg &a) {
  const struct btf *b = c.btf;
  const std::string &e = a.btf_expr;
  // root: a parameter name or $argN
  size_t k = 0;
  while (k < e.size() && (std::isalnum((unsigned char)e[k]) || e[k] == '_' || e[k] == '$')) k++;
  std::string root = e.substr(0, k);
  const struct btf_param *params = btf_params(p.proto);
  int nparams = btf_vlen(p.proto) - p.first;
  int idx = -1;
  // errors about a member put the caret under it, as ftrace does
  size_t expr_at = c.spec.text.find(e, c.pos);
  auto member_err = [&](size_t st, const std::string &m) {
    Ctx mc{c.spec, b, expr_at == std::string::npos ? c.pos : expr_at + st};
    mc.err(m);
  };
  uint32_t type = 0;
  if (root == "$retval") {  // $retval->member: the return type
    if (!p.proto || c.spec.kind == ProbeKind::kTracepoint) c.err("$retval has no BTF type here");
    if (p.proto->type == 0) c.err("the function returns void: $retval has no value to record");
    a.src = KTRACK_FETCH_SRC_RETVAL;
    a.param = 0;
    type = p.proto->type;
  } else if (root.rfind("$arg", 0) == 0) {
    idx = std::atoi(root.c_str() + 4) - 1;
  } else {
    for (int i = 0; i < nparams; i++) {
      const char *n = btf__name_by_offset(b, params[i + p.first].name_off);
      if (n && root == n) idx = i;
    }
    if (idx < 0) {
      std::string names;
      for (int i = 0; i < nparams; i++) {
        const char *n = btf__name_by_offset(b, params[i + p.first].name_off);
        names += fmt::format("{}{}", names.empty() ? "" : ", ", n && *n ? n : fmt::format("$arg{}", i + 1));
      }
      c.err(fmt::format("no argument named '{}' (arguments: {})", root, names));
    }
  }
  if (root != "$retval") {
    if (idx < 0 || idx >= nparams || idx >= KTRACK_FETCH_MAX_ARG)
      c.err(fmt::format("argument {} is not passed in a register (only the first {})", root,
                        KTRACK_FETCH_MAX_ARG));
    a.src = KTRACK_FETCH_SRC_ARG;
    a.param = idx + 1;
    type = params[idx + p.first].type;
  }
  a.deref.clear();
  bool in_memory = false;
  while (k < e.size()) {
    bool arrow = e.compare(k, 2, "->") == 0;
    k += arrow ? 2 : 1;
    size_t st = k;
    while (k < e.size() && (std::isalnum((unsigned char)e[k]) || e[k] == '_')) k++;
    std::string member = e.substr(st, k - st);
    uint32_t rid = strip(b, type);
    const struct btf_type *t = btf__type_by_id(b, rid);
    uint32_t sid;
    if (arrow) {
      if (!t || !btf_is_ptr(t))
        member_err(st, fmt::format("'{}' is not a pointer to a struct or union: use '.' for '{}'",
                                   e.substr(0, st - 2), member));
      sid = strip(b, t->type);
    } else {
      if (!in_memory)
        c.err(fmt::format("'{}' is a pointer or a register value: use '->'", e.substr(0, st - 1)));
      sid = rid;
    }
    uint32_t bit_off = 0, mtype = 0;
    bool bitfield = false;
    if (!find_member(b, sid, member, bit_off, mtype, bitfield))
      member_err(st, fmt::format("{} has no member '{}'", type_name(b, sid), member));
    if (bitfield || bit_off % 8)
      c.err(fmt::format("'{}' is a bitfield: bitfields are not supported", member));
    int32_t off = (int32_t)(bit_off / 8);
    if (arrow) {
      if (a.deref.size() >= KTRACK_FETCH_MAX_DEREF) c.err("the expression dereferences too deep (max 4)");
      a.deref.push_back(off);
    } else {
      a.deref.back() += off;
    }
    in_memory = true;
    type = mtype;
  }
  apply_type(c, a, type, in_memory);
}

}  // namespace

void BtfResolver::resolve(ProbeSpec &spec) {
  const struct btf *b = vmlinux_;
  if (!spec.module.empty())
    if (const struct btf *m = btf_->module(spec.module)) b = m;
  {
    std::vector<FetchArg> out;
    bool need_proto = needed(spec);
    bool typed_retval = false;  // also: $retval on a function that returns void is refused
    bool plain_args = false;    // and $argN past the prototype's arguments, or :string on a non-string
    for (const auto &a : spec.args) {
      if (a.src == KTRACK_FETCH_SRC_RETVAL && a.deref.empty()) typed_retval = true;
      if (is_plain_arg(spec, a)) plain_args = true;
    }
    if (!need_proto && !typed_retval && !plain_args) return;
    Proto p;
    try {
      p = find_proto(spec, b, spec.args.empty() ? 0 : spec.args[0].pos);
    } catch (const SpecError &) {
      if (need_proto) throw;
    }
    for (auto &a : spec.args) {
      Ctx c{spec, b, a.pos};
      if (a.all_args) {
        const struct btf_param *params = btf_params(p.proto);
        int n = btf_vlen(p.proto) - p.first;
        for (int i = 0; i < n && i < KTRACK_FETCH_MAX_ARG; i++) {
          FetchArg x;
          x.pos = a.pos;
          const char *pn = btf__name_by_offset(b, params[i + p.first].name_off);
          x.name = pn && *pn ? pn : fmt::format("arg{}", i + 1);
          x.src = KTRACK_FETCH_SRC_ARG;
          x.param = i + 1;
          const struct btf_type *t = btf__type_by_id(b, strip(b, params[i + p.first].type));
          if (t && btf_is_composite(t)) {  // struct by value: show the first word
            x.type = KTRACK_FETCH_T_X;
            x.size = 8;
          } else {
            apply_type(c, x, params[i + p.first].type, false);
          }
          out.push_back(x);
        }
        continue;
      }
      if (!a.btf_expr.empty()) {
        resolve_expr(c, p, a);
        a.btf_expr.clear();
      } else if (is_plain_arg(spec, a) && p.proto) {
        // ftrace reads a lone $argN through BTF (as the parameter it names)
        int n = btf_vlen(p.proto) - p.first;
        if (a.param > n)
          c.err(fmt::format("{} has {} argument{}: there is no $arg{}",
                            spec.kind == ProbeKind::kTracepoint ? "the tracepoint" : "the function", n,
                            n == 1 ? "" : "s", a.param));
        if (a.type_given && (a.type == KTRACK_FETCH_T_STRING || a.type == KTRACK_FETCH_T_USTRING))
          apply_type(c, a, btf_params(p.proto)[a.param - 1 + p.first].type, false);
      } else if (a.src == KTRACK_FETCH_SRC_RETVAL && a.deref.empty() && p.proto &&
                 spec.kind != ProbeKind::kTracepoint) {
        uint32_t rt = p.proto->type;
        if (rt == 0)
          c.err(fmt::format("{} returns void: $retval has no value to record (use $duration)",
                            spec.kind != ProbeKind::kFuncs ? spec.symbol
                            : spec.funcs.empty()           ? spec.patterns[0]
                                                           : spec.funcs[0]));
        if (a.type_given) {
          out.push_back(a);
          continue;
        }
        const struct btf_type *t = rt ? btf__type_by_id(b, strip(b, rt)) : nullptr;
        if (t && (btf_is_int(t) || btf_is_any_enum(t) || btf_is_ptr(t))) apply_type(c, a, rt, false);
      }
      out.push_back(a);
    }
    for (size_t i = 0; i < out.size(); i++)
      for (size_t j = 0; j < i; j++)
        if (out[i].name == out[j].name)
          throw SpecError(spec.text, out[i].pos, fmt::format("duplicated argument name '{}'", out[i].name));
    if (out.size() > KTRACK_PROBE_MAX_FETCH)
      throw SpecError(spec.text, spec.args.back().pos, "too many arguments after $$args expansion");
    spec.args = std::move(out);
    compile_filter(spec);
  }
}

// ---- tracepoint prototypes as C ----------------------------------------------

namespace {

void append_printf(void *ctx, const char *fmt, va_list args) {
  va_list copy;
  va_copy(copy, args);
  int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  if (n <= 0) return;
  auto *out = static_cast<std::string *>(ctx);
  size_t at = out->size();
  out->resize(at + (size_t)n + 1);
  std::vsnprintf(out->data() + at, (size_t)n + 1, fmt, args);
  out->resize(at + (size_t)n);
}

}  // namespace

std::unique_ptr<TracepointProtos> TracepointProtos::open_system(std::string *why) {
  auto btf = KernelBtf::open(why);
  if (!btf) return nullptr;
  return std::unique_ptr<TracepointProtos>(new TracepointProtos(std::move(btf)));
}

TracepointProtos::TracepointProtos(std::unique_ptr<KernelBtf> btf) : btf_(std::move(btf)) {}

TracepointProtos::~TracepointProtos() {
  for (auto &[b, d] : dumps_)
    if (d) btf_dump__free(d);
}

bool TracepointProtos::module_has_btf(const std::string &module) const { return btf_->module(module); }

std::optional<std::vector<TracepointArg>> TracepointProtos::args(const std::string &module,
                                                                 const std::string &event) {
  const struct btf *b = module.empty() ? nullptr : btf_->module(module);
  if (!b) b = btf_->vmlinux();
  // The names of the functions and typedefs tracepoint_proto() looks for,
  // indexed once per BTF (a module's: its own types; vmlinux's after them).
  auto index = [this](const struct btf *bt) -> const std::unordered_map<std::string, uint32_t> & {
    auto [at, fresh] = names_.try_emplace(bt);
    if (fresh) {
      const struct btf *base = btf__base_btf(bt);
      for (uint32_t id = base ? btf__type_cnt(base) : 1; id < btf__type_cnt(bt); id++) {
        const struct btf_type *t = btf__type_by_id(bt, id);
        if (!t || (!btf_is_func(t) && !btf_is_typedef(t))) continue;
        const char *n = btf__name_by_offset(bt, t->name_off);
        if (!n) continue;
        std::string_view name(n);
        bool wanted = name.starts_with(kProtoTypedefPrefix);
        for (std::string_view prefix : kProtoFuncPrefixes) wanted |= name.starts_with(prefix);
        if (wanted) at->second.emplace(n, id);
      }
    }
    return at->second;
  };
  FindType find = [&](const struct btf *bt, const std::string &name, int kind) {
    for (const struct btf *x = bt; x; x = btf__base_btf(x)) {
      const auto &names = index(x);
      auto it = names.find(name);
      if (it != names.end() && btf_kind(btf__type_by_id(x, it->second)) == kind) return (int)it->second;
    }
    return -1;
  };
  const struct btf_type *proto = tracepoint_proto(b, event, find);
  if (!proto) return std::nullopt;
  auto [it, inserted] = dumps_.try_emplace(b, nullptr);
  if (inserted) {
    it->second = btf_dump__new(b, append_printf, &text_, nullptr);
    if (libbpf_get_error(it->second)) it->second = nullptr;
  }
  struct btf_dump *d = it->second;
  auto decl = [&](uint32_t type, const char *name) {
    text_.clear();
    btf_dump_emit_type_decl_opts o{};
    o.sz = sizeof(o);
    o.field_name = name;
    if (!d || btf_dump__emit_type_decl(d, type, &o) < 0) return type_name(b, type);
    return text_;
  };
  std::vector<TracepointArg> out;
  const struct btf_param *params = btf_params(proto);
  for (int i = 1; i < btf_vlen(proto); i++) {  // [0] is 'void *__data'
    TracepointArg a;
    a.index = i;
    const char *n = btf__name_by_offset(b, params[i].name_off);
    a.name = n ? n : "";
    a.type = decl(params[i].type, "");
    a.decl = a.name.empty() ? a.type : decl(params[i].type, a.name.c_str());
    out.push_back(std::move(a));
  }
  return out;
}

#endif

}  // namespace ktrack
