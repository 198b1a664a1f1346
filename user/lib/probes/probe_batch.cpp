// Batch compilation of probe specs (see probes/probe_batch.hpp).
#include "probes/probe_batch.hpp"

#include <fmt/core.h>

#include <fstream>
#include <istream>
#include <ostream>

#include "probes/btf_resolver.hpp"
#include "util/error.hpp"

namespace ktrack {

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
  if (stack_depth && c.spec.is_user())
    throw UsageError(
        fmt::format("--stack records kernel stacks, and those of a user probe say nothing: drop it "
                    "for '{}'",
                    text));
  c.spec.stack_depth = stack_depth;
  c.spec.hit_limit = hit_limit;
  resolve_symbols(c.spec, syms_);
  // user code has no BTF: its arguments stay as the spec types them
  if (!c.spec.is_user() && (BtfResolver::needed(c.spec) || !c.spec.args.empty())) {
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
