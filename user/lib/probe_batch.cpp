// Batch compilation of probe specs (see ktrack/probe_batch.hpp).
#include "ktrack/probe_batch.hpp"

#include <fmt/core.h>

#include <fstream>
#include <istream>
#include <ostream>

#include "ktrack/btf_resolver.hpp"
#include "ktrack/error.hpp"

namespace ktrack {

// ---- CachedSystemSymbols ----------------------------------------------------

void CachedSystemSymbols::load() {
  if (loaded_) return;
  loaded_ = true;
  std::ifstream in("/proc/kallsyms");
  std::string line;
  while (std::getline(in, line)) {
    // "ffffffff81234560 T name [mod]"
    size_t a = line.find(' ');
    if (a == std::string::npos || a + 3 > line.size()) continue;
    size_t n0 = a + 3;
    size_t n1 = line.find_first_of(" \t", n0);
    std::string name = line.substr(n0, n1 == std::string::npos ? std::string::npos : n1 - n0);
    std::string mod;
    if (n1 != std::string::npos) {
      size_t b = line.find('[', n1), e = line.find(']', n1);
      if (b != std::string::npos && e != std::string::npos) mod = line.substr(b + 1, e - b - 1);
    }
    uint64_t addr = std::strtoull(line.substr(0, a).c_str(), nullptr, 16);
    bool text = line[a + 1] == 't' || line[a + 1] == 'T';
    if (text && mod.empty()) core_text_.emplace(addr, name);
    syms_.emplace(std::move(name), Sym{addr, std::move(mod), text});
  }
}

std::vector<uint64_t> CachedSystemSymbols::lookup(const std::string &module, const std::string &name) {
  load();
  std::vector<uint64_t> out;
  auto [b, e] = syms_.equal_range(name);
  for (auto it = b; it != e; ++it)
    if (module.empty() || it->second.module == module) out.push_back(it->second.addr);
  return out;
}

std::vector<std::string> CachedSystemSymbols::aliases(const std::string &name) {
  load();
  uint64_t want = 0;
  auto [b, e] = syms_.equal_range(name);
  for (auto it = b; it != e; ++it)
    if (it->second.text && it->second.module.empty()) want = it->second.addr;
  std::vector<std::string> out;
  if (!want) return out;
  auto [ab, ae] = core_text_.equal_range(want);
  for (auto it = ab; it != ae; ++it)
    if (it->second != name) out.push_back(it->second);
  return out;
}

// ---- ProbeCompiler ----------------------------------------------------------

ProbeCompiler::ProbeCompiler(SymbolSource &syms, std::string why_no_btf)
    : syms_(syms), why_no_btf_(std::move(why_no_btf)) {}

ProbeCompiler::ProbeCompiler(SymbolSource &syms, BtfResolver *btf) : syms_(syms), btf_(btf) {}

ProbeCompiler ProbeCompiler::for_system(SymbolSource &syms) {
  ProbeCompiler pc(syms, "/sys/kernel/btf/vmlinux does not exist");
  pc.open_system_ = true;
  return pc;
}

ProbeCompiler::~ProbeCompiler() = default;
ProbeCompiler::ProbeCompiler(ProbeCompiler &&) noexcept = default;

BtfResolver *ProbeCompiler::btf() {
  if (open_system_) {
    open_system_ = false;
    owned_ = BtfResolver::open_system();
    btf_ = owned_.get();
  }
  return btf_;
}

CompiledProbe ProbeCompiler::compile(const std::string &text, uint32_t stack_depth, uint64_t hit_limit) {
  CompiledProbe c;
  c.spec = parse_probe_spec(text);
  if (stack_depth > KTRACK_PROBE_MAX_STACK)
    throw UsageError(fmt::format("--stack must be 0..{}", KTRACK_PROBE_MAX_STACK));
  c.spec.stack_depth = stack_depth;
  c.spec.hit_limit = hit_limit;
  resolve_symbols(c.spec, syms_);
  if (BtfResolver::needed(c.spec) || !c.spec.args.empty()) {
    if (auto *b = btf())
      b->resolve(c.spec);
    else
      reject_btf_names(c.spec, why_no_btf_);
  }
  c.blob = compile_probe(c.spec);
  return c;
}

// ---- verdicts ---------------------------------------------------------------

ProbeVerdict probe_verdict(ProbeCompiler &pc, const std::string &text) {
  ProbeVerdict v;
  try {
    auto c = pc.compile(text);
    v.ok = true;
    v.message = c.spec.name;
  } catch (const SpecError &e) {
    v.has_pos = true;
    v.pos = e.pos();
    v.message = e.message();
  } catch (const Error &e) {
    v.message = e.what();
  }
  return v;
}

std::string format_verdict(const ProbeVerdict &v) {
  if (v.ok) return "ok " + v.message;
  std::string m = v.message;
  for (auto &c : m)
    if (c == '\n' || c == '\r') c = ' ';
  return v.has_pos ? fmt::format("error {} {}", v.pos, m) : fmt::format("error - {}", m);
}

size_t compile_batch(ProbeCompiler &pc, std::istream &in, std::ostream &out) {
  size_t refused = 0;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    ProbeVerdict v = probe_verdict(pc, line);
    if (!v.ok) refused++;
    out << format_verdict(v) << '\n';
  }
  out.flush();
  return refused;
}

}  // namespace ktrack
