#include "format/symbols.hpp"

#include "util/text.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include <uapi/ktrack.h>

namespace ktrack {

std::optional<KallsymsLine> parse_kallsyms_line(std::string_view line) {
  uint64_t addr = 0;
  auto r = std::from_chars(line.data(), line.data() + line.size(), addr, 16);
  if (r.ec != std::errc() || addr == 0) return std::nullopt;
  std::string_view rest = line.substr(r.ptr - line.data());
  if (rest.size() < 4 || rest[0] != ' ' || rest[2] != ' ') return std::nullopt;
  KallsymsLine out{addr, rest[1], {}, {}};
  rest.remove_prefix(3);
  out.name = rest;
  size_t sp = rest.find_first_of(" \t");
  if (sp != std::string_view::npos) {
    out.name = rest.substr(0, sp);
    size_t lb = rest.find('[', sp), rb = rest.find(']', sp);
    if (lb != std::string_view::npos && rb != std::string_view::npos && rb > lb)
      out.module = rest.substr(lb + 1, rb - lb - 1);
  }
  return out;
}

void Symbolizer::load(std::string text) {
  texts_.clear();
  syms_.clear();
  mods_.clear();
  bounds_.clear();
  add(std::move(text));
}

void Symbolizer::add(std::string text) {
  texts_.push_back(std::make_unique<std::string>(std::move(text)));
  const size_t old_syms = syms_.size(), old_bounds = bounds_.size(), old_mods = mods_.size();
  std::string_view t = *texts_.back();
  while (!t.empty()) {
    std::string_view line = next_line(t);
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
    auto l = parse_kallsyms_line(line);
    if (!l) continue;
    bounds_.push_back(l->addr);
    bool text = l->type == 't' || l->type == 'T' || l->type == 'w' || l->type == 'W';
    // t probes record the struct tracepoint (data): keep those names too
    if (!text && !((l->type == 'd' || l->type == 'D') && l->name.rfind("__tracepoint_", 0) == 0)) continue;
    if (l->name.empty()) continue;
    syms_.push_back({l->addr, l->name, l->module});
  }
  // The new lines sorted, then merged in, stably: of the names at one
  // address the last one read names it, in every chunk order the writer
  // keeps (it adds a group's lines in order).  A file read in many chunks
  // costs one linear pass per chunk, not a sort of everything.
  auto by_addr = [](const Symbol &a, const Symbol &b) { return a.addr < b.addr; };
  auto mid = syms_.begin() + static_cast<std::ptrdiff_t>(old_syms);
  std::stable_sort(mid, syms_.end(), by_addr);
  std::inplace_merge(syms_.begin(), mid, syms_.end(), by_addr);
  auto bmid = bounds_.begin() + static_cast<std::ptrdiff_t>(old_bounds);
  std::sort(bmid, bounds_.end());
  std::inplace_merge(bounds_.begin(), bmid, bounds_.end());
  if (mods_.size() != old_mods)
    std::sort(mods_.begin(), mods_.end(), [](const Module &a, const Module &b) { return a.base < b.base; });
  // Each symbol ends at the next line's address (any type), within
  // kMaxOffset, and at its module's end.
  size_t j = 0;
  for (auto &sym : syms_) {
    while (j < bounds_.size() && bounds_[j] <= sym.addr) j++;
    sym.end = j == bounds_.size() ? sym.addr + kMaxOffset : std::min(bounds_[j], sym.addr + kMaxOffset);
    if (!sym.module.empty()) {
      const Module *m = snapshot_module(sym.addr);
      if (m && m->name == sym.module) sym.end = std::min(sym.end, m->base + m->size);
    }
  }
}

const Symbolizer::Module *Symbolizer::snapshot_module(uint64_t addr) const {
  auto it = std::upper_bound(mods_.begin(), mods_.end(), addr,
                             [](uint64_t a, const Module &m) { return a < m.base; });
  if (it == mods_.begin()) return nullptr;
  --it;
  return addr - it->base < it->size ? &*it : nullptr;
}

const Symbolizer::Symbol *Symbolizer::in_snapshot(uint64_t addr, uint64_t *off) const {
  // The hint is the answer upper_bound() would give when its symbol starts
  // at or below addr and the next one above it (exact for any contents).
  size_t h = hint_.i.load(std::memory_order_relaxed);
  std::vector<Symbol>::const_iterator it;
  if (h < syms_.size() && syms_[h].addr <= addr && (h + 1 == syms_.size() || addr < syms_[h + 1].addr)) {
    it = syms_.begin() + static_cast<std::ptrdiff_t>(h);
  } else {
    it = std::upper_bound(syms_.begin(), syms_.end(), addr,
                          [](uint64_t a, const Symbol &s) { return a < s.addr; });
    if (it == syms_.begin()) return nullptr;
    --it;
    hint_.i.store(static_cast<size_t>(it - syms_.begin()), std::memory_order_relaxed);
  }
  if (addr >= it->end) return nullptr;
  if (off) *off = addr - it->addr;
  return &*it;
}

// ---- module history (KTRACK_REC_MODULE records) ----------------------------

namespace {

template <typename T>
bool read_at(std::span<const uint8_t> rec, size_t off, T &out) {
  if (off + sizeof(T) > rec.size()) return false;
  std::memcpy(&out, rec.data() + off, sizeof(T));
  return true;
}

}  // namespace

bool Symbolizer::ingest(std::span<const uint8_t> rec) {
  ktrack_rec_hdr h;
  if (!read_at(rec, 0, h) || h.len > rec.size()) return false;
  if (h.type != KTRACK_REC_MODULE && h.type != KTRACK_REC_MODULE_SYMS) return false;
  rec = rec.subspan(0, h.len);
  const size_t p = sizeof(h);
  if (h.type == KTRACK_REC_MODULE) {
    ktrack_rec_module m;
    if (!read_at(rec, p, m)) return true;
    std::string name(m.name, strnlen(m.name, sizeof(m.name)));
    if (m.event == KTRACK_MODULE_LOAD) {
      auto l = std::make_unique<Load>();
      l->name = std::move(name);
      l->text_base = m.text_base;
      l->text_size = m.text_size;
      l->init_base = m.init_base;
      l->init_size = m.init_base ? m.init_size : 0;
      l->from = h.ts;
      loads_.push_back(std::move(l));
    } else if (m.event == KTRACK_MODULE_UNLOAD) {
      for (auto it = loads_.rbegin(); it != loads_.rend(); ++it)
        if ((*it)->until == UINT64_MAX && (*it)->text_base == m.text_base && (*it)->name == name) {
          (*it)->until = h.ts;
          return true;
        }
      // Loaded before the capture: the snapshot's module goes away.
      unloaded_.emplace(std::move(name), h.ts);
    }
    return true;
  }
  ktrack_rec_module_syms ms;
  if (!read_at(rec, p, ms)) return true;
  Load *l = nullptr;
  for (auto it = loads_.rbegin(); it != loads_.rend() && !l; ++it)
    if ((*it)->until == UINT64_MAX && (*it)->text_base == ms.text_base) l = it->get();
  if (!l) return true;  // the session started between a LOAD and its symbols
  size_t off = p + sizeof(ms);
  for (uint32_t i = 0; i < ms.nr; i++) {
    ktrack_module_sym e;
    if (!read_at(rec, off, e) || e.name_len == 0 || off + sizeof(e) + e.name_len > rec.size()) break;
    const char *n = reinterpret_cast<const char *>(rec.data() + off + sizeof(e));
    l->names.emplace_back(n, strnlen(n, e.name_len));
    uint64_t end = e.size ? e.addr + e.size : 0;
    l->syms.push_back({e.addr, l->names.back(), l->name, end});
    l->sorted = false;
    load_syms_++;
    off += (sizeof(e) + e.name_len + 7) & ~size_t(7);
  }
  return true;
}

const Symbolizer::Load *Symbolizer::load_at(uint64_t addr, uint64_t ts) const {
  for (auto it = loads_.rbegin(); it != loads_.rend(); ++it)
    if ((*it)->from <= ts && ts < (*it)->until && (*it)->covers(addr)) return it->get();
  return nullptr;
}

const Symbolizer::Load *Symbolizer::first_load(uint64_t addr) const {
  for (const auto &l : loads_)
    if (l->covers(addr)) return l.get();
  return nullptr;
}

const Symbolizer::Symbol *Symbolizer::in_load(const Load &cl, uint64_t addr, uint64_t *off) const {
  Load &l = const_cast<Load &>(cl);
  if (!l.sorted) {
    // Ends: the size the kernel gave, else the next symbol, within the
    // range (core or init text) the symbol lies in.
    std::stable_sort(l.syms.begin(), l.syms.end(),
                     [](const Symbol &a, const Symbol &b) { return a.addr < b.addr; });
    for (size_t i = 0; i < l.syms.size(); i++) {
      Symbol &sym = l.syms[i];
      uint64_t lim = sym.addr >= l.text_base && sym.addr - l.text_base < l.text_size
                         ? l.text_base + l.text_size
                         : l.init_base + l.init_size;
      uint64_t next = i + 1 < l.syms.size() ? l.syms[i + 1].addr : lim;
      if (sym.end <= sym.addr) sym.end = std::min(next, lim);
      sym.end = std::min(sym.end, lim);
    }
    l.sorted = true;
  }
  auto it = std::upper_bound(l.syms.begin(), l.syms.end(), addr,
                             [](uint64_t a, const Symbol &s) { return a < s.addr; });
  if (it == l.syms.begin()) return nullptr;
  --it;
  if (addr >= it->end) return nullptr;
  if (off) *off = addr - it->addr;
  return &*it;
}

bool Symbolizer::snapshot_valid(uint64_t addr, uint64_t ts) const {
  if (loads_.empty()) return true;
  // Another module took the address since the snapshot.
  for (const auto &l : loads_)
    if (l->from <= ts && l->covers(addr)) return false;
  if (unloaded_.empty()) return true;
  const Module *m = snapshot_module(addr);
  std::string_view name = m ? m->name : std::string_view{};
  if (!m) {
    uint64_t off;
    if (const Symbol *s = in_snapshot(addr, &off)) name = s->module;
  }
  if (name.empty()) return true;
  auto u = unloaded_.find(name);
  return u == unloaded_.end() || ts < u->second;
}

const Symbolizer::Symbol *Symbolizer::lookup(uint64_t addr, uint64_t ts, uint64_t *off) const {
  if (const Load *l = load_at(addr, ts)) return in_load(*l, addr, off);
  return snapshot_valid(addr, ts) ? in_snapshot(addr, off) : nullptr;
}

const Symbolizer::Symbol *Symbolizer::lookup(uint64_t addr, uint64_t *off) const {
  if (addr >= kPinBase && addr - kPinBase < pinned_.size()) {
    auto [a, ts] = pinned_[addr - kPinBase];
    return lookup(a, ts, off);
  }
  if (const Symbol *s = in_snapshot(addr, off)) return s;
  if (const Load *l = first_load(addr)) return in_load(*l, addr, off);
  return nullptr;
}

std::string_view Symbolizer::module_of(uint64_t addr, uint64_t ts) const {
  if (const Load *l = load_at(addr, ts)) return l->name;
  if (!snapshot_valid(addr, ts)) return {};
  const Module *m = snapshot_module(addr);
  return m ? m->name : std::string_view{};
}

std::string_view Symbolizer::module_of(uint64_t addr) const {
  if (addr >= kPinBase && addr - kPinBase < pinned_.size()) {
    auto [a, ts] = pinned_[addr - kPinBase];
    return module_of(a, ts);
  }
  if (const Module *m = snapshot_module(addr)) return m->name;
  const Load *l = first_load(addr);
  return l ? std::string_view(l->name) : std::string_view{};
}

uint64_t Symbolizer::pin(uint64_t addr, uint64_t ts) {
  if (!addr || !history()) return addr;
  const Load *now = load_at(addr, ts);
  const Symbol *at = lookup(addr, ts, nullptr);
  // Named the same way without the time, now and whatever loads later (a
  // later load never changes the answer for an address the snapshot or an
  // earlier load covers).
  if (at && at == lookup(addr, nullptr)) return addr;
  if (!at && !now && !first_load(addr) && unloaded_.empty()) return addr;
  const void *holder = now ? static_cast<const void *>(now) : at ? static_cast<const void *>(at) : nullptr;
  auto [it, fresh] = pin_keys_.try_emplace({addr, holder}, kPinBase + pinned_.size());
  if (fresh) pinned_.emplace_back(addr, ts);
  return it->second;
}

uint64_t Symbolizer::unpin(uint64_t key) const {
  if (key >= kPinBase && key - kPinBase < pinned_.size()) return pinned_[key - kPinBase].first;
  return key;
}

void Symbolizer::format_to(fmt::memory_buffer &out, uint64_t addr, uint64_t ts, bool offset) const {
  uint64_t off = 0;
  const Symbol *s = lookup(addr, ts, &off);
  if (!s) {
    fmt::format_to(std::back_inserter(out), "0x{:x}", addr);
    if (auto m = module_of(addr, ts); !m.empty()) fmt::format_to(std::back_inserter(out), " [{}]", m);
    return;
  }
  // "name+0xoff [module]" in one resize: fmt's append() checks capacity
  // in a loop, and a report names a function on most lines.
  char tmp[20];
  char *hex_end = tmp + sizeof(tmp), *hex = hex_end;
  if (offset) {
    do {
      *--hex = "0123456789abcdef"[off & 15];
      off >>= 4;
    } while (off);
  }
  const size_t nhex = static_cast<size_t>(hex_end - hex);
  const size_t n = s->name.size() + (offset ? 3 + nhex : 0) + (s->module.empty() ? 0 : s->module.size() + 3);
  const size_t at = out.size();
  out.resize(at + n);
  char *p = out.data() + at;
  auto put = [&p](const char *src, size_t len) {
    if (len) std::memcpy(p, src, len);
    p += len;
  };
  put(s->name.data(), s->name.size());
  if (offset) {
    put("+0x", 3);
    put(hex, nhex);
  }
  if (!s->module.empty()) {
    put(" [", 2);
    put(s->module.data(), s->module.size());
    put("]", 1);
  }
}

void Symbolizer::format_to(fmt::memory_buffer &out, uint64_t addr) const {
  if (addr >= kPinBase && addr - kPinBase < pinned_.size()) {
    auto [a, ts] = pinned_[addr - kPinBase];
    format_to(out, a, ts);
    return;
  }
  // The time-free answer (see lookup(addr)).
  uint64_t ts = 0;
  if (!in_snapshot(addr, nullptr))
    if (const Load *l = first_load(addr)) ts = l->from;
  format_to(out, addr, ts);
}

std::string Symbolizer::format(uint64_t addr) const {
  fmt::memory_buffer b;
  format_to(b, addr);
  return fmt::to_string(b);
}

}  // namespace ktrack
