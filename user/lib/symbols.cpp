#include "ktrack/symbols.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace ktrack {

void Symbolizer::load(std::string text) {
  text_ = std::make_unique<std::string>(std::move(text));
  syms_.clear();
  mods_.clear();
  std::vector<uint64_t> bounds;  // every symbol's address: where the one before ends
  std::string_view t = *text_;
  size_t pos = 0;
  while (pos < t.size()) {
    size_t nl = t.find('\n', pos);
    if (nl == std::string_view::npos) nl = t.size();
    std::string_view line = t.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.rfind("# module ", 0) == 0) {  // "# module NAME BASE SIZE"
      std::string_view rest = line.substr(9);
      size_t a = rest.find(' '), b = a == std::string_view::npos ? a : rest.find(' ', a + 1);
      if (b == std::string_view::npos) continue;
      uint64_t base = 0, size = 0;
      auto r1 = std::from_chars(rest.data() + a + 1, rest.data() + b, base, 16);
      auto r2 = std::from_chars(rest.data() + b + 1, rest.data() + rest.size(), size, 10);
      if (r1.ec == std::errc() && r2.ec == std::errc() && base && size)
        mods_.push_back({rest.substr(0, a), base, size});
      continue;
    }
    uint64_t addr = 0;
    auto r = std::from_chars(line.data(), line.data() + line.size(), addr, 16);
    if (r.ec != std::errc() || addr == 0) continue;
    std::string_view rest = line.substr(r.ptr - line.data());
    if (rest.size() < 4 || rest[0] != ' ' || rest[2] != ' ') continue;
    bounds.push_back(addr);
    char type = rest[1];
    if (type != 't' && type != 'T' && type != 'w' && type != 'W') continue;
    rest.remove_prefix(3);
    std::string_view name = rest, module;
    size_t sp = rest.find_first_of(" \t");
    if (sp != std::string_view::npos) {
      name = rest.substr(0, sp);
      size_t lb = rest.find('[', sp), rb = rest.find(']', sp);
      if (lb != std::string_view::npos && rb != std::string_view::npos && rb > lb)
        module = rest.substr(lb + 1, rb - lb - 1);
    }
    if (name.empty()) continue;
    syms_.push_back({addr, name, module});
  }
  std::stable_sort(syms_.begin(), syms_.end(),
                   [](const Symbol &a, const Symbol &b) { return a.addr < b.addr; });
  std::sort(bounds.begin(), bounds.end());
  std::sort(mods_.begin(), mods_.end(), [](const Module &a, const Module &b) { return a.base < b.base; });
  for (auto &sym : syms_) {
    auto next = std::upper_bound(bounds.begin(), bounds.end(), sym.addr);
    sym.end = next == bounds.end() ? sym.addr + kMaxOffset : std::min(*next, sym.addr + kMaxOffset);
    if (!sym.module.empty()) {
      for (const auto &m : mods_)
        if (m.name == sym.module && sym.addr >= m.base && sym.addr < m.base + m.size)
          sym.end = std::min(sym.end, m.base + m.size);
    }
  }
}

std::string Symbolizer::read_kallsyms() {
  const char *path = std::getenv("KTRACK_KALLSYMS");
  std::ifstream f(path && *path ? path : "/proc/kallsyms");
  if (!f) return {};
  std::ostringstream ss;
  ss << f.rdbuf();
  std::string text = ss.str();
  // kptr_restrict: every address reads as zero; such a snapshot is useless.
  bool any = false;
  for (size_t pos = 0; pos < text.size() && !any;) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    for (size_t i = pos; i < nl && text[i] != ' '; i++)
      if (text[i] != '0') {
        any = true;
        break;
      }
    pos = nl + 1;
  }
  if (!any) return {};
  // Where each module ends, to bound its last symbol (see load()).
  // "/proc/modules: NAME SIZE REFS DEPS STATE 0xBASE [TAINTS]"
  const char *mpath = std::getenv("KTRACK_MODULES");
  std::ifstream m(mpath && *mpath ? mpath : "/proc/modules");
  std::string line;
  while (std::getline(m, line)) {
    std::istringstream ls(line);
    std::string name, size, refs, deps, state, base;
    if (!(ls >> name >> size >> refs >> deps >> state >> base) || base.rfind("0x", 0) != 0) continue;
    text += fmt::format("# module {} {} {}\n", name, base.substr(2), size);
  }
  return text;
}

const Symbolizer::Module *Symbolizer::module_of(uint64_t addr) const {
  auto it = std::upper_bound(mods_.begin(), mods_.end(), addr,
                             [](uint64_t a, const Module &m) { return a < m.base; });
  if (it == mods_.begin()) return nullptr;
  --it;
  return addr - it->base < it->size ? &*it : nullptr;
}

const Symbolizer::Symbol *Symbolizer::lookup(uint64_t addr, uint64_t *off) const {
  auto it = std::upper_bound(syms_.begin(), syms_.end(), addr,
                             [](uint64_t a, const Symbol &s) { return a < s.addr; });
  if (it == syms_.begin()) return nullptr;
  --it;
  if (addr >= it->end) return nullptr;
  if (off) *off = addr - it->addr;
  return &*it;
}

void Symbolizer::format_to(fmt::memory_buffer &out, uint64_t addr) const {
  uint64_t off = 0;
  const Symbol *s = lookup(addr, &off);
  if (!s) {
    fmt::format_to(std::back_inserter(out), "0x{:x}", addr);
    if (const Module *m = module_of(addr)) fmt::format_to(std::back_inserter(out), " [{}]", m->name);
    return;
  }
  out.append(s->name);
  char tmp[20];
  char *end = tmp + sizeof(tmp), *p = end;
  do {
    *--p = "0123456789abcdef"[off & 15];
    off >>= 4;
  } while (off);
  out.append(std::string_view("+0x"));
  out.append(p, end);
  if (!s->module.empty()) {
    out.append(std::string_view(" ["));
    out.append(s->module);
    out.push_back(']');
  }
}

std::string Symbolizer::format(uint64_t addr) const {
  fmt::memory_buffer b;
  format_to(b, addr);
  return fmt::to_string(b);
}

}  // namespace ktrack
