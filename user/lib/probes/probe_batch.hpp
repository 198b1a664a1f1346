// Compiling many probe specs against one symbol table and one BTF: what
// 'ktrackctl probe compile --batch' does (kallsyms and BTF are read once,
// not once per spec), and the one-line verdicts it prints.
//
//   ok NAME                  the spec compiles (NAME: the probe's name)
//   error POS MESSAGE        refused; POS is the caret's offset in the spec
//   error - MESSAGE          refused without a position (not a spec error)
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "probes/probe_client.hpp"
#include "probes/probe_spec.hpp"

namespace ktrack {

class BtfResolver;

// Parses, resolves and compiles specs against 'syms' and a BTF.
class ProbeCompiler {
 public:
  // No BTF: BTF names are refused, $argN is not checked against a prototype.
  explicit ProbeCompiler(SymbolSource &syms, std::string why_no_btf = "no BTF given");
  // 'btf' (not owned) resolves BTF names and checks $argN.
  ProbeCompiler(SymbolSource &syms, BtfResolver *btf);
  // The running kernel: /sys/kernel/btf/vmlinux, opened on first need.
  static ProbeCompiler for_system(SymbolSource &syms);
  ~ProbeCompiler();
  ProbeCompiler(ProbeCompiler &&) noexcept;

  // Throws SpecError (or UsageError) as compile_probe_for_system() does.
  CompiledProbe compile(const std::string &text, uint32_t stack_depth = 0, uint64_t hit_limit = 0);

 private:
  BtfResolver *btf();
  SymbolSource &syms_;
  BtfResolver *btf_ = nullptr;
  std::unique_ptr<BtfResolver> owned_;
  bool open_system_ = false;
  std::string why_no_btf_;
};

struct ProbeVerdict {
  bool ok = false;
  bool has_pos = false;
  size_t pos = 0;
  std::string message;  // the error (one line), or the probe's name
};

// Compiles 'text' and says how it went (never throws a spec's error).
ProbeVerdict probe_verdict(ProbeCompiler &pc, const std::string &text);

// "ok NAME", "error POS MESSAGE" or "error - MESSAGE".
std::string format_verdict(const ProbeVerdict &v);

// One verdict line per input line (every line is a spec, blank ones too, so
// that output line N answers input line N).  Returns how many were refused.
size_t compile_batch(ProbeCompiler &pc, std::istream &in, std::ostream &out);

}  // namespace ktrack
