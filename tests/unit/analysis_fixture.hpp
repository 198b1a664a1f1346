// Synthetic records and a fake decoder for the analysis view tests.
#pragma once

#include <stdio.h>
#include <stdlib.h>

#include <deque>
#include <map>
#include <string>
#include <vector>

#include <uapi/ktrack.h>
#include "analysis/analysis.hpp"

namespace fixture {

using namespace ktrack::analysis;

// Payload fields of one synthetic record (Sample::origin points here).
struct Fields {
  std::map<int, int64_t> nums;
  std::map<int, std::string> strs;
};

struct FakeNames : Names {
  std::map<uint64_t, std::string> syms;  // start address -> name
  std::map<uint32_t, std::string> comms, probes;
  std::vector<std::string> fields;  // id = index

  std::string probe_name(uint32_t id) const override {
    auto it = probes.find(id);
    return it == probes.end() ? Names::probe_name(id) : it->second;
  }
  Symbol symbol(uint64_t ip) const override {
    auto it = syms.upper_bound(ip);
    if (it == syms.begin()) return Names::symbol(ip);
    --it;
    return Symbol{it->second, ip - it->first, it->second.rfind("mod_", 0) == 0 ? "mymod" : ""};
  }
  std::string comm(uint32_t pid) const override {
    auto it = comms.find(pid);
    return it == comms.end() ? "" : it->second;
  }
  int field_id(std::string_view name) const override {
    for (size_t i = 0; i < fields.size(); ++i)
      if (fields[i] == name) return static_cast<int>(i);
    return -1;
  }
  bool field_value(const Sample &s, int id, int64_t &out) const override {
    if (!s.origin || s.type != 16) return false;
    auto *f = static_cast<const Fields *>(s.origin);
    auto it = f->nums.find(id);
    if (it == f->nums.end()) return false;
    out = it->second;
    return true;
  }
  bool field_string(const Sample &s, int id, std::string &out) const override {
    if (!s.origin || s.type != 16) return false;
    auto *f = static_cast<const Fields *>(s.origin);
    auto it = f->strs.find(id);
    if (it == f->strs.end()) return false;
    out = it->second;
    return true;
  }
};

// Function addresses used by the tests.
constexpr uint64_t kA = 0xffffffff81000000, kB = 0xffffffff81000100, kC = 0xffffffff81000200,
                   kCaller = 0xffffffff81001000, kCaller2 = 0xffffffff81002000;

inline FakeNames names() {
  FakeNames n;
  n.syms = {{kA, "func_a"}, {kB, "func_b"}, {kC, "func_c"}, {kCaller, "caller_x"}, {kCaller2, "caller_y"}};
  n.comms = {{100, "bash"}, {200, "cat"}, {300, "kworker/0:1"}};
  n.probes = {{1, "pa"}, {2, "pb"}, {3, "pc"}, {7, "tp_sched"}};
  n.fields = {"len", "duration", "name"};
  return n;
}

// A record stream under construction; keeps Fields alive.
struct Stream {
  std::vector<Sample> samples;
  std::deque<Fields> fields;
  std::deque<std::vector<uint64_t>> stacks;

  // The header every builder below starts from (the task's tgid is its pid).
  static Sample head(uint16_t type, Kind k, uint64_t ts, uint16_t cpu, uint32_t pid) {
    Sample s;
    s.ts = ts;
    s.cpu = cpu;
    s.pid = pid;
    s.tgid = pid;
    s.type = type;
    s.kind = k;
    return s;
  }

  Sample &probe(Kind k, uint64_t ts, uint16_t cpu, uint32_t pid, uint64_t ip, uint64_t parent = kCaller,
                uint32_t probe_id = 1) {
    Sample s = head(KTRACK_REC_PROBE, k, ts, cpu, pid);
    s.ip = ip;
    s.parent_ip = parent;
    s.probe_id = probe_id;
    samples.push_back(s);
    return samples.back();
  }
  Stream &entry(uint64_t ts, uint16_t cpu, uint32_t pid, uint64_t ip, uint64_t parent = kCaller) {
    probe(Kind::Entry, ts, cpu, pid, ip, parent);
    return *this;
  }
  Stream &exit(uint64_t ts, uint16_t cpu, uint32_t pid, uint64_t ip) {
    probe(Kind::Exit, ts, cpu, pid, ip, kCaller);
    return *this;
  }
  Stream &with(int field, int64_t v) {
    fields.emplace_back();
    fields.back().nums[field] = v;
    if (!samples.back().origin) {
      samples.back().origin = &fields.back();
    } else {
      const_cast<Fields *>(static_cast<const Fields *>(samples.back().origin))->nums[field] = v;
      fields.pop_back();
    }
    return *this;
  }
  Stream &with_str(int field, std::string v) {
    fields.emplace_back();
    fields.back().strs[field] = std::move(v);
    samples.back().origin = &fields.back();
    return *this;
  }
  Stream &lost(uint64_t ts, uint16_t cpu, uint64_t count, uint64_t first, uint64_t last) {
    Sample s = head(KTRACK_REC_LOST, Kind::Lost, ts, cpu, 0);
    s.lost = count;
    s.lost_first = first;
    s.lost_last = last;
    samples.push_back(s);
    return *this;
  }
  Stream &stack(uint64_t ts, uint16_t cpu, uint32_t pid, std::vector<uint64_t> ips, uint32_t probe_id = 1) {
    stacks.push_back(std::move(ips));
    Sample s = head(KTRACK_REC_STACK, Kind::Stack, ts, cpu, pid);
    s.probe_id = probe_id;
    s.stack = stacks.back().data();
    s.stack_nr = static_cast<uint32_t>(stacks.back().size());
    samples.push_back(s);
    return *this;
  }
  Stream &marker(uint64_t ts, uint16_t cpu, uint32_t pid, std::string_view text) {
    Sample s = head(KTRACK_REC_MARKER, Kind::Marker, ts, cpu, pid);
    s.text = text;
    samples.push_back(s);
    return *this;
  }
};

// Runs 'fn(Out&)' and returns what it printed.
template <typename F>
std::string capture(F &&fn) {
  char *data = nullptr;
  size_t size = 0;
  FILE *f = open_memstream(&data, &size);
  {
    Out out(f);
    fn(out);
    out.flush();
  }
  fclose(f);
  std::string s(data, size);
  free(data);
  return s;
}

inline std::vector<std::string> lines(const std::string &s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t nl = s.find('\n', pos);
    if (nl == std::string::npos) nl = s.size();
    out.push_back(s.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return out;
}

}  // namespace fixture
