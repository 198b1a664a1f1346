// Internal to probes/: the spec parser's class and the small helpers its
// files share (spec_parser.cpp: the head and target; spec_fetch.cpp: fetch
// arguments and types).  Not part of the library's interface.
#pragma once

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>

#include "probes/probe_spec.hpp"

namespace ktrack::spec_detail {

[[noreturn]] inline void fail(const std::string &spec, size_t pos, const std::string &msg) {
  throw SpecError(spec, pos, msg);
}

inline bool is_ident(const std::string &s) {
  if (s.empty() || !(std::isalpha((unsigned char)s[0]) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum((unsigned char)c) || c == '_'; });
}

inline bool is_symbol_char(char c) {
  return std::isalnum((unsigned char)c) || c == '_' || c == '.' || c == '$';
}

// Parses an unsigned number (decimal or 0x hex) covering all of 's'.
inline std::optional<uint64_t> parse_uint(const std::string &s) {
  if (s.empty()) return std::nullopt;
  size_t i = 0;
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    i = 2;
  }
  uint64_t v = 0;
  for (; i < s.size(); i++) {
    int d;
    char c = (char)std::tolower((unsigned char)s[i]);
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (base == 16 && c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    else
      return std::nullopt;
    if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base) return std::nullopt;
    v = v * base + d;
  }
  return v;
}

struct RegName {
  const char *name;
  int offset;
};

// struct pt_regs on x86-64 (same layout in the uapi header and the kernel).
inline constexpr RegName kRegs[] = {
    {"r15", 0},   {"r14", 8},   {"r13", 16},    {"r12", 24},  {"bp", 32},       {"rbp", 32},
    {"bx", 40},   {"rbx", 40},  {"r11", 48},    {"r10", 56},  {"r9", 64},       {"r8", 72},
    {"ax", 80},   {"rax", 80},  {"cx", 88},     {"rcx", 88},  {"dx", 96},       {"rdx", 96},
    {"si", 104},  {"rsi", 104}, {"di", 112},    {"rdi", 112}, {"orig_ax", 120}, {"ip", 128},
    {"rip", 128}, {"cs", 136},  {"flags", 144}, {"sp", 152},  {"rsp", 152},     {"ss", 160},
};

class Parser {
 public:
  Parser(const std::string &text, ProbeSpec &spec) : t_(text), s_(spec) {}
  void run();

 private:
  struct Tok {
    std::string str;
    size_t pos;
  };
  [[noreturn]] void err(size_t pos, const std::string &m) { fail(t_, pos, m); }
  void parse_head(const Tok &tok);
  // The "=> ACTION[:N] ..." tail from 'pos' to the end.
  void parse_actions(size_t pos);
  void parse_target(const Tok &tok);
  void parse_user_target(const Tok &tok);
  size_t parse_module(const std::string &x, size_t pos);
  void parse_arg(const Tok &tok, size_t index);
  void parse_fetch(const std::string &s, size_t pos, FetchArg &a, int depth);
  void parse_type(const std::string &s, size_t pos, FetchArg &a);
  void check_arg(FetchArg &a, size_t pos, size_t index);
  // Arguments live in registers only at function entry (as ftrace says).
  void refuse_args_at_offset(size_t pos, const char *what) {
    if ((s_.kind == ProbeKind::kKprobe || s_.kind == ProbeKind::kUprobe) && s_.offset != 0)
      err(pos, fmt::format("{} are only at function entry: at +{} the registers no longer hold the "
                           "arguments (fetch %REG or $stackN, or probe SYM without an offset)",
                           what, s_.offset));
  }

  const std::string &t_;
  ProbeSpec &s_;
  // u, ur: what user code cannot have (no BTF, no kernel symbols, no event)
  void refuse_in_user(size_t pos, const char *what) {
    if (s_.is_user())
      err(pos, fmt::format("a u probe cannot use {}: read user memory through $argN, %REG or $stackN "
                           "(e.g. +0($arg1):string)",
                           what));
  }

  size_t target_pos_ = 0;
  size_t deref_inner_pos_ = 0;  // where the outermost +OFFS( opens (ftrace's TOO_MANY_OPS caret)
};

}  // namespace ktrack::spec_detail
