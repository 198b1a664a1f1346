// Filter compiler: "if COND" of a probe spec -> the postfix program of
// struct ktrack_probe_insn that the kernel runs before writing a record.
// The grammar is util/predicate.hpp's (the same as --where); here:
//   FIELD  := a fetch argument name | pid | tgid | comm | cpu
//   OP     := == != < <= > >= & on numbers; == != ~ on strings ('~', and
//             '==' with * ? [ ], match a glob)
//   VALUE  := integer (decimal, 0xhex, negative) | "string" | 'string' | word
#pragma once

#include "probes/probe_spec.hpp"

namespace ktrack {

// Declared in probe_spec.hpp: void compile_filter(ProbeSpec &spec);

// Readable form of a compiled program (tests and 'probe list -v').
std::string describe_filter(const ProbeSpec &spec);

}  // namespace ktrack
