#include "analysis/stackagg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace ktrack::analysis {

StackAgg::StackAgg(const StackOptions &opt, const Names &names) : opt_(opt), names_(names) {}

uint32_t StackAgg::comm_id(const Sample &s) {
  if (!s.comm.empty()) return comms_.intern(s.comm);
  uint32_t &id = pid_comm_[s.pid];
  if (!id) {
    std::string c = names_.comm(s.pid);
    id = comms_.intern(c.empty() ? fmt::format("pid {}", s.pid) : c) + 1;
  }
  return id - 1;
}

void StackAgg::add(const Sample &s) {
  switch (s.kind) {
    case Kind::Lost:
      lost_.add(s);
      return;
    case Kind::Entry:
    case Kind::Exit:
    case Kind::Point:
      if (s.cpu >= last_ip_.size()) last_ip_.resize(s.cpu + 1u, 0);
      last_ip_[s.cpu] = s.ip;
      return;
    case Kind::Stack:
      break;
    default:
      return;
  }
  uint64_t leaf = s.cpu < last_ip_.size() ? last_ip_[s.cpu] : 0;
  uint32_t comm = opt_.per_comm ? comm_id(s) : 0;
  uint64_t h = 1469598103934665603ULL ^ (static_cast<uint64_t>(comm) * 0x9e3779b97f4a7c15ULL) ^ leaf;
  for (uint32_t i = 0; i < s.stack_nr; ++i) h = (h ^ s.stack[i]) * 1099511628211ULL;
  auto &ids = by_hash_[h];
  for (uint32_t id : ids) {
    Entry &e = entries_[id];
    if (e.nr == s.stack_nr && e.comm == comm && e.leaf == leaf &&
        std::equal(s.stack, s.stack + s.stack_nr, pool_.begin() + e.offset)) {
      ++e.count;
      return;
    }
  }
  Entry e;
  e.offset = static_cast<uint32_t>(pool_.size());
  e.nr = s.stack_nr;
  e.comm = comm;
  e.leaf = leaf;
  e.count = 1;
  pool_.insert(pool_.end(), s.stack, s.stack + s.stack_nr);
  ids.push_back(static_cast<uint32_t>(entries_.size()));
  entries_.push_back(e);
}

void StackAgg::print(Out &out) {
  const Colors &c = opt_.colors;
  if (opt_.folded) {
    // Merge stacks that fold to the same names (different offsets).
    std::map<std::string, uint64_t> folded;
    std::string line;
    for (const Entry &e : entries_) {
      line.clear();
      if (opt_.per_comm) line = comms_.str(e.comm);
      std::string first_name;
      for (uint32_t i = e.nr; i-- > 0;) {
        uint64_t ip = pool_[e.offset + i];
        std::string n = opt_.offsets ? names_.symbolize(ip) : names_.func_name(ip);
        if (i == 0) first_name = names_.func_name(ip);
        if (!line.empty()) line += ';';
        line += n;
      }
      // The probed function itself, when the stack does not start with it.
      if (e.leaf && names_.func_name(e.leaf) != first_name) {
        if (!line.empty()) line += ';';
        line += names_.func_name(e.leaf);
      }
      for (char &ch : line)
        if (ch == ' ') ch = '_';
      folded[line] += e.count;
    }
    for (const auto &[stack, count] : folded) out.print("{} {}\n", stack, count);
    // Lost records stay visible in the flame graph as a frame of their own.
    for (const auto &l : lost_.lines()) {
      std::string frame = "[" + l + "]";
      for (char &ch : frame)
        if (ch == ' ' || ch == ';') ch = '_';
      out.print("{} 1\n", frame);
    }
    out.flush();
    return;
  }
  std::vector<const Entry *> order;
  for (const Entry &e : entries_) order.push_back(&e);
  std::stable_sort(order.begin(), order.end(),
                   [](const Entry *a, const Entry *b) { return a->count > b->count; });
  if (opt_.limit && order.size() > opt_.limit) order.resize(opt_.limit);
  for (const Entry *e : order) {
    if (opt_.json) {
      auto &buf = out.buf();
      buf.append(std::string_view("{\"count\":"));
      fmt::format_to(std::back_inserter(buf), "{}", e->count);
      if (opt_.per_comm) {
        buf.append(std::string_view(",\"comm\":"));
        json_escape(buf, comms_.str(e->comm));
      }
      if (e->leaf) {
        buf.append(std::string_view(",\"probe\":"));
        json_escape(buf, names_.func_name(e->leaf));
      }
      buf.append(std::string_view(",\"stack\":["));
      for (uint32_t i = 0; i < e->nr; ++i) {
        if (i) buf.push_back(',');
        json_escape(buf, names_.symbolize(pool_[e->offset + i]));
      }
      buf.append(std::string_view("]}\n"));
      out.maybe_flush();
      continue;
    }
    for (uint32_t i = 0; i < e->nr; ++i) out.print("  {}\n", names_.symbolize(pool_[e->offset + i]));
    if (opt_.per_comm) out.print("    {}{}{}\n", c.dim, comms_.str(e->comm), c.reset);
    out.print("    {}{}{}\n\n", c.bold, e->count, c.reset);
  }
  if (order.empty() && !opt_.json)
    out.print("no stack records in the selection (add a stack option to the probe)\n");
  lost_.print(out, c, opt_.json);
  out.flush();
}

}  // namespace ktrack::analysis
