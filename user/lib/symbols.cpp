#include "ktrack/symbols.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace ktrack {

void Symbolizer::load(std::string text) {
  text_ = std::make_unique<std::string>(std::move(text));
  syms_.clear();
  std::string_view t = *text_;
  size_t pos = 0;
  while (pos < t.size()) {
    size_t nl = t.find('\n', pos);
    if (nl == std::string_view::npos) nl = t.size();
    std::string_view line = t.substr(pos, nl - pos);
    pos = nl + 1;
    uint64_t addr = 0;
    auto r = std::from_chars(line.data(), line.data() + line.size(), addr, 16);
    if (r.ec != std::errc() || addr == 0) continue;
    std::string_view rest = line.substr(r.ptr - line.data());
    if (rest.size() < 4 || rest[0] != ' ' || rest[2] != ' ') continue;
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
  return any ? text : std::string();
}

const Symbolizer::Symbol *Symbolizer::lookup(uint64_t addr, uint64_t *off) const {
  auto it = std::upper_bound(syms_.begin(), syms_.end(), addr,
                             [](uint64_t a, const Symbol &s) { return a < s.addr; });
  if (it == syms_.begin()) return nullptr;
  --it;
  if (addr - it->addr > kMaxOffset) return nullptr;
  if (off) *off = addr - it->addr;
  return &*it;
}

void Symbolizer::format_to(fmt::memory_buffer &out, uint64_t addr) const {
  uint64_t off = 0;
  const Symbol *s = lookup(addr, &off);
  if (!s) {
    fmt::format_to(std::back_inserter(out), "0x{:x}", addr);
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
