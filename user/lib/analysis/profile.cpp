#include "analysis/profile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace ktrack::analysis {

Profile::Profile(const ProfileOptions &opt, const Names &names) : opt_(opt), names_(names) {
  duration_field_ = names.field_id("duration");
}

namespace {

void merge(FuncStats &a, const FuncStats &b) {
  a.hits += b.hits;
  a.timed += b.timed;
  a.total += b.total;
  a.self += b.self;
  a.max = std::max(a.max, b.max);
  a.min = std::min(a.min, b.min);
}

uint64_t pair_key(uint64_t ip, uint64_t caller) {
  uint64_t k = ip * 0x9e3779b97f4a7c15ULL;
  return k ^ (caller + (k << 6) + (k >> 2));
}

}  // namespace

FuncStats *Profile::caller_stats(uint64_t ip, uint64_t caller_ip) {
  // Keyed by a mix of (ip, caller); the exact pair is kept alongside so a
  // mix collision only costs a step to the next key.
  uint64_t k = pair_key(ip, caller_ip);
  while (true) {
    auto &kp = caller_keys_[k];
    if (kp.first == 0 && kp.second == 0) kp = {ip, caller_ip};
    if (kp.first == ip && kp.second == caller_ip) break;
    ++k;
  }
  return &callers_[k];
}

void Profile::hit(uint64_t ip, uint64_t caller_ip) {
  ++funcs_[ip].hits;
  if (opt_.callers) ++caller_stats(ip, caller_ip)->hits;
}

void Profile::timed(uint64_t ip, uint64_t caller_ip, uint64_t dur, uint64_t self) {
  FuncStats *targets[2] = {&funcs_[ip], opt_.callers ? caller_stats(ip, caller_ip) : nullptr};
  for (FuncStats *st : targets) {
    if (!st) continue;
    ++st->timed;
    st->total += dur;
    st->self += self;
    st->max = std::max(st->max, dur);
    st->min = std::min(st->min, dur);
  }
}

void Profile::add(const Sample &s) {
  switch (s.kind) {
    case Kind::Lost:
      lost_.add(s);
      return;
    case Kind::Entry:
      hit(s.ip, s.parent_ip);
      calls_.entry(s);
      return;
    case Kind::Point:
      hit(s.ip, s.parent_ip);
      return;
    case Kind::Exit: {
      Call c;
      int64_t d;
      bool have_d = duration_field_ >= 0 && names_.field_value(s, duration_field_, d) && d >= 0;
      if (calls_.exit(s, c)) {
        // Clock skew (CallTracker::backwards()): no duration to give; the
        // entry already counted the hit.
        if (!have_d && c.exit_ts < c.entry_ts) return;
        uint64_t dur = have_d ? static_cast<uint64_t>(d) : c.duration();
        timed(c.ip, c.parent_ip, dur, dur > c.child_ns ? dur - c.child_ns : 0);
      } else {
        // No entry seen: a hit of its own; timed when the probe measured
        // $duration itself (r probe), with no nesting known.
        hit(s.ip, s.parent_ip);
        if (have_d) timed(s.ip, s.parent_ip, static_cast<uint64_t>(d), static_cast<uint64_t>(d));
      }
      return;
    }
    default:
      return;
  }
}

void Profile::add_totals(uint64_t ip, const FuncStats &st) { merge(funcs_[ip], st); }

std::vector<Profile::Row> Profile::rows() const {
  // Entries still open at the end count as hits without time.
  std::map<std::string, Row> by_name;
  for (const auto &[ip, st] : funcs_) {
    Row &r = by_name[names_.func_name(ip)];
    r.func = names_.func_name(ip);
    merge(r.st, st);
  }
  if (opt_.callers) {
    std::map<std::pair<std::string, std::string>, FuncStats> cm;
    for (const auto &[k, st] : callers_) {
      const auto *kp = caller_keys_.find(k);
      if (!kp) continue;
      merge(cm[{names_.func_name(kp->first), kp->second ? names_.func_name(kp->second) : "?"}], st);
    }
    for (auto &[names, st] : cm) by_name[names.first].callers.emplace_back(names.second, st);
  }
  std::vector<Row> out;
  for (auto &[name, r] : by_name) out.push_back(std::move(r));
  auto key = [this](const FuncStats &s) -> uint64_t {
    switch (opt_.sort) {
      case ProfileOptions::ByHits:
        return s.hits;
      case ProfileOptions::ByAvg:
        return s.timed ? s.total / s.timed : 0;
      case ProfileOptions::ByMax:
        return s.timed ? s.max : 0;
      case ProfileOptions::BySelf:
        return s.self;
      default:
        return s.total;
    }
  };
  if (opt_.sort != ProfileOptions::ByName) {
    std::stable_sort(out.begin(), out.end(),
                     [&](const Row &a, const Row &b) { return key(a.st) > key(b.st); });
  }
  for (auto &r : out)
    std::stable_sort(r.callers.begin(), r.callers.end(),
                     [&](const auto &a, const auto &b) { return key(a.second) > key(b.second); });
  return out;
}

namespace {

std::string us(uint64_t ns) { return fmt::format("{:.3f} us", static_cast<double>(ns) / 1e3); }

}  // namespace

// The kernel's totals: no self time, nothing lost or unpaired to report.
void Profile::print_totals(Out &out, const std::vector<Row> &rows_v) const {
  const Colors &c = opt_.colors;
  out.print("{}  {:<40} {:>10} {:>16} {:>14} {:>14}{}\n", c.bold, "Function", "Hit", "Time", "Avg", "Max",
            c.reset);
  out.print("  {:<40} {:>10} {:>16} {:>14} {:>14}\n", "--------", "---", "----", "---", "---");
  for (const auto &r : rows_v) {
    const FuncStats &s = r.st;
    if (s.timed)
      out.print("  {:<40} {:>10} {:>16} {:>14} {:>14}\n", r.func, s.hits, us(s.total), us(s.total / s.timed),
                us(s.max));
    else
      out.print("  {:<40} {:>10} {:>16} {:>14} {:>14}\n", r.func, s.hits, "-", "-", "-");
  }
  if (rows_v.empty()) out.print("no calls of the profiled functions\n");
  out.flush();
}

void Profile::print(Out &out) {
  auto rows_v = rows();
  if (opt_.limit && rows_v.size() > opt_.limit) rows_v.resize(opt_.limit);
  const Colors &c = opt_.colors;
  if (opt_.json) {
    for (const auto &r : rows_v) {
      auto &buf = out.buf();
      buf.append(std::string_view("{\"func\":"));
      json_escape(buf, r.func);
      const FuncStats &s = r.st;
      fmt::format_to(std::back_inserter(buf),
                     ",\"hits\":{},\"timed\":{},\"total_ns\":{},\"avg_ns\":{},\"max_ns\":{}", s.hits, s.timed,
                     s.total, s.timed ? s.total / s.timed : 0, s.max);
      if (!opt_.kernel_totals)
        fmt::format_to(std::back_inserter(buf), ",\"min_ns\":{},\"self_ns\":{}", s.timed ? s.min : 0, s.self);
      if (opt_.callers) {
        buf.append(std::string_view(",\"callers\":["));
        bool first = true;
        for (const auto &[caller, cs] : r.callers) {
          if (!first) buf.push_back(',');
          first = false;
          buf.append(std::string_view("{\"caller\":"));
          json_escape(buf, caller);
          fmt::format_to(std::back_inserter(buf), ",\"hits\":{},\"total_ns\":{}}}", cs.hits, cs.total);
        }
        buf.push_back(']');
      }
      buf.append(std::string_view("}\n"));
      out.maybe_flush();
    }
    lost_.print(out, c, true);
    if (calls_.backwards())
      fmt::format_to(std::back_inserter(out.buf()), "{{\"calls_untimed_clock_skew\":{}}}\n",
                     calls_.backwards());
    out.flush();
    return;
  }
  if (opt_.kernel_totals) {
    print_totals(out, rows_v);
    return;
  }
  out.print("{}  {:<40} {:>10} {:>16} {:>14} {:>14} {:>16}{}\n", c.bold, "Function", "Hit", "Time", "Avg",
            "Max", "Self", c.reset);
  out.print("  {:<40} {:>10} {:>16} {:>14} {:>14} {:>16}\n", "--------", "---", "----", "---", "---", "----");
  for (const auto &r : rows_v) {
    const FuncStats &s = r.st;
    if (s.timed)
      out.print("  {:<40} {:>10} {:>16} {:>14} {:>14} {:>16}\n", r.func, s.hits, us(s.total),
                us(s.total / s.timed), us(s.max), us(s.self));
    else
      out.print("  {:<40} {:>10} {:>16} {:>14} {:>14} {:>16}\n", r.func, s.hits, "-", "-", "-", "-");
    for (const auto &[caller, cs] : r.callers)
      out.print("  {}  <- {:<35} {:>10} {:>16}{}\n", c.dim, caller, cs.hits, cs.timed ? us(cs.total) : "-",
                c.reset);
  }
  if (rows_v.empty()) out.print("no probe records in the selection\n");
  lost_.print(out, c, false, ": totals may be low");
  if (calls_.unmatched_entries() || calls_.orphan_exits())
    out.print("{}{} entries without exit and {} exits without entry were counted as hits without time{}\n",
              c.dim, calls_.unmatched_entries(), calls_.orphan_exits(), c.reset);
  if (calls_.backwards())
    out.print(
        "{}{} calls ended on a CPU whose clock read earlier than their entry's (the task moved CPU "
        "and the per-CPU local clock is not synchronized): without a $duration field they count as "
        "hits without time; record with --clock mono to time them{}\n",
        c.dim, calls_.backwards(), c.reset);
  out.flush();
}

}  // namespace ktrack::analysis
