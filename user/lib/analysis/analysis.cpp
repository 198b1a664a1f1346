#include "analysis/analysis.hpp"

#include <fmt/core.h>

#include <cmath>
#include <cstring>

#include "util/error.hpp"

#include <uapi/ktrack.h>

namespace ktrack::analysis {

bool sample_from_record(const void *rec, size_t len, Sample &s) {
  if (len < sizeof(ktrack_rec_hdr)) return false;
  ktrack_rec_hdr h;
  std::memcpy(&h, rec, sizeof(h));
  if (h.len < sizeof(h) || h.len > len) return false;
  const auto *payload = static_cast<const uint8_t *>(rec) + sizeof(h);
  size_t plen = h.len - sizeof(h);
  // Field by field, not s = Sample{}: this runs once per record and a
  // block clear of the whole struct costs more than the assignments.
  s.ts = h.ts;
  s.pid = h.pid;
  s.tgid = h.tgid;
  s.cpu = h.cpu;
  s.type = h.type;
  s.flags = h.flags;
  s.kind = Kind::Other;
  s.probe_id = 0;
  s.ip = s.parent_ip = 0;
  s.lost = s.lost_first = s.lost_last = 0;
  s.stack = nullptr;
  s.stack_nr = 0;
  s.text = {};
  s.comm = {};
  s.origin = rec;
  switch (h.type) {
    case KTRACK_REC_PROBE: {
      if (plen < sizeof(ktrack_rec_probe)) return false;
      ktrack_rec_probe p;
      std::memcpy(&p, payload, sizeof(p));
      s.probe_id = p.probe_id;
      s.ip = p.ip;
      s.parent_ip = p.parent_ip;
      s.kind = p.event == KTRACK_PROBE_EV_ENTRY  ? Kind::Entry
               : p.event == KTRACK_PROBE_EV_EXIT ? Kind::Exit
                                                 : Kind::Point;
      return true;
    }
    case KTRACK_REC_STACK: {
      if (plen < sizeof(ktrack_rec_stack)) return false;
      ktrack_rec_stack st;
      std::memcpy(&st, payload, sizeof(st));
      if (st.nr > (plen - sizeof(st)) / sizeof(uint64_t)) return false;
      s.probe_id = st.probe_id;
      s.kind = Kind::Stack;
      s.stack_nr = st.nr;
      // Records are 8-aligned in every buffer the decoder hands out.
      s.stack = reinterpret_cast<const uint64_t *>(payload + sizeof(st));
      return true;
    }
    case KTRACK_REC_LOST: {
      if (plen < sizeof(ktrack_rec_lost)) return false;
      ktrack_rec_lost l;
      std::memcpy(&l, payload, sizeof(l));
      s.kind = Kind::Lost;
      s.lost = l.count;
      s.lost_first = l.first_ts;
      s.lost_last = l.last_ts;
      return true;
    }
    case KTRACK_REC_MARKER:
    case KTRACK_REC_PRINTF: {
      const char *t = reinterpret_cast<const char *>(payload);
      s.kind = Kind::Marker;
      s.text = std::string_view(t, strnlen(t, plen));
      return true;
    }
    default:
      return true;
  }
}

std::string Names::probe_name(uint32_t probe_id) const { return fmt::format("probe{}", probe_id); }

Symbol Names::symbol(uint64_t ip) const { return Symbol{fmt::format("{:#x}", ip), 0, ""}; }

std::string Names::comm(uint32_t) const { return ""; }

int Names::field_id(std::string_view) const { return -1; }

bool Names::field_value(const Sample &, int, int64_t &) const { return false; }

bool Names::field_string(const Sample &, int, std::string &) const { return false; }

std::string Names::symbolize(uint64_t ip) const {
  Symbol sym = symbol(ip);
  std::string out = sym.name;
  if (sym.offset) out += fmt::format("+{:#x}", sym.offset);
  if (!sym.module.empty()) out += fmt::format(" [{}]", sym.module);
  return out;
}

uint32_t StringInterner::intern(std::string_view s) {
  // Fibonacci hashing: buffers that sit a fixed stride apart spread out.
  Recent &r = recent_[(reinterpret_cast<uintptr_t>(s.data()) * 0x9e3779b97f4a7c15ULL) >> (64 - kRecentBits)];
  if (r.data == s.data() && s.data() && strings_[r.id] == s) return r.id;
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  auto &ids = by_hash_[h];
  uint32_t found = UINT32_MAX;
  for (uint32_t id : ids)
    if (strings_[id] == s) {
      found = id;
      break;
    }
  if (found == UINT32_MAX) {
    found = static_cast<uint32_t>(strings_.size());
    ids.push_back(found);
    strings_.emplace_back(s);
  }
  r = {s.data(), found};
  return found;
}

std::string format_duration(uint64_t ns) {
  if (ns < 1000) return fmt::format("{} ns", ns);
  if (ns < 1000000) return fmt::format("{:.3f} us", ns / 1e3);
  if (ns < 1000000000) return fmt::format("{:.3f} ms", ns / 1e6);
  return fmt::format("{:.3f} s", ns / 1e9);
}

std::string format_ts(uint64_t ns) {
  return fmt::format("{}.{:06}", ns / 1000000000, (ns % 1000000000) / 1000);
}

const char *duration_marker(uint64_t ns) {
  if (ns > 1000000000ULL) return "$ ";
  if (ns > 100000000ULL) return "@ ";
  if (ns > 10000000ULL) return "* ";
  if (ns > 1000000ULL) return "# ";
  if (ns > 100000ULL) return "! ";
  if (ns > 10000ULL) return "+ ";
  return "  ";
}

std::string lost_line(const Sample &s) {
  return fmt::format("lost {} record{} on CPU {} between {} and {}", s.lost, s.lost == 1 ? "" : "s", s.cpu,
                     format_ts(s.lost_first), format_ts(s.lost_last));
}

}  // namespace ktrack::analysis

namespace ktrack::analysis {

void LostSummary::add(const Sample &s) {
  if (s.cpu >= cpus_.size()) cpus_.resize(s.cpu + 1u);
  auto &c = cpus_[s.cpu];
  c.count += s.lost;
  c.first = std::min(c.first, s.lost_first);
  c.last = std::max(c.last, s.lost_last);
  ++c.gaps;
  total_ += s.lost;
}

void LostSummary::print(Out &out, const Colors &c, bool json, std::string_view suffix) const {
  for (const auto &l : lines()) {
    if (json) {
      auto &buf = out.buf();
      buf.append(std::string_view("{\"lost\":"));
      json_escape(buf, l);
      buf.append(std::string_view("}\n"));
    } else {
      out.print("{}{}{}{}\n", c.alert, l, suffix, c.reset);
    }
  }
}

std::vector<std::string> LostSummary::lines() const {
  std::vector<std::string> out;
  for (size_t cpu = 0; cpu < cpus_.size(); ++cpu) {
    const auto &c = cpus_[cpu];
    if (!c.gaps) continue;
    Sample s;
    s.cpu = static_cast<uint16_t>(cpu);
    s.lost = c.count;
    s.lost_first = c.first;
    s.lost_last = c.last;
    std::string line = lost_line(s);
    if (c.gaps > 1) line += fmt::format(" (in {} gaps)", c.gaps);
    out.push_back(std::move(line));
  }
  return out;
}

}  // namespace ktrack::analysis

namespace ktrack::analysis {

Out::~Out() {
  try {
    flush();
  } catch (...) {
    // Destructors must not throw; callers that care call flush() first.
  }
}

void Out::spaces(size_t n) {
  static constexpr std::string_view kSpaces =
      "                                                                ";
  while (n) {
    size_t k = std::min(n, kSpaces.size());
    buf_.append(kSpaces.data(), kSpaces.data() + k);
    n -= k;
  }
}

void Out::pad_left(std::string_view s, size_t width) {
  if (s.size() < width) spaces(width - s.size());
  buf_.append(s.data(), s.data() + s.size());
}

void Out::pad_right(std::string_view s, size_t width) {
  buf_.append(s.data(), s.data() + s.size());
  if (s.size() < width) spaces(width - s.size());
}

void Out::number(uint64_t v, size_t width) {
  fmt::format_int f(v);
  pad_left(std::string_view(f.data(), f.size()), width);
}

void Out::flush() {
  if (buf_.size() == 0) return;
  size_t n = std::fwrite(buf_.data(), 1, buf_.size(), f_);
  bool ok = n == buf_.size();
  buf_.clear();
  if (!ok || std::fflush(f_) != 0)
    throw Error(fmt::format("cannot write the output: {}", std::strerror(errno)));
}

}  // namespace ktrack::analysis
