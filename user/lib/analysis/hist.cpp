#include "analysis/hist.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>

#include "util/error.hpp"

namespace ktrack::analysis {

// ---- Distribution -----------------------------------------------------------

size_t Distribution::index_of(uint64_t v) {
  if (v < 128) return static_cast<size_t>(v);
  unsigned e = 63u - static_cast<unsigned>(std::countl_zero(v));  // >= 7
  size_t sub = static_cast<size_t>((v >> (e - 6)) & 63);
  return 128 + (e - 7) * 64 + sub;
}

uint64_t Distribution::lower_bound_of(size_t idx) {
  if (idx < 128) return idx;
  size_t e = (idx - 128) / 64 + 7, sub = (idx - 128) % 64;
  return (64 + sub) << (e - 6);
}

void Distribution::add(int64_t v) {
  ++count_;
  sum_ += v;
  min_ = std::min(min_, v);
  max_ = std::max(max_, v);
  uint64_t mag = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  auto &vec = v < 0 ? neg_ : pos_;
  size_t idx = index_of(mag);
  if (idx >= vec.size()) vec.resize(std::max(idx + 1, vec.size() * 2), 0);
  ++vec[idx];
  if (count_ <= kExact) {
    exact_.push_back(v);
  } else if (!exact_.empty()) {
    exact_.clear();
    exact_.shrink_to_fit();
  }
}

void Distribution::merge(const Distribution &o) {
  if (!o.count_) return;
  count_ += o.count_;
  sum_ += o.sum_;
  min_ = std::min(min_, o.min_);
  max_ = std::max(max_, o.max_);
  if (pos_.size() < o.pos_.size()) pos_.resize(o.pos_.size(), 0);
  if (neg_.size() < o.neg_.size()) neg_.resize(o.neg_.size(), 0);
  for (size_t i = 0; i < o.pos_.size(); ++i) pos_[i] += o.pos_[i];
  for (size_t i = 0; i < o.neg_.size(); ++i) neg_[i] += o.neg_[i];
  if (count_ <= kExact && exact_.size() + o.exact_.size() == count_) {
    exact_.insert(exact_.end(), o.exact_.begin(), o.exact_.end());
  } else {
    exact_.clear();
    exact_.shrink_to_fit();
  }
}

int64_t Distribution::percentile(double p) const {
  if (!count_) return 0;
  auto rank = static_cast<uint64_t>(std::ceil(p / 100.0 * static_cast<double>(count_)));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  if (exact_.size() == count_) {
    std::vector<int64_t> v(exact_);
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(rank - 1), v.end());
    return v[rank - 1];
  }
  uint64_t seen = 0;
  int64_t v = max_;
  bool found = false;
  // Negative values, most negative first.  A bucket of magnitudes
  // [lo, hi) holds values (-hi, -lo]: report its most negative end.
  for (size_t i = neg_.size(); i-- > 0 && !found;) {
    seen += neg_[i];
    if (seen >= rank) {
      uint64_t lo = lower_bound_of(i), hi = i + 1 < 128 ? lo + 1 : lower_bound_of(i + 1);
      v = -static_cast<int64_t>(hi - 1);
      found = true;
    }
  }
  for (size_t i = 0; i < pos_.size() && !found; ++i) {
    seen += pos_[i];
    if (seen >= rank) {
      v = static_cast<int64_t>(lower_bound_of(i));
      found = true;
    }
  }
  return std::clamp(v, min_, max_);
}

std::vector<uint64_t> Distribution::log2_buckets(uint64_t &negative) const {
  negative = 0;
  for (uint64_t c : neg_) negative += c;
  std::vector<uint64_t> out;
  for (size_t i = 0; i < pos_.size(); ++i) {
    if (!pos_[i]) continue;
    uint64_t lo = lower_bound_of(i);
    size_t b = lo == 0 ? 0 : static_cast<size_t>(64 - std::countl_zero(lo));
    if (b >= out.size()) out.resize(b + 1, 0);
    out[b] += pos_[i];
  }
  return out;
}

// ---- Hist -------------------------------------------------------------------

Hist::Hist(const HistOptions &opt, const Names &names) : opt_(opt), names_(names) {
  value_ = resolve_field(names, opt.value);
  value_is_duration_ = value_.builtin == FieldRef::Duration;
  if (value_.is_string())
    throw UsageError(fmt::format("'{}' is not numeric: hist needs a numeric field or $duration", opt.value));
  if (!opt.key.empty()) {
    key_ = resolve_field(names, opt.key);
    have_key_ = true;
  }
  if (opt.linear) {
    if (opt.lin_step <= 0 || opt.lin_max <= opt.lin_min)
      throw UsageError("a linear histogram needs MIN < MAX and STEP > 0 (--linear MIN,MAX,STEP)");
    uint64_t n =
        (static_cast<uint64_t>(opt.lin_max - opt.lin_min) + static_cast<uint64_t>(opt.lin_step) - 1) /
        static_cast<uint64_t>(opt.lin_step);
    if (n > 10000) throw UsageError("a linear histogram has at most 10000 buckets: raise STEP");
    nbins_ = static_cast<size_t>(n);
  }
}

bool Hist::key_of(const Sample &s, uint64_t &key) {
  if (!have_key_) {
    key = 0;
    return true;
  }
  switch (key_.builtin) {
    case FieldRef::Comm: {
      if (!s.comm.empty()) {
        key = interned_.intern(s.comm);
        return true;
      }
      uint32_t &id = pid_comm_[s.pid];
      if (!id) {
        std::string c = names_.comm(s.pid);
        id = interned_.intern(c.empty() ? fmt::format("pid {}", s.pid) : c) + 1;
      }
      key = id - 1;
      return true;
    }
    case FieldRef::Probe:
      if (s.kind != Kind::Entry && s.kind != Kind::Exit && s.kind != Kind::Point) return false;
      key = s.probe_id;
      return true;
    case FieldRef::Payload: {
      int64_t v;
      if (names_.field_value(s, key_.id, v)) {
        key = static_cast<uint64_t>(v);
        return true;
      }
      if (names_.field_string(s, key_.id, scratch_)) {
        key = interned_.intern(scratch_) | (1ULL << 63);
        return true;
      }
      return false;
    }
    default: {
      int64_t v;
      if (!field_number(key_, s, names_, v)) return false;
      key = static_cast<uint64_t>(v);
      return true;
    }
  }
}

void Hist::add_value(uint64_t key, int64_t v, uint64_t ts) {
  Group &g = groups_[key];
  g.d.add(v);
  ++values_;
  if (opt_.keep_points) {
    if (points_ < kMaxPoints) {
      g.points.emplace_back(ts, v);
      ++points_;
    } else {
      points_truncated_ = true;
    }
  }
  if (nbins_) {
    if (g.lin.empty()) g.lin.assign(nbins_ + 2, 0);
    size_t b;
    if (v < opt_.lin_min)
      b = 0;
    else if (v >= opt_.lin_max)
      b = nbins_ + 1;
    else
      b = 1 + static_cast<size_t>((static_cast<uint64_t>(v - opt_.lin_min)) /
                                  static_cast<uint64_t>(opt_.lin_step));
    ++g.lin[b];
  }
}

void Hist::add(const Sample &s) {
  if (s.kind == Kind::Lost) {
    lost_.add(s);
    return;
  }
  int64_t v;
  if (value_is_duration_) {
    if (s.kind == Kind::Entry) {
      calls_.entry(s);
      return;
    }
    if (s.kind != Kind::Exit) return;
    Call c;
    bool paired = calls_.exit(s, c);
    if (value_.id >= 0 && names_.field_value(s, value_.id, v)) {
      // The probe measured it (r probe with $duration): trust that.
    } else if (paired) {
      v = static_cast<int64_t>(c.duration());
    } else {
      ++unmeasured_;
      return;
    }
  } else {
    if (s.kind == Kind::Stack || s.kind == Kind::Marker) return;
    if (!field_number(value_, s, names_, v)) return;
  }
  uint64_t key;
  if (!key_of(s, key)) return;
  add_value(key, v, s.ts);
}

std::string Hist::key_label(uint64_t key) const {
  if (!have_key_) return "";
  switch (key_.builtin) {
    case FieldRef::Comm:
      return interned_.str(static_cast<uint32_t>(key));
    case FieldRef::Probe:
      return names_.probe_name(static_cast<uint32_t>(key));
    case FieldRef::Func:
    case FieldRef::Caller:
      return names_.func_name(key);
    case FieldRef::Ip:
    case FieldRef::ParentIp:
      return fmt::format("{:#x}", key);
    case FieldRef::Payload:
      if (key >> 63) {
        uint64_t id = key & ~(1ULL << 63);
        if (id < interned_.size()) return interned_.str(static_cast<uint32_t>(id));
      }
      return std::to_string(static_cast<int64_t>(key));
    default:
      return std::to_string(static_cast<int64_t>(key));
  }
}

namespace {

std::string si(uint64_t v) {
  // bpftrace-style power-of-two labels: 1K = 1024.
  static const char *units[] = {"", "K", "M", "G", "T", "P", "E"};
  int u = 0;
  while (v >= 1024 && v % 1024 == 0 && u < 6) {
    v /= 1024;
    ++u;
  }
  return fmt::format("{}{}", v, units[u]);
}

void bar_line(Out &out, const Colors &c, const std::string &label, uint64_t count, uint64_t most) {
  constexpr int kWidth = 52;
  int n = most ? static_cast<int>((count * kWidth + most - 1) / most) : 0;
  if (count == 0) n = 0;
  out.print("{:<20} {:>8} |{}{}{}{}|\n", label, count, c.bar, std::string(static_cast<size_t>(n), '@'),
            c.reset, std::string(static_cast<size_t>(kWidth - n), ' '));
}

struct Bucket {
  std::string label;
  bool has_low = false, has_high = false;
  int64_t low = 0, high = 0;
  uint64_t count = 0;
};

}  // namespace

void print_log2_bars(Out &out, const Colors &c, const Distribution &d, std::string_view title) {
  uint64_t neg;
  auto lb = d.log2_buckets(neg);
  std::vector<std::pair<std::string, uint64_t>> rows;
  if (neg) rows.emplace_back("(..., 0)", neg);
  for (size_t i = 0; i < lb.size(); ++i) {
    std::string label = i == 0 ? "[0]"
                        : i == 1
                            ? "[1]"
                            : fmt::format("[{}, {})", si(1ULL << (i - 1)), i < 64 ? si(1ULL << i) : "...");
    rows.emplace_back(std::move(label), lb[i]);
  }
  size_t first = 0, last = rows.size();
  while (first < rows.size() && !rows[first].second) ++first;
  while (last > first && !rows[last - 1].second) --last;
  uint64_t most = 0;
  for (size_t i = first; i < last; ++i) most = std::max(most, rows[i].second);
  out.print("{}@{}{}:\n", c.bold, title, c.reset);
  for (size_t i = first; i < last; ++i) bar_line(out, c, rows[i].first, rows[i].second, most);
}

void json_log2_buckets(fmt::memory_buffer &buf, const Distribution &d) {
  uint64_t neg;
  auto lb = d.log2_buckets(neg);
  auto app = std::back_inserter(buf);
  buf.push_back('[');
  bool first = true;
  for (size_t i = 0; i < lb.size(); ++i) {
    if (!lb[i]) continue;
    uint64_t low = i == 0 ? 0 : 1ULL << (i - 1), high = i == 0 ? 1 : 1ULL << i;
    fmt::format_to(app, "{}{{\"low_us\":{},\"high_us\":{},\"count\":{}}}", first ? "" : ",", low, high,
                   lb[i]);
    first = false;
  }
  buf.push_back(']');
}

std::vector<HistGroup> Hist::groups() const {
  // Merge groups whose labels coincide (a function probed at two offsets).
  std::map<std::string, HistGroup> merged;
  for (const auto &[key, g] : groups_) {
    std::string label = key_label(key);
    HistGroup &m = merged[label];
    m.label = label;
    m.d.merge(g.d);
    m.points.insert(m.points.end(), g.points.begin(), g.points.end());
  }
  std::vector<HistGroup> out;
  for (auto &[label, g] : merged) {
    // Two keys of one label interleave in time.
    std::stable_sort(g.points.begin(), g.points.end(),
                     [](const auto &a, const auto &b) { return a.first < b.first; });
    out.push_back(std::move(g));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const HistGroup &a, const HistGroup &b) { return a.d.count() > b.d.count(); });
  return out;
}

void Hist::print(Out &out) {
  // Merge groups whose labels coincide (a function probed at two offsets).
  std::map<std::string, Group> merged;
  for (auto &[key, g] : groups_) {
    Group &m = merged[key_label(key)];
    m.d.merge(g.d);
    if (!g.lin.empty()) {
      if (m.lin.empty()) m.lin.assign(g.lin.size(), 0);
      for (size_t i = 0; i < g.lin.size(); ++i) m.lin[i] += g.lin[i];
    }
  }
  std::vector<std::pair<const std::string *, const Group *>> order;
  for (auto &[label, g] : merged) order.emplace_back(&label, &g);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto &a, const auto &b) { return a.second->d.count() > b.second->d.count(); });
  const Colors &c = opt_.colors;
  std::string unit = value_is_duration_ ? " (ns)" : "";
  if (!opt_.json && order.empty()) out.print("no values of {} in the selected records\n", opt_.value);
  for (auto &[label, g] : order) {
    std::vector<Bucket> buckets;
    if (nbins_) {
      for (size_t i = 0; i < g->lin.size(); ++i) {
        Bucket b;
        b.count = g->lin[i];
        if (i == 0) {
          b.has_high = true;
          b.high = opt_.lin_min;
          b.label = fmt::format("(..., {})", opt_.lin_min);
        } else if (i == nbins_ + 1) {
          b.has_low = true;
          b.low = opt_.lin_max;
          b.label = fmt::format("[{}, ...)", opt_.lin_max);
        } else {
          b.has_low = b.has_high = true;
          b.low = opt_.lin_min + static_cast<int64_t>(i - 1) * opt_.lin_step;
          b.high = std::min(b.low + opt_.lin_step, opt_.lin_max);
          b.label = fmt::format("[{}, {})", b.low, b.high);
        }
        buckets.push_back(std::move(b));
      }
    } else {
      uint64_t neg;
      auto lb = g->d.log2_buckets(neg);
      Bucket nb;
      nb.count = neg;
      nb.has_high = true;
      nb.label = "(..., 0)";
      buckets.push_back(nb);
      for (size_t i = 0; i < lb.size(); ++i) {
        Bucket b;
        b.count = lb[i];
        b.has_low = b.has_high = true;
        if (i == 0) {
          b.low = 0;
          b.high = 1;
          b.label = "[0]";
        } else if (i == 1) {
          b.low = 1;
          b.high = 2;
          b.label = "[1]";
        } else {
          b.low = static_cast<int64_t>(1ULL << (i - 1));
          b.high = i < 64 ? static_cast<int64_t>((1ULL << i) - 1) + 1 : INT64_MAX;
          b.label = fmt::format("[{}, {})", si(1ULL << (i - 1)), i < 64 ? si(1ULL << i) : "...");
        }
        buckets.push_back(std::move(b));
      }
    }
    // Only the range from the first to the last non-empty bucket.
    size_t first = 0, last = buckets.size();
    while (first < buckets.size() && !buckets[first].count) ++first;
    while (last > first && !buckets[last - 1].count) --last;
    const Distribution &d = g->d;
    if (opt_.json) {
      auto &buf = out.buf();
      buf.append(std::string_view("{\"key\":"));
      json_escape(buf, *label);
      fmt::format_to(
          std::back_inserter(buf),
          ",\"value\":\"{}\",\"count\":{},\"min\":{},\"avg\":{:.3f},\"p50\":{},\"p90\":{},\"p99\":{},"
          "\"max\":{},\"buckets\":[",
          opt_.value, d.count(), d.min(), d.avg(), d.percentile(50), d.percentile(90), d.percentile(99),
          d.max());
      for (size_t i = first; i < last; ++i) {
        const Bucket &b = buckets[i];
        fmt::format_to(std::back_inserter(buf), "{}{{\"label\":\"{}\",\"low\":{},\"high\":{},\"count\":{}}}",
                       i == first ? "" : ",", b.label, b.has_low ? std::to_string(b.low) : "null",
                       b.has_high ? std::to_string(b.high) : "null", b.count);
      }
      buf.append(std::string_view("]}\n"));
      out.maybe_flush();
      continue;
    }
    if (have_key_)
      out.print("{}@[{}]{}: {}{}\n", c.bold, *label, c.reset, opt_.value, unit);
    else
      out.print("{}@{}{}:\n", c.bold, opt_.value, c.reset);
    out.print("count {}, min {}, avg {:.1f}, p50 {}, p90 {}, p99 {}, max {}\n", d.count(), d.min(), d.avg(),
              d.percentile(50), d.percentile(90), d.percentile(99), d.max());
    uint64_t most = 0;
    for (size_t i = first; i < last; ++i) most = std::max(most, buckets[i].count);
    for (size_t i = first; i < last; ++i) bar_line(out, c, buckets[i].label, buckets[i].count, most);
    out.print("\n");
  }
  lost_.print(out, c, opt_.json);
  if (!opt_.json && (calls_.unmatched_entries() || unmeasured_))
    out.print("{}{} entries without exit and {} exits without entry were not measured{}\n", c.dim,
              calls_.unmatched_entries(), unmeasured_, c.reset);
  out.flush();
}

}  // namespace ktrack::analysis
