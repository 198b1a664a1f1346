#include "probes/graph_scope.hpp"

#include <elf.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

#include "host/kallsyms.hpp"
#include "probes/probe_batch.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace ktrack {

namespace {

// FUNC or MOD:FUNC: (module, name)
std::pair<std::string, std::string> split_func(const std::string &func) {
  auto colon = func.find(':');
  if (colon == std::string::npos) return {"", func};
  return {func.substr(0, colon), func.substr(colon + 1)};
}

bool plain_name(std::string_view s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
  });
}

// Never a callee worth a probe: ftrace's own hook and the compiler's thunks.
bool skipped_callee(std::string_view n) {
  return n == "__fentry__" || n.starts_with("__x86_indirect_thunk") ||
         n.starts_with("__x86_indirect_call_thunk") || n.starts_with("__x86_return_thunk") ||
         n.ends_with("_thunk") || n.find("_thunk_") != std::string_view::npos;
}

// The most bytes decoded of one function (its extent is up to the next symbol).
constexpr size_t kMaxFuncBytes = 64 * 1024;

}  // namespace

void check_graph_scope(const std::string &func, uint32_t depth) {
  auto [mod, name] = split_func(func);
  if (!plain_name(name) || (func.find(':') != std::string::npos && !plain_name(mod)))
    throw UsageError(fmt::format("--graph '{}': give one function, FUNC or MOD:FUNC (no glob)", func));
  if (depth == 0 || depth > KTRACK_GRAPH_MAX_DEPTH)
    throw UsageError(
        fmt::format("--depth {}: give 1..{} (calls below the root)", depth, KTRACK_GRAPH_MAX_DEPTH));
}

std::string graph_root_spec(const std::string &func) { return fmt::format("f:graph_root {}%both", func); }

std::string graph_value_spec(ProbeCompiler &pc, const std::string &name, const std::string &target) {
  const std::string base = fmt::format("f:{} {}%both", name, target);
  // (retval= when an argument is named ret)
  for (const char *values : {" $$args ret=$retval", " $$args retval=$retval", " $$args", " ret=$retval"}) {
    try {
      pc.compile(base + values);
      return base + values;
    } catch (const Error &) {
      // no BTF prototype, a void function, a module without BTF: fewer values
    }
  }
  return base;
}

std::string graph_probe_name(const std::string &func, size_t index) {
  // a C identifier, as probe names are; the index keeps changed names apart
  std::string n;
  for (char c : func) n += std::isalnum((unsigned char)c) || c == '_' ? c : '_';
  if (!n.empty() && n == func && !std::isdigit((unsigned char)n[0]) && n.size() < KTRACK_PROBE_NAME_MAX)
    return n;
  std::string tail = fmt::format("_{}", index);
  return "_" + n.substr(0, KTRACK_PROBE_NAME_MAX - 2 - tail.size()) + tail;
}

void mark_graph_root(ProbeSpec &spec) {
  spec.entry = spec.exit = true;
  spec.graph_flags = KTRACK_PROBE_F_GRAPH_ROOT;
  spec.graph_depth = 0;
}

bool mark_graph_scoped(ProbeSpec &spec, uint32_t depth) {
  if (spec.kind != ProbeKind::kFuncs) return false;
  if (spec.kernel_glob)
    throw UsageError(
        fmt::format("--graph: '{}' names more than {} functions; scoped probes record exits "
                    "too, which hook each function: narrow it",
                    spec.text, KTRACK_PROBE_MAX_FUNCS));
  spec.entry = spec.exit = true;
  spec.graph_flags = KTRACK_PROBE_F_GRAPH_SCOPED;
  spec.graph_depth = depth;
  return true;
}

std::vector<uint64_t> direct_call_targets(std::span<const uint8_t> code, uint64_t addr) {
  std::vector<uint64_t> out;
  std::set<uint64_t> seen;
  for (size_t i = 0; i + 5 <= code.size(); i++) {
    if (code[i] != 0xe8) continue;
    int32_t rel;
    std::memcpy(&rel, &code[i + 1], sizeof(rel));  // little-endian, as x86
    uint64_t target = addr + i + 5 + (uint64_t)(int64_t)rel;
    if (seen.insert(target).second) out.push_back(target);
  }
  return out;
}

CalleeSet graph_callees(const KallsymsIndex &syms, const std::vector<std::string> &traceable,
                        const std::string &func, uint32_t depth, const TextReader &read) {
  // "mod\0name" of every function ftrace can trace
  std::set<std::string> can_trace;
  for (const auto &line : traceable) {
    std::string_view l = line;
    auto sp = l.find_first_of(" \t");
    std::string_view name = l.substr(0, sp), mod;
    if (sp != std::string_view::npos) {
      auto lb = l.find('[', sp), rb = l.find(']', sp);
      if (lb != std::string_view::npos && rb != std::string_view::npos && rb > lb)
        mod = l.substr(lb + 1, rb - lb - 1);
    }
    can_trace.insert(std::string(mod) + '\0' + std::string(name));
  }
  // text symbols by address: a call's target must start one
  std::vector<const KallsymsIndex::Sym *> text;
  for (const auto &s : syms.symbols())
    if ((s.type == 't' || s.type == 'T') && s.addr) text.push_back(&s);
  std::stable_sort(text.begin(), text.end(), [](auto *a, auto *b) { return a->addr < b->addr; });
  auto extent = [&](uint64_t addr) -> size_t {
    auto it =
        std::upper_bound(text.begin(), text.end(), addr, [](uint64_t a, auto *s) { return a < s->addr; });
    if (it == text.end()) return 0;
    return std::min<uint64_t>((*it)->addr - addr, kMaxFuncBytes);
  };
  // a traceable function starting exactly at 'addr' (aliases: the first traceable one)
  auto function_at = [&](uint64_t addr) -> const KallsymsIndex::Sym * {
    auto it =
        std::lower_bound(text.begin(), text.end(), addr, [](auto *s, uint64_t a) { return s->addr < a; });
    for (; it != text.end() && (*it)->addr == addr; ++it)
      if (can_trace.count(std::string((*it)->module) + '\0' + std::string((*it)->name))) return *it;
    return nullptr;
  };

  auto [root_mod, root_name] = split_func(func);
  const auto *roots = syms.find_text(root_name, root_mod);
  if (!roots) {
    // a module function named without its module
    for (const auto &s : syms.symbols())
      if ((s.type == 't' || s.type == 'T') && s.name == root_name && root_mod.empty()) {
        roots = syms.find_text(root_name, std::string(s.module));
        break;
      }
  }
  if (!roots || roots->empty())
    throw UsageError(fmt::format("--graph {}: no such function in /proc/kallsyms", func));

  CalleeSet r;
  // module -> names, in the order found; core kernel first (map order: "" < any)
  std::map<std::string, std::vector<std::string>> by_mod;
  std::set<uint64_t> visited(roots->begin(), roots->end());
  std::vector<uint64_t> frontier(roots->begin(), roots->end());
  for (uint32_t level = 1; level <= depth && !frontier.empty() && !r.capped; level++) {
    std::vector<uint64_t> next;
    for (uint64_t f : frontier) {
      size_t len = extent(f);
      if (!len) continue;
      auto code = read(f, len);
      for (uint64_t t : direct_call_targets(code, f)) {
        if (!visited.insert(t).second) continue;
        const auto *s = function_at(t);
        if (!s || skipped_callee(s->name) ||
            (s->name == root_name && (root_mod.empty() || s->module == root_mod)))
          continue;
        if (r.nr_funcs == KTRACK_PROBE_MAX_FUNCS) {
          r.capped = true;
          break;
        }
        by_mod[std::string(s->module)].emplace_back(s->name);
        r.nr_funcs++;
        next.push_back(t);
      }
      if (r.capped) break;
    }
    frontier = std::move(next);
  }
  size_t i = 0;
  for (auto &[mod, names] : by_mod) {
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    std::string list;
    for (const auto &n : names) {
      list += (list.empty() ? "" : ",") + n;
      r.targets.push_back(mod.empty() ? n : mod + ":" + n);
    }
    std::string name = i ? fmt::format("graph_callees{}", i) : "graph_callees";
    r.specs.push_back(mod.empty() ? fmt::format("f:{} {}", name, list)
                                  : fmt::format("f:{} {}:{}", name, mod, list));
    i++;
  }
  return r;
}

namespace {

// Kernel text through /proc/kcore (ELF: one PT_LOAD per kernel range).
class Kcore {
 public:
  Kcore() {
    fd_ = ::open("/proc/kcore", O_RDONLY | O_CLOEXEC);
    if (fd_ < 0)
      throw Error(fmt::format(
          "cannot read /proc/kcore to find the callees ({}): give the functions to record as specs, e.g. "
          "'f ext4_*'",
          std::strerror(errno)));
    Elf64_Ehdr eh;
    if (::pread(fd_, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr))
      throw Error("/proc/kcore is not a 64-bit ELF core file");
    phdrs_.resize(eh.e_phnum);
    ssize_t want = (ssize_t)(eh.e_phnum * sizeof(Elf64_Phdr));
    if (::pread(fd_, phdrs_.data(), want, (off_t)eh.e_phoff) != want)
      throw Error("/proc/kcore: cannot read its program headers");
  }
  ~Kcore() { ::close(fd_); }
  Kcore(const Kcore &) = delete;
  Kcore &operator=(const Kcore &) = delete;

  std::vector<uint8_t> read(uint64_t addr, size_t len) const {
    for (const auto &ph : phdrs_) {
      if (ph.p_type != PT_LOAD || addr < ph.p_vaddr || addr >= ph.p_vaddr + ph.p_filesz) continue;
      len = std::min<uint64_t>(len, ph.p_vaddr + ph.p_filesz - addr);
      std::vector<uint8_t> b(len);
      ssize_t n = ::pread(fd_, b.data(), len, (off_t)(ph.p_offset + (addr - ph.p_vaddr)));
      b.resize(n > 0 ? (size_t)n : 0);
      return b;
    }
    return {};
  }

 private:
  int fd_ = -1;
  std::vector<Elf64_Phdr> phdrs_;
};

}  // namespace

CalleeSet graph_callees_of_system(const std::string &func, uint32_t depth) {
  auto syms = KallsymsIndex::system();
  if (syms.empty()) throw Error("/proc/kallsyms shows no addresses (kptr_restrict?): cannot find callees");
  SystemSymbols system;
  const std::vector<std::string> traceable = system.filter_functions();
  Kcore kcore;
  return graph_callees(syms, traceable, func, depth,
                       [&](uint64_t addr, size_t len) { return kcore.read(addr, len); });
}

}  // namespace ktrack
