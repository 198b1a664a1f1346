#include "analysis/export_html.hpp"

#include <fmt/format.h>
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <memory>

#include <uapi/ktrack.h>

#include "util/error.hpp"

namespace ktrack::analysis {

namespace {

StackOptions folded_options() {
  StackOptions o;
  o.folded = true;
  return o;
}

HistOptions duration_by(const char *key) {
  HistOptions o;
  o.value = "$duration";
  o.key = key;
  o.json = true;
  o.keep_points = true;
  return o;
}

// What a view prints through an Out, as a string.
template <typename F>
std::string printed(F &&print) {
  char *data = nullptr;
  size_t size = 0;
  FILE *f = open_memstream(&data, &size);
  if (!f) throw SysError("open_memstream", errno);
  {
    Out out(f);
    print(out);
    out.flush();
  }
  std::fclose(f);
  std::string s(data, size);
  ::free(data);
  return s;
}

void str(fmt::memory_buffer &b, std::string_view s) { json_escape(b, s); }

}  // namespace

HtmlExport::HtmlExport(const Names &names, HtmlHeader header)
    : names_(names),
      header_(std::move(header)),
      stacks_(folded_options(), names),
      hist_func_(duration_by("func"), names),
      hist_probe_(duration_by("probe"), names) {}

uint32_t HtmlExport::Flame::child(uint32_t parent, uint32_t name) {
  uint32_t &slot = child_of[(static_cast<uint64_t>(parent) << 32) | name];
  if (slot) return slot - 1;
  if (nodes.size() >= kMaxFlameNodes) {
    // Bounded: deeper distinct paths add to their deepest known frame.
    truncated = true;
    return parent;
  }
  uint32_t id = static_cast<uint32_t>(nodes.size());
  Node n;
  n.name = name;
  nodes.push_back(std::move(n));
  nodes[parent].children.push_back(id);
  slot = id + 1;
  return id;
}

uint32_t HtmlExport::name_id(const std::string &name) {
  auto [it, inserted] = string_ids_.try_emplace(name, static_cast<uint32_t>(strings_.size()));
  if (inserted) strings_.push_back(name);
  return it->second;
}

uint32_t HtmlExport::func_id(uint64_t ip) {
  uint32_t &id = func_ids_[ip];
  if (!id) id = name_id(names_.func_name(ip)) + 1;
  return id - 1;
}

void HtmlExport::add_call(const Sample &s) {
  if (s.kind == Kind::Entry) {
    calls_.entry(s);
    return;
  }
  Call c;
  if (!calls_.exit(s, c)) return;
  // The call's path: the calls still open around it, then itself.
  path_.clear();
  if (const auto *open = calls_.open_calls(s))
    for (const Call &o : *open) path_.push_back(func_id(o.ip));
  path_.push_back(func_id(c.ip));
  uint32_t node = 0;
  for (uint32_t name : path_) node = call_flame_.child(node, name);
  call_flame_.nodes[node].v += c.duration();
  call_flame_.nodes[node].k += 1;
}

void HtmlExport::add_to_timeline(const Sample &s) {
  uint64_t rel = s.ts > first_ts_ ? s.ts - first_ts_ : 0;
  uint64_t bin = rel / bin_ns_;
  while (bin >= kMaxBins) {
    // Twice as wide bins: merge pairs.
    for (auto &cpu : cpu_bins_) {
      for (size_t i = 0; i < cpu.size(); ++i) {
        uint64_t v = cpu[i];
        cpu[i] = 0;
        cpu[i / 2] += v;
      }
    }
    bin_ns_ *= 2;
    bins_ = (bins_ + 1) / 2;
    bin = rel / bin_ns_;
  }
  if (s.cpu >= cpu_bins_.size()) cpu_bins_.resize(s.cpu + 1u);
  auto &cpu = cpu_bins_[s.cpu];
  if (cpu.size() < kMaxBins) cpu.resize(kMaxBins, 0);
  ++cpu[bin];
  bins_ = std::max(bins_, bin + 1);
}

void HtmlExport::add(const Sample &s) {
  if (!any_) {
    first_ts_ = last_ts_ = s.ts;
    any_ = true;
  }
  first_ts_ = std::min(first_ts_, s.ts);
  last_ts_ = std::max(last_ts_, s.ts);
  ++records_;
  add_to_timeline(s);
  stacks_.add(s);
  hist_func_.add(s);
  hist_probe_.add(s);
  switch (s.kind) {
    case Kind::Entry:
      ++n_entry_;
      add_call(s);
      break;
    case Kind::Exit:
      ++n_exit_;
      add_call(s);
      break;
    case Kind::Point:
      ++n_point_;
      break;
    case Kind::Stack:
      ++n_stack_;
      break;
    case Kind::Marker:
      ++n_marker_;
      if (markers_.size() < kMaxMarkers) {
        std::string comm(s.comm);
        if (comm.empty()) comm = names_.comm(s.pid);
        markers_.push_back(Marker{s.ts, s.cpu, s.pid, std::move(comm), std::string(s.text)});
      } else {
        ++markers_dropped_;
      }
      break;
    case Kind::Lost:
      ++n_lostrec_;
      lost_sum_.add(s);
      if (s.cpu >= lost_per_cpu_.size()) lost_per_cpu_.resize(s.cpu + 1u, 0);
      lost_per_cpu_[s.cpu] += s.lost;
      lost_.push_back(Lost{s.ts, s.cpu, s.lost, s.lost_first, s.lost_last});
      break;
    case Kind::Other:
      ++n_other_;
      if (s.type >= KTRACK_REC_OBJ_HIT && s.type <= KTRACK_REC_OBJ_UNTRACK) saw_objects_ = true;
      break;
  }
}

void HtmlExport::parse_folded(const std::string &folded) {
  // "root;...;leaf count" lines, exactly as 'stack --folded' prints them.
  size_t pos = 0;
  while (pos < folded.size()) {
    size_t eol = folded.find('\n', pos);
    if (eol == std::string::npos) eol = folded.size();
    std::string_view line(folded.data() + pos, eol - pos);
    pos = eol + 1;
    size_t sp = line.rfind(' ');
    // Its lost-record lines: the header and the timeline show losses.
    if (sp == std::string_view::npos || line.rfind("[lost", 0) == 0) continue;
    uint64_t count = std::strtoull(std::string(line.substr(sp + 1)).c_str(), nullptr, 10);
    std::string_view frames = line.substr(0, sp);
    uint32_t node = 0;
    stack_flame_.nodes[0].v += count;
    stack_flame_.nodes[0].k += count;
    while (!frames.empty()) {
      size_t semi = frames.find(';');
      std::string_view frame = frames.substr(0, semi);
      node = stack_flame_.child(node, name_id(std::string(frame)));
      stack_flame_.nodes[node].v += count;
      stack_flame_.nodes[node].k += count;
      frames = semi == std::string_view::npos ? std::string_view() : frames.substr(semi + 1);
    }
  }
}

void HtmlExport::write_node(fmt::memory_buffer &b, const Flame &f, uint32_t idx, uint64_t &v_out) {
  // Iterative would need an explicit stack; call paths are at most
  // CallTracker::kMaxDepth deep and stacks 127 frames: recursion is bounded.
  const Node &n = f.nodes[idx];
  fmt::memory_buffer kids;
  uint64_t sum = 0, hits = n.k;
  bool first = true;
  for (uint32_t c : n.children) {
    if (!first) kids.push_back(',');
    first = false;
    uint64_t cv = 0;
    write_node(kids, f, c, cv);
    sum += cv;
  }
  uint64_t v = std::max(n.v, sum);
  if (idx == 0 && hits == 0)
    for (uint32_t c : n.children) hits += f.nodes[c].k;
  fmt::format_to(fmt::appender(b), "{{\"n\":{},\"v\":{},\"k\":{},\"c\":[", n.name, v, hits);
  b.append(kids.data(), kids.data() + kids.size());
  b.append(std::string_view("]}"));
  v_out = v;
}

void HtmlExport::write_hist(fmt::memory_buffer &b, fmt::memory_buffer &scatter, Hist &h, const char *group) {
  // The groups as 'hist --json' prints them (lost-record lines dropped).
  std::string lines = printed([&](Out &o) { h.print(o); });
  fmt::format_to(fmt::appender(b), "\"{}\":[", group);
  bool first = true;
  size_t pos = 0;
  while (pos < lines.size()) {
    size_t eol = lines.find('\n', pos);
    if (eol == std::string::npos) eol = lines.size();
    std::string_view line(lines.data() + pos, eol - pos);
    pos = eol + 1;
    if (line.rfind("{\"key\":", 0) != 0) continue;
    if (!first) b.push_back(',');
    first = false;
    b.append(line);
  }
  b.push_back(']');

  auto groups = h.groups();
  fmt::format_to(fmt::appender(b), ",\"{}_linear\":{{", group);
  first = true;
  for (const HistGroup &g : groups) {
    if (!g.d.count()) continue;
    if (!first) b.push_back(',');
    first = false;
    str(b, g.label);
    b.append(std::string_view(":["));
    // In unsigned arithmetic: a span of the whole int64 range wraps to 0.
    int64_t lo = g.d.min();
    uint64_t span = static_cast<uint64_t>(g.d.max()) - static_cast<uint64_t>(lo) + 1;
    size_t n = span == 0 ? kLinearBins : static_cast<size_t>(std::min<uint64_t>(kLinearBins, span));
    uint64_t step = span == 0 ? (UINT64_MAX / kLinearBins) + 1 : (span - 1) / n + 1;
    std::vector<uint64_t> bins(n, 0);
    for (const auto &p : g.points) {
      size_t i = static_cast<size_t>((static_cast<uint64_t>(p.second) - static_cast<uint64_t>(lo)) / step);
      ++bins[std::min(i, n - 1)];
    }
    for (size_t i = 0; i < n; ++i) {
      uint64_t off = i * step;
      auto low = static_cast<int64_t>(static_cast<uint64_t>(lo) + off);
      // The last bin's end may pass INT64_MAX: written as an unsigned sum.
      __int128 high = static_cast<__int128>(lo) + static_cast<__int128>(off) + static_cast<__int128>(step);
      std::string hs = high > INT64_MAX ? std::to_string(static_cast<uint64_t>(high))
                                        : std::to_string(static_cast<int64_t>(high));
      fmt::format_to(fmt::appender(b), "{}{{\"label\":\"[{}, {})\",\"low\":{},\"high\":{},\"count\":{}}}",
                     i ? "," : "", low, hs, low, hs, bins[i]);
    }
    b.push_back(']');
  }
  b.push_back('}');

  fmt::format_to(fmt::appender(scatter), "\"{}\":{{", group);
  first = true;
  for (const HistGroup &g : groups) {
    if (!g.d.count()) continue;
    if (!first) scatter.push_back(',');
    first = false;
    str(scatter, g.label);
    fmt::format_to(fmt::appender(scatter), ":{{\"total\":{},\"points\":[", g.d.count());
    size_t n = g.points.size();
    size_t stride = std::max<size_t>(1, (n + kMaxScatter - 1) / kMaxScatter);
    for (size_t i = 0; i < n; i += stride) {
      const auto &p = g.points[i];
      fmt::format_to(fmt::appender(scatter), "{}[{},{}]", i ? "," : "",
                     p.first > first_ts_ ? p.first - first_ts_ : 0, p.second);
    }
    scatter.append(std::string_view("]}"));
  }
  scatter.push_back('}');
}

std::string HtmlExport::data_json() {
  if (!folded_) {
    parse_folded(printed([&](Out &o) { stacks_.print(o); }));
    folded_ = true;
  }
  fmt::memory_buffer b;
  auto o = fmt::appender(b);
  fmt::format_to(o, "{{\"version\":1,\"generator\":\"ktrackctl {}\",\"header\":{{\"file\":", KTRACK_VERSION);
  str(b, header_.file);
  b.append(std::string_view(",\"host\":"));
  str(b, header_.host);
  b.append(std::string_view(",\"kernel\":"));
  str(b, header_.kernel);
  fmt::format_to(o, ",\"cpus\":{},\"clock\":", header_.cpus);
  str(b, header_.clock);
  b.append(std::string_view(",\"session\":"));
  str(b, header_.session);
  b.append(std::string_view(",\"probes\":["));
  for (size_t i = 0; i < header_.probes.size(); ++i) {
    if (i) b.push_back(',');
    str(b, header_.probes[i]);
  }
  fmt::format_to(
      o,
      "],\"first_ts\":{},\"last_ts\":{},\"duration_ns\":{},\"records\":{},\"counts\":{{\"entry\":{},"
      "\"exit\":{},\"point\":{},\"stack\":{},\"marker\":{},\"lost_markers\":{},\"other\":{}}},"
      "\"lost\":{},\"lost_per_cpu\":[",
      first_ts_, last_ts_, last_ts_ - first_ts_, records_, n_entry_, n_exit_, n_point_, n_stack_, n_marker_,
      n_lostrec_, n_other_, lost_sum_.total());
  bool first = true;
  for (size_t c = 0; c < lost_per_cpu_.size(); ++c) {
    if (!lost_per_cpu_[c]) continue;
    fmt::format_to(o, "{}{{\"cpu\":{},\"lost\":{}}}", first ? "" : ",", c, lost_per_cpu_[c]);
    first = false;
  }
  fmt::format_to(o, "],\"unmatched_entries\":{},\"orphan_exits\":{},\"notes\":[", calls_.unmatched_entries(),
                 calls_.orphan_exits());
  std::vector<std::string> notes;
  notes.push_back(fmt::format(
      "Timeline: records counted per CPU in {} bins of {} ns; every lost-record marker is drawn{}.", bins_,
      bin_ns_, lost_.size() > kMaxLostMarkers ? " (neighbours on a CPU merged, counts summed)" : ""));
  notes.push_back(fmt::format(
      "Latency over time: at most {} points per group, evenly strided over its values in time order.",
      kMaxScatter));
  if (hist_func_.points_truncated() || hist_probe_.points_truncated())
    notes.push_back(
        fmt::format("Linear bins and latency points: the first {} durations only.", Hist::kMaxPoints));
  if (markers_dropped_)
    notes.push_back(
        fmt::format("Markers: the first {} are shown, {} more are not.", kMaxMarkers, markers_dropped_));
  if (stack_flame_.truncated || call_flame_.truncated)
    notes.push_back(
        fmt::format("Flame graph: at most {} frames; deeper distinct paths count in their deepest "
                    "shown frame.",
                    kMaxFlameNodes));
  for (size_t i = 0; i < notes.size(); ++i) {
    if (i) b.push_back(',');
    str(b, notes[i]);
  }
  b.append(std::string_view("]},"));

  // Histograms first: their labels are named before the string table is
  // written.
  fmt::memory_buffer h, scatter;
  h.append(std::string_view("\"hist\":{"));
  scatter.append(std::string_view("\"scatter\":{"));
  write_hist(h, scatter, hist_func_, "func");
  h.push_back(',');
  scatter.push_back(',');
  write_hist(h, scatter, hist_probe_, "probe");
  h.push_back('}');
  scatter.push_back('}');

  fmt::memory_buffer flame;
  flame.append(std::string_view("\"flame\":{\"stacks\":"));
  uint64_t v = 0;
  if (stack_flame_.empty())
    flame.append(std::string_view("null"));
  else
    write_node(flame, stack_flame_, 0, v);
  flame.append(std::string_view(",\"calls\":"));
  if (call_flame_.empty())
    flame.append(std::string_view("null"));
  else
    write_node(flame, call_flame_, 0, v);
  flame.push_back('}');

  b.append(std::string_view("\"strings\":["));
  for (size_t i = 0; i < strings_.size(); ++i) {
    if (i) b.push_back(',');
    str(b, strings_[i]);
  }
  b.append(std::string_view("],"));
  b.append(flame.data(), flame.data() + flame.size());
  b.push_back(',');

  b.append(h.data(), h.data() + h.size());
  b.push_back(',');
  b.append(scatter.data(), scatter.data() + scatter.size());
  b.push_back(',');

  // Timeline.
  fmt::format_to(o, "\"timeline\":{{\"start\":{},\"bin_ns\":{},\"bins\":{},\"cpus\":[", first_ts_, bin_ns_,
                 bins_);
  first = true;
  for (size_t c = 0; c < cpu_bins_.size(); ++c) {
    if (cpu_bins_[c].empty()) continue;
    fmt::format_to(o, "{}{{\"cpu\":{},\"counts\":[", first ? "" : ",", c);
    first = false;
    for (uint64_t i = 0; i < bins_; ++i) fmt::format_to(o, "{}{}", i ? "," : "", cpu_bins_[c][i]);
    b.append(std::string_view("]}"));
  }
  b.append(std::string_view("],\"lost\":["));
  std::vector<Lost> lost = lost_;
  // Too many to draw: one marker per CPU and time slot (slots twice as
  // wide until they fit), counts summed: no loss goes unshown.
  for (uint64_t slot = bin_ns_; lost.size() > kMaxLostMarkers; slot *= 2) {
    std::vector<Lost> merged;
    auto key = [&](const Lost &l) { return std::make_pair(l.cpu, (l.ts - first_ts_) / slot); };
    std::stable_sort(lost.begin(), lost.end(), [&](const Lost &a, const Lost &z) { return key(a) < key(z); });
    for (const Lost &l : lost) {
      if (!merged.empty() && key(merged.back()) == key(l)) {
        merged.back().count += l.count;
        merged.back().first = std::min(merged.back().first, l.first);
        merged.back().last = std::max(merged.back().last, l.last);
      } else {
        merged.push_back(l);
      }
    }
    lost = std::move(merged);
  }
  for (size_t i = 0; i < lost.size(); ++i)
    fmt::format_to(o, "{}{{\"ts\":{},\"cpu\":{},\"count\":{},\"first\":{},\"last\":{}}}", i ? "," : "",
                   lost[i].ts, lost[i].cpu, lost[i].count, lost[i].first, lost[i].last);
  b.append(std::string_view("],\"markers\":["));
  for (size_t i = 0; i < markers_.size(); ++i) {
    const Marker &m = markers_[i];
    fmt::format_to(o, "{}{{\"ts\":{},\"cpu\":{},\"pid\":{},\"comm\":", i ? "," : "", m.ts, m.cpu, m.pid);
    str(b, m.comm);
    b.append(std::string_view(",\"text\":"));
    str(b, m.text);
    b.push_back('}');
  }
  fmt::format_to(o, "],\"markers_dropped\":{}}},\"objects\":", markers_dropped_);
  if (objects_json_.empty()) {
    b.append(std::string_view("null"));
  } else {
    std::string_view oj = objects_json_;
    while (!oj.empty() && (oj.back() == '\n' || oj.back() == ' ')) oj.remove_suffix(1);
    b.append(oj);
  }
  b.push_back('}');
  // '<' only occurs inside JSON strings: as \u003c it cannot end the
  // <script> element the data sits in.
  std::string out;
  out.reserve(b.size());
  for (char ch : std::string_view(b.data(), b.size())) {
    if (ch == '<')
      out += "\\u003c";
    else
      out += ch;
  }
  return out;
}

void HtmlExport::write(Out &out) {
  std::string_view page = page_template();
  constexpr std::string_view kPlaceholder = "@KTRACK_DATA@";
  size_t at = page.find(kPlaceholder);
  if (at == std::string_view::npos) throw Error("the HTML report template has no data placeholder");
  out.write(page.substr(0, at));
  out.write(data_json());
  out.write(page.substr(at + kPlaceholder.size()));
  out.flush();
}

}  // namespace ktrack::analysis
