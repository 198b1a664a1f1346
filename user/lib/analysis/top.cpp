#include "analysis/top.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace ktrack::analysis {

Top::Top(const TopOptions &opt, const Names &names) : opt_(opt), names_(names) {}

void Top::add(const Sample &s) {
  switch (s.kind) {
    case Kind::Entry:
    case Kind::Point:
    case Kind::Exit: {
      // A call is one hit: exits count only for probes that record no
      // entries (r probes), so entry/exit pairs are not counted twice.
      if (s.kind == Kind::Entry) entry_probes_[s.probe_id] = 1;
      if (s.kind == Kind::Exit && entry_probes_.find(s.probe_id)) return;
      Row &r = rows_[s.ip];
      r.probe_id = s.probe_id + 1;
      ++r.window;
      ++r.total;
      ++window_hits_;
      ++total_hits_;
      return;
    }
    case Kind::Lost:
      window_lost_ += s.lost;
      total_lost_ += s.lost;
      window_lost_lines_.add(s);
      return;
    default:
      return;
  }
}

void Top::print(Out &out, uint64_t now_ts, uint64_t window_ns) {
  const Colors &c = opt_.colors;
  double secs = window_ns ? static_cast<double>(window_ns) / 1e9 : 1.0;
  struct Line {
    uint64_t ip;
    Row *r;
    const std::string *name;
  };
  std::vector<Line> order;
  for (auto &[ip, r] : rows_) {
    if (!r.window && opt_.sort != TopOptions::ByTotal) continue;
    func_names_[ip];  // insert first: pointers below stay valid while sorting
    order.push_back(Line{ip, &r, nullptr});
  }
  for (auto &l : order) {
    std::string &n = *func_names_.find(l.ip);
    if (n.empty()) n = names_.func_name(l.ip);
    l.name = &n;
  }
  std::sort(order.begin(), order.end(), [&](const Line &a, const Line &b) {
    switch (opt_.sort) {
      case TopOptions::ByTotal:
        if (a.r->total != b.r->total) return a.r->total > b.r->total;
        break;
      case TopOptions::ByName:
        break;
      default:
        if (a.r->window != b.r->window) return a.r->window > b.r->window;
    }
    return *a.name < *b.name;
  });
  if (opt_.limit && order.size() > opt_.limit) order.resize(opt_.limit);
  ++screens_;
  if (opt_.json) {
    auto &buf = out.buf();
    fmt::format_to(std::back_inserter(buf), "{{\"ts\":{},\"window_ns\":{},\"hits\":{},\"lost\":{},\"rows\":[",
                   now_ts, window_ns, window_hits_, window_lost_);
    bool first = true;
    for (const Line &l : order) {
      const Row *r = l.r;
      buf.append(std::string_view(first ? "{\"func\":" : ",{\"func\":"));
      first = false;
      json_escape(buf, *l.name);
      buf.append(std::string_view(",\"probe\":"));
      json_escape(buf, names_.probe_name(r->probe_id - 1));
      fmt::format_to(std::back_inserter(buf), ",\"hits\":{},\"rate\":{:.1f},\"total\":{}}}", r->window,
                     static_cast<double>(r->window) / secs, r->total);
    }
    buf.append(std::string_view("]}\n"));
  } else {
    if (opt_.clear) out.write("\033[H\033[2J");
    out.print("{}ktrack top - {}  window {}  hits {} ({:.0f}/s)  lost {}{}\n", c.bold, format_ts(now_ts),
              format_duration(window_ns), window_hits_, static_cast<double>(window_hits_) / secs,
              window_lost_, c.reset);
    out.print("{}{:>12} {:>12} {:>12}  {:<32} {}{}\n", c.bold, "RATE/s", "HITS", "TOTAL", "FUNCTION", "PROBE",
              c.reset);
    for (const Line &l : order)
      out.print("{:>12.1f} {:>12} {:>12}  {:<32} {}\n", static_cast<double>(l.r->window) / secs, l.r->window,
                l.r->total, *l.name, names_.probe_name(l.r->probe_id - 1));
    for (const auto &l : window_lost_lines_.lines()) out.print("{}{}{}\n", c.alert, l, c.reset);
    out.print("\n");
  }
  out.flush();
  for (auto &[ip, r] : rows_) r.window = 0;
  window_hits_ = 0;
  window_lost_ = 0;
  window_lost_lines_ = LostSummary{};
}

}  // namespace ktrack::analysis
