// The object tracker's function set resolved in userspace (globs, module,
// BTF argument types, addresses).  See objtrace/objtrace_funcs.hpp.
#include "objtrace/objtrace_funcs.hpp"

#include "host/btf.hpp"
#include "host/kallsyms.hpp"
#include "host/sysfs.hpp"
#include "host/tracefs.hpp"
#include "util/glob.hpp"
#include "util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <unordered_map>

#include "util/error.hpp"

#ifdef KTRACK_HAVE_LIBBPF
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#endif

namespace ktrack {

std::vector<TraceableFunc> parse_filter_functions(std::string_view text) {
  std::vector<TraceableFunc> out;
  while (!text.empty()) {
    auto tok = split_ws(next_line(text));
    if (tok.empty()) continue;
    TraceableFunc f;
    size_t i = 0;
    if (tok.size() >= 2 && !tok[1].starts_with("[")) {
      // "ADDR name [mod]" (available_filter_functions_addrs).
      auto a = parse_hex(tok[0]);
      if (!a) continue;
      f.addr = *a;
      i = 1;
    }
    f.name = std::string(tok[i]);
    if (i + 1 < tok.size()) f.module = std::string(module_of(tok[i + 1]));
    out.push_back(std::move(f));
  }
  return out;
}

FuncGlob parse_func_glob(std::string_view spec) {
  FuncGlob g;
  size_t m = spec.find(":mod:");
  if (m == std::string_view::npos) {
    if (spec.find(':') != std::string_view::npos)
      throw UsageError(fmt::format("invalid function glob '{}': the only ':' form is GLOB:mod:MODULE", spec));
    g.glob = std::string(spec);
  } else {
    g.glob = m ? std::string(spec.substr(0, m)) : "*";
    g.module = std::string(spec.substr(m + 5));
    if (g.module.empty() || g.module.find_first_of(":/ ") != std::string::npos)
      throw UsageError(fmt::format("invalid function glob '{}': name a module after ':mod:'", spec));
  }
  if (g.glob.empty()) throw UsageError("an empty function glob");
  return g;
}

std::vector<FuncGlob> parse_func_globs(std::string_view specs, const std::string &module) {
  std::vector<FuncGlob> out;
  for (auto tok : split_ws(specs)) {
    FuncGlob g = parse_func_glob(tok);
    if (g.module.empty()) g.module = module;
    out.push_back(std::move(g));
  }
  if (out.empty()) out.push_back({"*", module});
  return out;
}

FuncSelection select_functions(std::span<const FuncGlob> globs, std::span<const TraceableFunc> traceable,
                               const KallsymsIndex &ksyms, const BtfFuncArgs *btf, const std::string &strct,
                               unsigned nr_args) {
  FuncSelection sel;
  const bool typed = btf && !strct.empty();
  if (typed) sel.strct = strct;
  const uint8_t all = static_cast<uint8_t>((1u << nr_args) - 1);
  // How often ftrace lists each (name, module): static functions may share a name.
  std::map<std::pair<std::string, std::string>, size_t> listed;
  for (auto &f : traceable) listed[{f.name, f.module}]++;
  std::map<std::pair<std::string, std::string>, bool> done;
  for (auto &f : traceable) {
    bool match = false;
    for (auto &g : globs)
      if ((g.module.empty() || g.module == f.module) && glob_match(g.glob, f.name)) {
        match = true;
        break;
      }
    if (!match) continue;
    sel.matched++;
    uint8_t mask = all;
    if (typed) {
      auto m = btf->arg_mask(f.name, f.module, strct, nr_args);
      if (!m) {
        sel.no_proto++;
        continue;
      }
      if (!*m) {
        sel.untyped++;
        continue;
      }
      mask = *m;
    }
    if (f.addr) {
      sel.funcs.push_back({f.addr, mask, {}});
      continue;
    }
    // Without the _addrs file: kallsyms, all copies of a duplicated name at once.
    auto key = std::make_pair(f.name, f.module);
    if (done.count(key)) continue;
    done[key] = true;
    const auto *addrs = ksyms.find_text(f.name, f.module);
    size_t n = listed[key];
    if (!addrs || addrs->size() != n) {
      sel.no_addr += n;
      continue;
    }
    for (uint64_t a : *addrs) sel.funcs.push_back({a, mask, {}});
  }
  std::sort(sel.funcs.begin(), sel.funcs.end(),
            [](const ktrack_obj_func &a, const ktrack_obj_func &b) { return a.addr < b.addr; });
  // The same function twice (an alias name): keep the first.
  sel.funcs.erase(
      std::unique(sel.funcs.begin(), sel.funcs.end(),
                  [](const ktrack_obj_func &a, const ktrack_obj_func &b) { return b.addr - a.addr < 8; }),
      sel.funcs.end());
  limit_masks(sel.funcs);
  return sel;
}

void limit_masks(std::vector<ktrack_obj_func> &funcs) {
  std::map<uint8_t, size_t> count;
  for (auto &f : funcs) count[f.arg_mask]++;
  if (count.size() <= KTRACK_OBJ_MAX_MASKS) return;
  std::vector<std::pair<size_t, uint8_t>> by_use;
  for (auto [m, n] : count) by_use.push_back({n, m});
  std::sort(by_use.rbegin(), by_use.rend());
  // Keep the most used MAX-1 masks; the rest become their union.
  uint8_t merged = 0;
  std::map<uint8_t, bool> keep;
  for (size_t i = 0; i < by_use.size(); i++) {
    if (i + 1 < KTRACK_OBJ_MAX_MASKS)
      keep[by_use[i].second] = true;
    else
      merged |= by_use[i].second;
  }
  for (auto &f : funcs)
    if (!keep.count(f.arg_mask)) f.arg_mask = merged;
}

std::string describe_selection(const FuncSelection &sel, std::string_view globs) {
  std::string out;
  if (sel.strct.empty())
    out = fmt::format("hooking {} functions (all {} matching '{}')", sel.funcs.size(), sel.matched, globs);
  else
    out = fmt::format("hooking {} functions that take a struct {} * (of {} matching '{}')", sel.funcs.size(),
                      sel.strct, sel.matched, globs);
  std::vector<std::string> why;
  if (sel.untyped) why.push_back(fmt::format("{} take no struct {} *", sel.untyped, sel.strct));
  if (sel.no_proto) why.push_back(fmt::format("{} have no BTF prototype", sel.no_proto));
  if (sel.no_addr) why.push_back(fmt::format("{} have ambiguous addresses", sel.no_addr));
  for (size_t i = 0; i < why.size(); i++) out += (i ? ", " : "; skipped: ") + why[i];
  return out;
}

std::string tracked_struct(const ObjConfig &cfg, const BtfFuncArgs *btf) {
  for (auto &w : cfg.watches)
    if (!w.struct_name.empty()) return w.struct_name;
  if (!btf) return {};
  for (auto &s : cfg.sources) {
    if (s.deref || s.type == KTRACK_OBJ_SRC_EXPLICIT) continue;
    auto st = btf->pointee_struct(s.symbol, s.type == KTRACK_OBJ_SRC_RETVAL ? -1 : static_cast<int>(s.arg));
    if (st) return *st;
  }
  return {};
}

std::string resolve_obj_functions(ObjConfig &cfg, const std::string &module, bool use_btf,
                                  bool kernel_addrs) {
  auto globs = parse_func_globs(cfg.functions, module);
  bool any_module = false;
  for (auto &g : globs) any_module |= !g.module.empty();
  std::unique_ptr<BtfFuncArgs> btf;
  std::string why, strct;
  if (use_btf) {
    btf = load_btf_func_args(&why);
    strct = tracked_struct(cfg, btf.get());
  }
  if (!kernel_addrs && any_module)
    throw UsageError("this ktrack.ko cannot hook a module's functions by address: load the matching module");
  std::optional<std::string> list;
  bool with_addrs = false;
  if ((list = tracefs_read("available_filter_functions_addrs")))
    with_addrs = true;
  else
    list = tracefs_read("available_filter_functions");
  if (!kernel_addrs || (!any_module && (strct.empty() || !btf))) {
    // The kernel's glob path: say how much it hooks and why not fewer.
    std::string reason = !use_btf ? "--no-btf"
                         : !btf   ? why
                         : strct.empty()
                             ? "the objects' struct is unknown: watch STRUCT->FIELD or use a source "
                               "whose BTF type is a struct pointer"
                             : "this ktrack.ko takes no address-given function set";
    size_t n = 0;
    if (list)
      for (auto &f : parse_filter_functions(*list))
        for (auto &g : globs)
          if (glob_match(g.glob, f.name)) {
            n++;
            break;
          }
    return fmt::format(
        "hooking {} functions matching '{}', checking the first {} arguments (no type filter: {})",
        list ? fmt::format("{}", n) : "the", cfg.functions, cfg.nr_args, reason);
  }
  if (!list) {
    // confidentiality refuses tracefs (LOCKDOWN_TRACEFS) before the tracker's own EPERM
    if (locked_down_confidentiality()) throw Error(lockdown_refusal("track objects", "track objects"));
    throw Error(
        "cannot read available_filter_functions: mount tracefs on /sys/kernel/tracing and run as root");
  }
  auto traceable = parse_filter_functions(*list);
  KallsymsIndex ksyms(with_addrs ? KallsymsIndex(std::string{}) : KallsymsIndex::system());
  FuncSelection sel = select_functions(globs, traceable, ksyms, btf.get(), strct, cfg.nr_args);
  std::string note = describe_selection(sel, cfg.functions);
  if (sel.funcs.empty()) {
    if (!sel.matched)
      throw UsageError(fmt::format("no traceable function matches '{}'{}", cfg.functions,
                                   any_module ? " in that module (is it loaded?)" : ""));
    throw UsageError(fmt::format("{}: nothing to hook (use --no-btf to check every argument)", note));
  }
  cfg.func_addrs = std::move(sel.funcs);
  return note;
}

#ifdef KTRACK_HAVE_LIBBPF
namespace {

class LibbpfFuncArgs : public BtfFuncArgs {
 public:
  explicit LibbpfFuncArgs(std::unique_ptr<KernelBtf> kb) : kb_(std::move(kb)), vmlinux_(kb_->vmlinux()) {
    index(vmlinux_, 1, funcs_[""]);
  }

  std::optional<uint8_t> arg_mask(const std::string &func, const std::string &module,
                                  const std::string &strct, unsigned nr_args) const override {
    const struct btf *b = btf_of(module);
    if (!b) return std::nullopt;
    auto &idx = funcs_[module];
    auto it = idx.find(func);
    if (it == idx.end()) return std::nullopt;
    uint8_t mask = 0;
    // Same-named functions (static ones): any prototype's positions count.
    for (int id : it->second) mask |= mask_of(b, id, strct, nr_args);
    return mask;
  }

  std::optional<std::string> pointee_struct(const std::string &func, int arg) const override {
    auto &idx = funcs_[""];
    auto it = idx.find(func);
    if (it == idx.end()) return std::nullopt;
    const struct btf_type *fn = btf__type_by_id(vmlinux_, it->second.front());
    const struct btf_type *proto = btf__type_by_id(vmlinux_, fn->type);
    if (!proto || !btf_is_func_proto(proto)) return std::nullopt;
    uint32_t tid;
    if (arg < 0) {
      tid = proto->type;
    } else {
      if (arg >= btf_vlen(proto)) return std::nullopt;
      tid = btf_params(proto)[arg].type;
    }
    return struct_behind_ptr(vmlinux_, tid);
  }

 private:
  using Index = std::unordered_map<std::string, std::vector<int>>;

  static void index(const struct btf *b, int first, Index &idx) {
    int n = static_cast<int>(btf__type_cnt(b));
    for (int id = first; id < n; id++) {
      const struct btf_type *t = btf__type_by_id(b, id);
      if (!t || !btf_is_func(t)) continue;
      const char *name = btf__name_by_offset(b, t->name_off);
      if (name && *name) idx[name].push_back(id);
    }
  }

  const struct btf *btf_of(const std::string &module) const {
    if (module.empty()) return vmlinux_;
    auto [it, inserted] = funcs_.try_emplace(module);
    const struct btf *b = kb_->module(module);
    if (inserted && b) index(b, static_cast<int>(btf__type_cnt(vmlinux_)), it->second);
    return b;
  }

  static uint32_t skip_mods(const struct btf *b, uint32_t id) {
    for (;;) {
      const struct btf_type *t = btf__type_by_id(b, id);
      if (!t || !(btf_is_mod(t) || btf_is_typedef(t))) return id;
      id = t->type;
    }
  }

  // "inode" when 'id' is (a typedef of) a pointer to struct inode.
  static std::optional<std::string> struct_behind_ptr(const struct btf *b, uint32_t id) {
    const struct btf_type *t = btf__type_by_id(b, skip_mods(b, id));
    if (!t || !btf_is_ptr(t)) return std::nullopt;
    const struct btf_type *s = btf__type_by_id(b, skip_mods(b, t->type));
    if (!s || !(btf_is_struct(s) || (btf_is_fwd(s) && !btf_kflag(s)))) return std::nullopt;
    const char *name = btf__name_by_offset(b, s->name_off);
    if (!name || !*name) return std::nullopt;
    return std::string(name);
  }

  // Argument registers (x86-64 SysV) that hold a 'strct' pointer.  Structs
  // passed by value take one or two registers (up to 16 bytes) or none
  // (memory); floating point takes none.
  static uint8_t mask_of(const struct btf *b, int func_id, const std::string &strct, unsigned nr_args) {
    const struct btf_type *fn = btf__type_by_id(b, func_id);
    const struct btf_type *proto = fn ? btf__type_by_id(b, fn->type) : nullptr;
    if (!proto || !btf_is_func_proto(proto)) return 0;
    const struct btf_param *p = btf_params(proto);
    unsigned reg = 0;
    uint8_t mask = 0;
    for (int i = 0; i < btf_vlen(proto) && reg < nr_args; i++) {
      if (!p[i].type) break;  // varargs
      uint32_t id = skip_mods(b, p[i].type);
      const struct btf_type *t = btf__type_by_id(b, id);
      if (!t) break;
      if (btf_is_ptr(t)) {
        auto s = struct_behind_ptr(b, id);
        if (s && *s == strct) mask |= static_cast<uint8_t>(1u << reg);
        reg++;
      } else if (btf_is_struct(t) || btf_is_union(t)) {
        long sz = btf__resolve_size(b, id);
        if (sz > 0 && sz <= 16) reg += sz > 8 ? 2 : 1;
      } else if (btf_is_float(t)) {
        continue;
      } else {
        reg++;
      }
    }
    return mask;
  }

  std::unique_ptr<KernelBtf> kb_;
  const struct btf *vmlinux_;
  mutable std::map<std::string, Index> funcs_;
};

}  // namespace

std::unique_ptr<BtfFuncArgs> load_btf_func_args(std::string *why) {
  auto kb = KernelBtf::open(why);
  if (!kb) return nullptr;
  return std::make_unique<LibbpfFuncArgs>(std::move(kb));
}
#else
std::unique_ptr<BtfFuncArgs> load_btf_func_args(std::string *why) {
  if (why) *why = "ktrackctl was built without libbpf";
  return nullptr;
}
#endif

}  // namespace ktrack
