// Probe spec parser (syntax), symbol resolution and the description compiler.
#include "probes/probe_spec.hpp"

#include "util/glob.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace ktrack {

namespace {

std::string caret_text(const std::string &spec, size_t pos, const std::string &message) {
  if (pos > spec.size()) pos = spec.size();
  return fmt::format("{}\n  {}\n  {}^", message, spec, std::string(pos, ' '));
}

[[noreturn]] void fail(const std::string &spec, size_t pos, const std::string &msg) {
  throw SpecError(spec, pos, msg);
}

bool is_ident(const std::string &s) {
  if (s.empty() || !(std::isalpha((unsigned char)s[0]) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum((unsigned char)c) || c == '_'; });
}

bool is_symbol_char(char c) { return std::isalnum((unsigned char)c) || c == '_' || c == '.' || c == '$'; }

// Parses an unsigned number (decimal or 0x hex) covering all of 's'.
std::optional<uint64_t> parse_uint(const std::string &s) {
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
const RegName kRegs[] = {
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
  void parse_target(const Tok &tok);
  void parse_arg(const Tok &tok, size_t index);
  void parse_fetch(const std::string &s, size_t pos, FetchArg &a, int depth);
  void parse_type(const std::string &s, size_t pos, FetchArg &a);
  void check_arg(FetchArg &a, size_t pos, size_t index);
  // Arguments live in registers only at function entry (as ftrace says).
  void refuse_args_at_offset(size_t pos, const char *what) {
    if (s_.kind == ProbeKind::kKprobe && s_.offset != 0)
      err(pos, fmt::format("{} are only at function entry: at +{} the registers no longer hold the "
                           "arguments (fetch %REG or $stackN, or probe SYM without an offset)",
                           what, s_.offset));
  }

  const std::string &t_;
  ProbeSpec &s_;
  size_t target_pos_ = 0;
  size_t deref_inner_pos_ = 0;  // where the outermost +OFFS( opens (ftrace's TOO_MANY_OPS caret)
};

void Parser::run() {
  std::vector<Tok> toks;
  size_t i = 0;
  while (i < t_.size()) {
    while (i < t_.size() && std::isspace((unsigned char)t_[i])) i++;
    if (i >= t_.size()) break;
    size_t start = i;
    // "if" starts the filter: the rest of the line is the condition
    if (toks.size() >= 2 && t_.compare(i, 2, "if") == 0 &&
        (i + 2 == t_.size() || std::isspace((unsigned char)t_[i + 2]))) {
      size_t c = i + 2;
      while (c < t_.size() && std::isspace((unsigned char)t_[c])) c++;
      if (c >= t_.size()) err(c, "'if' needs a condition");
      s_.filter = t_.substr(c);
      s_.filter_pos = c;
      break;
    }
    int depth = 0;
    while (i < t_.size() && (depth > 0 || !std::isspace((unsigned char)t_[i]))) {
      if (t_[i] == '(') depth++;
      if (t_[i] == ')') depth--;
      if (t_[i] == '"') {  // quoted text keeps its spaces
        i++;
        while (i < t_.size() && t_[i] != '"') i++;
      }
      i++;
    }
    toks.push_back({t_.substr(start, i - start), start});
  }
  if (toks.empty()) err(0, "empty probe: expected p, r, f or t");
  parse_head(toks[0]);
  if (toks.size() < 2) err(t_.size(), "missing the probe target (symbol, address, functions or event)");
  parse_target(toks[1]);
  if (toks.size() - 2 > KTRACK_PROBE_MAX_FETCH)
    err(toks[2 + KTRACK_PROBE_MAX_FETCH].pos,
        fmt::format("too many arguments (max {})", KTRACK_PROBE_MAX_FETCH));
  for (size_t k = 2; k < toks.size(); k++) parse_arg(toks[k], k - 1);
  // default name, ftrace style
  if (!s_.name_given) {
    std::string n;
    switch (s_.kind) {
      case ProbeKind::kKprobe:
        n = s_.symbol.empty() ? fmt::format("p_0x{:x}", s_.addr)
                              : fmt::format("p_{}_{}", s_.symbol, s_.offset);
        break;
      case ProbeKind::kKretprobe:
        n = fmt::format("r_{}_0", s_.symbol);
        break;
      case ProbeKind::kFuncs: {
        std::string base = s_.patterns[0];
        std::replace_if(
            base.begin(), base.end(), [](char c) { return !std::isalnum((unsigned char)c) && c != '_'; },
            '_');
        n = base + (s_.exit && !s_.entry ? "__exit" : s_.exit ? "__both" : "__entry");
        break;
      }
      case ProbeKind::kTracepoint:
        n = s_.event;
        break;
    }
    std::replace(n.begin(), n.end(), '.', '_');  // foo.isra.0: p_foo_isra_0_0, as ftrace names it
    if (n.size() >= KTRACK_PROBE_NAME_MAX) n.resize(KTRACK_PROBE_NAME_MAX - 1);
    s_.name = n;
  }
}

void Parser::parse_head(const Tok &tok) {
  const std::string &h = tok.str;
  char c = h[0];
  size_t i = 1;
  switch (c) {
    case 'p':
      s_.kind = ProbeKind::kKprobe;
      break;
    case 'r':
      s_.kind = ProbeKind::kKretprobe;
      break;
    case 'f':
      s_.kind = ProbeKind::kFuncs;
      break;
    case 't':
      s_.kind = ProbeKind::kTracepoint;
      break;
    default:
      err(tok.pos, "unknown probe type: expected p (kprobe), r (return), f (functions) or t (tracepoint)");
  }
  size_t digits = i;
  while (i < h.size() && std::isdigit((unsigned char)h[i])) i++;
  if (i > digits) {
    if (s_.kind != ProbeKind::kKretprobe) err(tok.pos + digits, "MAXACTIVE is only for return probes (r)");
    auto v = parse_uint(h.substr(digits, i - digits));
    if (!v || *v == 0 || *v > KTRACK_PROBE_MAX_ACTIVE)
      err(tok.pos + digits, fmt::format("MAXACTIVE must be 1..{}", KTRACK_PROBE_MAX_ACTIVE));
    if (i < h.size() && h[i] != ':') err(tok.pos + digits, "bad MAXACTIVE: use r[N][:NAME] with N a number");
    s_.maxactive = (uint32_t)*v;
  }
  if (i == h.size()) return;
  if (h[i] != ':') err(tok.pos + i, "expected ':NAME' after the probe type");
  i++;
  std::string name = h.substr(i);
  if (name.empty()) err(tok.pos + i, "missing probe name after ':'");
  size_t slash = name.find('/');
  if (slash != std::string::npos) {
    // ftrace's GROUP/EVENT: a session is ktrack's group, so GROUP is only
    // checked (as ftrace does) and kept; the probe is named EVENT
    std::string group = name.substr(0, slash);
    if (group.empty()) err(tok.pos + i, "missing group name before '/'");
    if (group.size() >= 64) err(tok.pos + i, "group name is too long (max 63 characters)");
    if (!is_ident(group)) err(tok.pos + i, "group name must be a C identifier ([A-Za-z_][A-Za-z0-9_]*)");
    s_.group = group;
    i += slash + 1;
    name = h.substr(i);
    if (name.empty()) err(tok.pos + i, "missing probe name after 'GROUP/'");
  }
  if (!is_ident(name)) err(tok.pos + i, "probe name must be a C identifier ([A-Za-z_][A-Za-z0-9_]*)");
  if (name.size() >= KTRACK_PROBE_NAME_MAX)
    err(tok.pos + i, fmt::format("probe name is too long (max {} characters)", KTRACK_PROBE_NAME_MAX - 1));
  s_.name = name;
  s_.name_given = true;
}

void Parser::parse_target(const Tok &tok) {
  const std::string &x = tok.str;
  target_pos_ = tok.pos;
  if (s_.kind == ProbeKind::kTracepoint) {
    size_t slash = x.find('/');
    std::string sub = slash == std::string::npos ? "" : x.substr(0, slash);
    std::string ev = slash == std::string::npos ? x : x.substr(slash + 1);
    if (slash != std::string::npos && !is_ident(sub)) err(tok.pos, "bad tracepoint system name");
    if (!is_ident(ev))
      err(tok.pos + (slash == std::string::npos ? 0 : slash + 1), "bad tracepoint event name");
    if (ev.size() >= KTRACK_PROBE_SYM_MAX) err(tok.pos, "event name is too long");
    s_.subsys = sub;
    s_.event = ev;
    return;
  }
  if (s_.kind == ProbeKind::kFuncs) {
    std::string list = x;
    size_t pct = list.find('%');
    if (pct != std::string::npos) {
      std::string suffix = list.substr(pct + 1);
      if (suffix == "return") {
        s_.entry = false;
        s_.exit = true;
      } else if (suffix == "both") {
        s_.exit = true;
      } else if (suffix != "entry") {
        err(tok.pos + pct, "unknown suffix: use %return (exits) or %both (entries and exits)");
      }
      list = list.substr(0, pct);
    }
    size_t start = 0;
    while (true) {
      size_t comma = list.find(',', start);
      std::string pat = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (pat.empty()) err(tok.pos + start, "empty function name in the list");
      for (size_t k = 0; k < pat.size(); k++) {
        char c = pat[k];
        if (!is_symbol_char(c) && c != '*' && c != '?' && c != '[' && c != ']' && c != '-' && c != '!')
          err(tok.pos + start + (c == ':' ? k : 0),
              c == ':'   ? "MOD:SYM is not supported in f probes: name the function"
              : c == '+' ? "f probes go on function entries: no +OFFS"
                         : "bad character in a function name or glob");
      }
      s_.patterns.push_back(pat);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    return;
  }
  // p / r: [MOD:]SYM[+OFFS] | ADDR
  if (std::isdigit((unsigned char)x[0])) {
    if (s_.kind == ProbeKind::kKretprobe)
      err(tok.pos, "return probes need a function symbol, not an address");
    auto v = parse_uint(x);
    if (!v || *v == 0) err(tok.pos, "bad address: use 0xHEX or a symbol");
    s_.addr = *v;
    return;
  }
  std::string rest = x;
  size_t base = 0;
  size_t pct = rest.find('%');
  if (pct != std::string::npos) {  // SYM%return: ftrace's other spelling of r
    if (rest.compare(pct, std::string::npos, "%return") != 0)
      err(tok.pos + pct, "unknown suffix: the only one is %return (a return probe)");
    rest.resize(pct);
    if (s_.kind == ProbeKind::kKprobe) {
      if (rest.find('+') != std::string::npos)
        err(tok.pos, "return probes go on a function entry: drop the offset");
      s_.kind = ProbeKind::kKretprobe;
    }
  }
  size_t colon = rest.find(':');
  if (colon != std::string::npos) {
    std::string mod = rest.substr(0, colon);
    if (mod.empty()) err(tok.pos, "missing module name before ':'");
    for (size_t k = 0; k < mod.size(); k++)
      if (!std::isalnum((unsigned char)mod[k]) && mod[k] != '_' && mod[k] != '-')
        err(tok.pos + k, "bad character in the module name");
    if (mod.size() >= KTRACK_PROBE_MOD_MAX) err(tok.pos, "module name is too long");
    std::replace(mod.begin(), mod.end(), '-', '_');
    s_.module = mod;
    base = colon + 1;
    rest = rest.substr(colon + 1);
  }
  size_t plus = rest.find_first_of("+-");
  std::string sym = rest.substr(0, plus);
  if (sym.empty()) err(tok.pos + base, "missing symbol");
  for (size_t k = 0; k < sym.size(); k++)
    if (!is_symbol_char(sym[k])) err(tok.pos + base + k, "bad character in the symbol name");
  if (std::isdigit((unsigned char)sym[0])) err(tok.pos + base, "a symbol cannot start with a digit");
  if (sym.size() >= KTRACK_PROBE_SYM_MAX) err(tok.pos + base, "symbol name is too long");
  s_.symbol = sym;
  if (plus != std::string::npos) {
    // the caret under the whole target, as ftrace puts it
    if (rest[plus] == '-') err(tok.pos, "a negative offset is not allowed: use SYM+OFFS");
    auto v = parse_uint(rest.substr(plus + 1));
    if (!v) err(tok.pos, "bad offset: use SYM+DECIMAL or SYM+0xHEX");
    if (*v > (1u << 20)) err(tok.pos, "offset is too large");
    if (s_.kind == ProbeKind::kKretprobe && *v)
      err(tok.pos, "return probes go on a function entry: drop the offset");
    s_.offset = *v;
  }
}

void Parser::parse_type(const std::string &s, size_t pos, FetchArg &a) {
  std::string t = s;
  size_t br = t.find('[');
  if (br != std::string::npos) {
    size_t close = t.find(']', br);
    if (close == std::string::npos) err(pos + t.size(), "array type must end with ']': TYPE[N]");
    if (close + 1 != t.size()) err(pos + close + 1, "unexpected text after ']': TYPE[N]");
    auto n = parse_uint(t.substr(br + 1, t.size() - br - 2));
    if (!n || *n == 0 || *n > KTRACK_FETCH_MAX_ARRAY)
      err(pos + br + 1, fmt::format("array size must be 1..{}", KTRACK_FETCH_MAX_ARRAY));
    a.count = (uint16_t)*n;
    t = t.substr(0, br);
  }
  a.type_given = true;
  if (t == "string" || t == "ustring") {
    if (a.count > 1) err(pos + br, "strings cannot be arrays");
    a.type = t == "string" ? KTRACK_FETCH_T_STRING : KTRACK_FETCH_T_USTRING;
    a.size = 1;
    return;
  }
  if (t == "symbol") {
    a.type = KTRACK_FETCH_T_SYMBOL;
    a.size = 8;
    return;
  }
  if (t.size() >= 2 && (t[0] == 'u' || t[0] == 's' || t[0] == 'x')) {
    auto bits = parse_uint(t.substr(1));
    if (bits && (*bits == 8 || *bits == 16 || *bits == 32 || *bits == 64)) {
      a.type = t[0] == 'u' ? KTRACK_FETCH_T_U : t[0] == 's' ? KTRACK_FETCH_T_S : KTRACK_FETCH_T_X;
      a.size = (uint8_t)(*bits / 8);
      return;
    }
  }
  err(pos, "unknown type: use u8..u64, s8..s64, x8..x64, string, ustring, symbol or TYPE[N]");
}

void Parser::parse_fetch(const std::string &s, size_t pos, FetchArg &a, int depth) {
  if (s.empty()) err(pos, "missing fetch argument");
  char c = s[0];
  if (c == '+' || c == '-') {
    size_t open = s.find('(');
    if (open == std::string::npos) err(pos, "dereference needs parentheses: +OFFS(FETCH)");
    std::string num = s.substr(1, open - 1);
    if (!num.empty() && num[0] == 'u') {
      a.flags |= KTRACK_FETCH_F_USER;
      num = num.substr(1);
    }
    auto v = parse_uint(num);
    if (!v || *v > 0x7fffffff) err(pos, "bad dereference offset: +OFFS(FETCH) with OFFS a number");
    // the inner FETCH ends at the last ')' (ftrace's rule, and its carets)
    std::string inner = s.substr(open + 1);
    size_t close = inner.rfind(')');
    if (close == std::string::npos)
      err(pos + open + 1 + inner.size(), "missing ')' at the end of the dereference");
    if (close + 1 != inner.size()) err(pos + open + 2 + close, "unexpected text after ')'");
    inner.resize(close);
    if (depth == 0) deref_inner_pos_ = pos + open + 1;
    if (depth + 1 > KTRACK_FETCH_MAX_DEREF)
      err(deref_inner_pos_,
          fmt::format("dereference is nested too deep (max {} levels)", KTRACK_FETCH_MAX_DEREF));
    parse_fetch(inner, pos + open + 1, a, depth + 1);
    if (a.src == KTRACK_FETCH_SRC_COMM) err(pos + open + 1, "$comm cannot be dereferenced");
    if (!a.btf_expr.empty()) err(pos + open + 1, "BTF names cannot be dereferenced with +OFFS(): use ->");
    if (a.deref.size() >= KTRACK_FETCH_MAX_DEREF)
      err(deref_inner_pos_,
          fmt::format("dereference is nested too deep (max {} levels)", KTRACK_FETCH_MAX_DEREF));
    a.deref.push_back(c == '-' ? -(int32_t)*v : (int32_t)*v);
    return;
  }
  if (c == '$') {
    std::string v = s.substr(1);
    if (v == "arg*" || v == "$args")
      err(pos, fmt::format("{} stands alone: it cannot be dereferenced or named", s));
    if (v == "stack") {  // ftrace's stack pointer: the sp register
      if (s_.kind == ProbeKind::kTracepoint) err(pos, "tracepoint probes have no stack registers: use $argN");
      a.src = KTRACK_FETCH_SRC_REG;
      a.param = 152;
      return;
    }
    if (v.rfind("arg", 0) == 0) {
      refuse_args_at_offset(pos, "$argN");
      size_t member = v.find_first_of("-.");
      auto n = parse_uint(v.substr(3, member == std::string::npos ? std::string::npos : member - 3));
      if (!n || *n < 1 || *n > KTRACK_FETCH_MAX_ARG)
        err(pos, fmt::format("function arguments are $arg1..$arg{}", KTRACK_FETCH_MAX_ARG));
      a.src = KTRACK_FETCH_SRC_ARG;
      a.param = (int64_t)*n;
      if (member != std::string::npos) {  // $argN->member: a BTF expression
        if (v.compare(member, 2, "->") != 0) err(pos + 1 + member, "use -> to reach a member of an argument");
        a.btf_expr = s;
      }
      return;
    }
    if (v.rfind("stack", 0) == 0) {
      auto n = parse_uint(v.substr(5));
      if (!n || *n > 1024) err(pos, "stack entries are $stack0..$stack1024");
      if (s_.kind == ProbeKind::kTracepoint) err(pos, "tracepoint probes have no stack registers: use $argN");
      a.src = KTRACK_FETCH_SRC_STACK;
      a.param = (int64_t)*n;
      return;
    }
    if (v.rfind("retval->", 0) == 0) {  // a member of the returned pointer: BTF
      if (!s_.has_exit()) err(pos, "$retval is only for return probes (r, or f with %return/%both)");
      a.src = KTRACK_FETCH_SRC_RETVAL;
      a.btf_expr = s;
      return;
    }
    if (v == "retval" || v == "duration") {
      if (!s_.has_exit())
        err(pos, fmt::format("${} is only for return probes (r, or f with %return/%both)", v));
      a.src = v == "retval" ? KTRACK_FETCH_SRC_RETVAL : KTRACK_FETCH_SRC_DURATION;
      return;
    }
    if (v == "comm") {
      a.src = KTRACK_FETCH_SRC_COMM;
      return;
    }
    if (v == "cpu") {
      a.src = KTRACK_FETCH_SRC_CPU;
      return;
    }
    err(pos, "unknown variable: use $argN, $retval, $duration, $stackN, $comm or $cpu");
  }
  if (c == '\\') {  // \IMM: a constant
    if (s.size() > 1 && s[1] == '"') {
      if (s.size() < 3 || s.back() != '"') err(pos + s.size(), "the string is not closed with '\"'");
      err(pos, "immediate strings are not supported: record a number (\\IMM) or a string in memory");
    }
    std::string num = s.substr(1);
    bool neg = !num.empty() && num[0] == '-';
    if (!num.empty() && (num[0] == '-' || num[0] == '+')) num = num.substr(1);
    auto v = parse_uint(num);
    if (!v) err(pos + 1, "bad immediate value: use \\DECIMAL or \\0xHEX");
    a.src = KTRACK_FETCH_SRC_IMM;
    a.param = neg ? -(int64_t)*v : (int64_t)*v;
    return;
  }
  if (c == '%') {
    if (s_.kind == ProbeKind::kTracepoint) err(pos, "tracepoint probes have no registers: use $argN");
    if (s_.kind == ProbeKind::kFuncs)
      err(pos, "f probes have no registers (fprobe saves only some): use $argN, $stackN or $retval");
    std::string r = s.substr(1);
    for (const auto &reg : kRegs) {
      if (r == reg.name) {
        a.src = KTRACK_FETCH_SRC_REG;
        a.param = reg.offset;
        if (depth == 0 && a.name.empty()) a.name = r;
        return;
      }
    }
    err(pos, "unknown register: use %ax %bx %cx %dx %si %di %bp %sp %r8..%r15 %ip %flags");
  }
  if (c == '@') {
    std::string x = s.substr(1);
    if (x.empty()) err(pos + 1, "missing symbol or address after '@'");
    a.src = KTRACK_FETCH_SRC_IMM;
    if (std::isdigit((unsigned char)x[0])) {
      auto v = parse_uint(x);
      if (!v) err(pos, "bad address after '@': use @0xHEX or @DECIMAL");
      a.param = (int64_t)*v;
      a.deref.push_back(0);
      return;
    }
    size_t off = x.find_first_of("+-");
    std::string sym = x.substr(0, off);
    if (sym.empty()) err(pos, "missing symbol: use @SYM[+OFFS] or a full address @ADDR");
    for (size_t k = 0; k < sym.size(); k++)
      if (!is_symbol_char(sym[k])) err(pos + 1 + k, "bad character in the symbol name");
    int32_t o = 0;
    if (off != std::string::npos) {
      auto v = parse_uint(x.substr(off + 1));
      if (!v || *v > 0x7fffffff) err(pos + 1 + off + 1, "bad symbol offset");
      o = x[off] == '-' ? -(int32_t)*v : (int32_t)*v;
    }
    a.symbol = sym;
    a.deref.push_back(o);
    return;
  }
  // A BTF name expression: IDENT(->IDENT|.IDENT)*
  refuse_args_at_offset(pos, "argument names");
  size_t k = 0;
  while (k < s.size()) {
    size_t st = k;
    while (k < s.size() && (std::isalnum((unsigned char)s[k]) || s[k] == '_')) k++;
    if (k == st || std::isdigit((unsigned char)s[st]))
      err(pos + st, "unknown fetch argument: use $argN, %REG, @SYM, +OFFS(FETCH) or a BTF name");
    if (k == s.size()) break;
    if (s.compare(k, 2, "->") == 0)
      k += 2;
    else if (s[k] == '.')
      k++;
    else
      err(pos + k, "unexpected character in a BTF name expression");
    if (k == s.size()) err(pos + k, "missing member name");
  }
  a.btf_expr = s;
}

void Parser::check_arg(FetchArg &a, size_t pos, size_t index) {
  if (a.src == KTRACK_FETCH_SRC_COMM) {
    if (a.type_given && a.type != KTRACK_FETCH_T_STRING)
      err(pos, "$comm is a string: use :string or no type");
    a.type = KTRACK_FETCH_T_STRING;
    a.size = 1;
  }
  if (!a.type_given && a.btf_expr.empty()) {
    if (a.src == KTRACK_FETCH_SRC_DURATION) {
      a.type = KTRACK_FETCH_T_U;
      a.size = 8;
    } else if (a.src == KTRACK_FETCH_SRC_CPU) {
      a.type = KTRACK_FETCH_T_U;
      a.size = 4;
    } else if (a.src != KTRACK_FETCH_SRC_COMM) {
      a.type = KTRACK_FETCH_T_X;
      a.size = 8;
    }
  }
  if (a.count > 1 && a.deref.empty() && a.btf_expr.empty())
    err(pos, "an array is read from memory: use +OFFS(FETCH):TYPE[N]");
  if (a.src == KTRACK_FETCH_SRC_REG && a.deref.empty() &&
      (a.type == KTRACK_FETCH_T_STRING || a.type == KTRACK_FETCH_T_USTRING))
    err(pos, "a register holds no string: read the one it points to with +0(%REG):string");
  bool auto_name = a.name.empty();
  if (auto_name) {
    switch (a.src) {
      case KTRACK_FETCH_SRC_ARG:
        a.name = a.deref.empty() ? fmt::format("arg{}", a.param) : fmt::format("arg{}", index);
        break;
      case KTRACK_FETCH_SRC_RETVAL:
        a.name = a.deref.empty() ? "retval" : fmt::format("arg{}", index);
        break;
      case KTRACK_FETCH_SRC_DURATION:
        a.name = "duration";
        break;
      case KTRACK_FETCH_SRC_COMM:
        a.name = "comm";
        break;
      case KTRACK_FETCH_SRC_CPU:
        a.name = "cpu";
        break;
      case KTRACK_FETCH_SRC_IMM:
        a.name = a.symbol.empty() ? fmt::format("arg{}", index) : a.symbol;
        break;
      default:
        a.name = fmt::format("arg{}", index);
        break;
    }
    if (!a.btf_expr.empty()) {
      size_t cut = a.btf_expr.find_last_of(".>");
      a.name = cut == std::string::npos ? a.btf_expr : a.btf_expr.substr(cut + 1);
    }
  }
  if (a.name.size() >= KTRACK_FETCH_NAME_MAX) a.name.resize(KTRACK_FETCH_NAME_MAX - 1);
  if (auto_name) {  // an automatic name never collides: suffix its position
    for (const auto &o : s_.args)
      if (o.name == a.name) a.name = fmt::format("{}_{}", a.name.substr(0, KTRACK_FETCH_NAME_MAX - 5), index);
  }
  for (const auto &o : s_.args)
    if (o.name == a.name) err(pos, fmt::format("duplicated argument name '{}': name it with NAME=", a.name));
}

void Parser::parse_arg(const Tok &tok, size_t index) {
  FetchArg a;
  a.pos = tok.pos;
  std::string s = tok.str;
  size_t base = tok.pos;
  if (s == "$$args" || s == "$arg*") {  // $arg*: ftrace's spelling
    refuse_args_at_offset(base, s.c_str());
    for (const auto &o : s_.args)
      if (o.all_args) err(base, "$arg* ($$args) can be used only once");
    a.all_args = true;
    a.name = "$$args";
    s_.args.push_back(a);
    return;
  }
  size_t eq = s.find('=');
  if (eq != std::string::npos) {
    std::string name = s.substr(0, eq);
    if (name.empty()) err(base, "missing argument name before '='");
    if (!is_ident(name)) err(base, "argument name must be a C identifier");
    if (name.size() >= KTRACK_FETCH_NAME_MAX)
      err(base, fmt::format("argument name is too long (max {} characters)", KTRACK_FETCH_NAME_MAX - 1));
    a.name = name;
    s = s.substr(eq + 1);
    base += eq + 1;
    if (s.empty()) err(base, "missing fetch argument after '='");
    if (s.find('=') != std::string::npos) err(base, "an argument has one NAME=: NAME=FETCH[:TYPE]");
  }
  if (s.size() > 63) err(base, "the fetch argument is too long (max 63 characters)");
  // TYPE: after the first ':' that is outside parentheses (ftrace: the first)
  size_t colon = std::string::npos;
  int depth = 0;
  for (size_t k = 0; k < s.size() && colon == std::string::npos; k++) {
    if (s[k] == '(') depth++;
    if (s[k] == ')') depth--;
    if (s[k] == ':' && depth == 0) colon = k;
  }
  std::string fetch = colon == std::string::npos ? s : s.substr(0, colon);
  parse_fetch(fetch, base, a, 0);
  if (colon != std::string::npos) {
    if (colon + 1 == s.size()) err(base + colon + 1, "missing type after ':'");
    if (a.src == KTRACK_FETCH_SRC_COMM && s.compare(colon + 1, std::string::npos, "string") != 0)
      err(base + colon + 1, "$comm is a string: use :string or no type");
    parse_type(s.substr(colon + 1), base + colon + 1, a);
    if (a.count > 1 && a.deref.empty() && a.btf_expr.empty())
      err(base + colon, "an array is read from memory: use +OFFS(FETCH):TYPE[N]");  // ftrace's caret
    bool str = a.type == KTRACK_FETCH_T_STRING || a.type == KTRACK_FETCH_T_USTRING;
    if (str && a.deref.empty() && (a.src == KTRACK_FETCH_SRC_STACK || a.src == KTRACK_FETCH_SRC_REG))
      err(base + colon + 1,
          fmt::format("{} holds no string: read the one it points to with +0({}):string",
                      a.src == KTRACK_FETCH_SRC_STACK ? "a stack slot" : "a register", fetch));
  }
  check_arg(a, tok.pos, index);
  s_.args.push_back(a);
}

}  // namespace

SpecError::SpecError(const std::string &spec, size_t pos, const std::string &message)
    : UsageError(caret_text(spec, pos, message)), pos_(pos), message_(message) {}

ProbeSpec parse_probe_spec(const std::string &text) {
  ProbeSpec spec;
  spec.text = text;
  if (text.size() > 4096) fail(text, 4096, "spec is too long (max 4096 characters)");
  for (size_t i = 0; i < text.size(); i++)
    if (!std::isprint((unsigned char)text[i]) && !std::isspace((unsigned char)text[i]))
      fail(text, i, "non-printable character");
  Parser(spec.text, spec).run();
  bool btf = std::any_of(spec.args.begin(), spec.args.end(),
                         [](const FetchArg &a) { return a.all_args || !a.btf_expr.empty(); });
  // with BTF names the field types are known only after resolution
  if (!spec.filter.empty() && !btf) compile_filter(spec);
  return spec;
}

// ---- symbol resolution -------------------------------------------------------

void resolve_symbols(ProbeSpec &spec, SymbolSource &syms) {
  const std::string &t = spec.text;
  auto target_pos = [&]() -> size_t {
    size_t i = 0;
    while (i < t.size() && std::isspace((unsigned char)t[i])) i++;
    while (i < t.size() && !std::isspace((unsigned char)t[i])) i++;
    while (i < t.size() && std::isspace((unsigned char)t[i])) i++;
    return i;
  };
  if ((spec.kind == ProbeKind::kKprobe || spec.kind == ProbeKind::kKretprobe) && !spec.symbol.empty()) {
    auto addrs = syms.lookup(spec.module, spec.symbol);
    if (addrs.empty() && spec.module.empty())
      fail(t, target_pos(),
           fmt::format("symbol not found: {} (is its module loaded? write MOD:{} to wait for it)",
                       spec.symbol, spec.symbol));
    if (addrs.size() > 1)
      fail(t, target_pos(),
           fmt::format("{} is not unique ({} definitions): write MOD:{} or probe by address", spec.symbol,
                       addrs.size(), spec.symbol));
  }
  if (spec.kind == ProbeKind::kFuncs) {
    auto all = syms.filter_functions();
    std::set<std::string> names;
    for (const auto &line : all) {
      std::string n = line.substr(0, line.find_first_of(" \t"));
      names.insert(n);
    }
    std::set<std::string> picked;
    size_t pos = target_pos();
    for (const auto &pat : spec.patterns) {
      size_t before = picked.size();
      if (has_glob(pat)) {
        for (const auto &n : names)
          if (glob_match(pat, n)) picked.insert(n);
        if (picked.size() == before) fail(t, pos, fmt::format("no traceable function matches '{}'", pat));
      } else if (names.count(pat)) {
        picked.insert(pat);
      } else {
        // An alias of a traceable function (6.1 lists __do_sys_getppid, not
        // __x64_sys_getppid at the same address; 6.12 the other way round):
        // the same spec must attach the same function on every kernel.
        std::string alias;
        for (const auto &n : syms.aliases(pat))
          if (names.count(n)) {
            alias = n;
            break;
          }
        if (alias.empty())
          fail(
              t, pos,
              fmt::format("{} is not a function ftrace can attach to (see available_filter_functions)", pat));
        picked.insert(alias);
      }
      pos += pat.size() + 1;
    }
    if (picked.size() > KTRACK_PROBE_MAX_FUNCS)
      fail(t, target_pos(),
           fmt::format("the pattern names {} functions (max {}): narrow it", picked.size(),
                       KTRACK_PROBE_MAX_FUNCS));
    spec.funcs.assign(picked.begin(), picked.end());
  }
  if (spec.kind == ProbeKind::kTracepoint && !syms.tracepoint_exists(spec.subsys, spec.event))
    fail(t, target_pos(),
         fmt::format("no such tracepoint: {}{}{}", spec.subsys, spec.subsys.empty() ? "" : "/", spec.event));
  for (auto &a : spec.args) {
    if (a.symbol.empty()) continue;
    auto addrs = syms.lookup("", a.symbol);
    if (addrs.empty()) fail(t, a.pos, fmt::format("symbol not found: {}", a.symbol));
    if (addrs.size() > 1) fail(t, a.pos, fmt::format("{} is not unique: use @ADDR", a.symbol));
    a.param = (int64_t)addrs[0];
  }
}

// ---- compiler -----------------------------------------------------------------

namespace {

void put(std::vector<uint8_t> &b, const void *p, size_t n) {
  const auto *c = static_cast<const uint8_t *>(p);
  b.insert(b.end(), c, c + n);
}

void align8(std::vector<uint8_t> &b) {
  while (b.size() % 8) b.push_back(0);
}

}  // namespace

std::vector<uint8_t> compile_probe(const ProbeSpec &spec) {
  ktrack_probe_desc d{};
  d.version = KTRACK_PROBE_DESC_VERSION;
  d.hdr_size = sizeof(d);
  switch (spec.kind) {
    case ProbeKind::kKprobe:
      d.kind = KTRACK_PROBE_KPROBE;
      break;
    case ProbeKind::kKretprobe:
      d.kind = KTRACK_PROBE_KRETPROBE;
      break;
    case ProbeKind::kFuncs:
      d.kind = KTRACK_PROBE_FUNCS;
      d.flags = (spec.entry ? KTRACK_PROBE_F_ENTRY : 0) | (spec.exit ? KTRACK_PROBE_F_EXIT : 0);
      break;
    case ProbeKind::kTracepoint:
      d.kind = KTRACK_PROBE_TRACEPOINT;
      break;
  }
  std::snprintf(d.name, sizeof(d.name), "%s", spec.name.c_str());
  std::snprintf(d.module, sizeof(d.module), "%s", spec.module.c_str());
  const std::string &sym = spec.kind == ProbeKind::kTracepoint ? spec.event : spec.symbol;
  std::snprintf(d.symbol, sizeof(d.symbol), "%s", sym.c_str());
  d.addr = spec.addr;
  d.offset = spec.offset;
  d.hit_limit = spec.hit_limit;
  d.maxactive = spec.maxactive;
  d.stack_depth = spec.stack_depth;
  d.nr_fetch = (uint16_t)spec.args.size();
  d.nr_insns = (uint16_t)spec.program.size();

  std::vector<uint8_t> b(sizeof(d));
  // fetches
  if (!spec.args.empty()) {
    d.fetch_off = (uint32_t)b.size();
    for (const auto &a : spec.args) {
      if (a.all_args || !a.btf_expr.empty())
        throw Error(
            fmt::format("argument '{}' needs BTF to resolve: this kernel or build has no BTF", a.name));
      ktrack_probe_fetch f{};
      std::snprintf(f.name, sizeof(f.name), "%s", a.name.c_str());
      f.src = a.src;
      f.type = a.type;
      f.size = a.size;
      f.nderef = (uint8_t)a.deref.size();
      f.count = a.count;
      f.flags = a.flags;
      f.param = a.param;
      for (size_t i = 0; i < a.deref.size(); i++) f.deref[i] = a.deref[i];
      put(b, &f, sizeof(f));
    }
  }
  // filter: strings go to the string table
  std::string strtab;
  if (!spec.program.empty()) {
    d.insns_off = (uint32_t)b.size();
    for (const auto &fi : spec.program) {
      ktrack_probe_insn in = fi.insn;
      if (in.op == KTRACK_FLT_CMP &&
          (in.cmp == KTRACK_FLT_GLOB || !fi.str.empty() || in.field_kind == KTRACK_FLD_COMM ||
           (in.field_kind == KTRACK_FLD_FETCH && (spec.args[in.field].type == KTRACK_FETCH_T_STRING ||
                                                  spec.args[in.field].type == KTRACK_FETCH_T_USTRING)))) {
        in.str_off = (uint32_t)strtab.size();
        strtab += fi.str;
        strtab.push_back('\0');
      }
      put(b, &in, sizeof(in));
    }
  }
  if (spec.kind == ProbeKind::kFuncs) {
    d.nr_funcs = (uint16_t)spec.funcs.size();
    d.funcs_off = (uint32_t)b.size();
    for (const auto &f : spec.funcs) {
      b.insert(b.end(), f.begin(), f.end());
      b.push_back(0);
    }
    d.funcs_len = (uint32_t)(b.size() - d.funcs_off);
  }
  if (!strtab.empty()) {
    d.strtab_off = (uint32_t)b.size();
    d.strtab_len = (uint32_t)strtab.size();
    put(b, strtab.data(), strtab.size());
  }
  d.spec_off = (uint32_t)b.size();
  d.spec_len = (uint32_t)spec.text.size() + 1;
  put(b, spec.text.c_str(), spec.text.size() + 1);
  align8(b);
  if (b.size() > KTRACK_PROBE_DESC_MAX)
    throw UsageError("the probe description is too large: use fewer functions");
  d.size = (uint32_t)b.size();
  std::memcpy(b.data(), &d, sizeof(d));
  return b;
}

// ---- decoding -----------------------------------------------------------------

uint32_t layout_fields(std::vector<ProbeField> &fields) {
  uint32_t off = 0;
  for (auto &f : fields) {
    bool str = f.type == KTRACK_FETCH_T_STRING || f.type == KTRACK_FETCH_T_USTRING;
    uint32_t align = str ? 4 : std::min<uint32_t>(f.size, 8);
    uint32_t len = str ? 4 : (uint32_t)f.size * f.count;
    off = (off + align - 1) / align * align;
    f.slot = (uint16_t)off;
    off += len;
  }
  return off;
}

ProbeSchema schema_from_desc(const std::vector<uint8_t> &blob) {
  ktrack_probe_desc d{};
  if (blob.size() < sizeof(d)) throw Error("probe description is truncated");
  std::memcpy(&d, blob.data(), sizeof(d));
  if (d.size != blob.size() || d.hdr_size != sizeof(d) || d.version != KTRACK_PROBE_DESC_VERSION)
    throw Error("probe description has an unknown version or size");
  if ((uint64_t)d.fetch_off + (uint64_t)d.nr_fetch * sizeof(ktrack_probe_fetch) > blob.size())
    throw Error("probe description is truncated");
  ProbeSchema s;
  s.name.assign(d.name, strnlen(d.name, sizeof(d.name)));
  s.kind = d.kind;
  if (d.spec_len && (uint64_t)d.spec_off + d.spec_len <= blob.size())
    s.spec.assign(reinterpret_cast<const char *>(blob.data()) + d.spec_off,
                  strnlen(reinterpret_cast<const char *>(blob.data()) + d.spec_off, d.spec_len));
  for (uint16_t i = 0; i < d.nr_fetch; i++) {
    ktrack_probe_fetch f;
    std::memcpy(&f, blob.data() + d.fetch_off + i * sizeof(f), sizeof(f));
    ProbeField pf;
    pf.name.assign(f.name, strnlen(f.name, sizeof(f.name)));
    pf.type = f.type;
    pf.size = f.size;
    pf.count = f.count;
    s.fields.push_back(pf);
  }
  layout_fields(s.fields);
  return s;
}

namespace {

std::string format_scalar(const ProbeField &f, const uint8_t *p) {
  uint64_t u = 0;
  std::memcpy(&u, p, f.size);
  switch (f.type) {
    case KTRACK_FETCH_T_S: {
      int64_t v = f.size == 1 ? (int8_t)u : f.size == 2 ? (int16_t)u : f.size == 4 ? (int32_t)u : (int64_t)u;
      return fmt::format("{}", v);
    }
    case KTRACK_FETCH_T_U:
      return fmt::format("{}", u);
    default:
      return fmt::format("0x{:x}", u);
  }
}

std::string quote(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += fmt::format("\\{}", c);
    else if (std::isprint((unsigned char)c))
      out += c;
    else
      out += fmt::format("\\x{:02x}", (unsigned char)c);
  }
  return out + "\"";
}

}  // namespace

std::string format_probe_fields(const ProbeSchema &schema, const uint8_t *data, size_t len,
                                uint32_t fault_mask) {
  std::string out;
  for (size_t i = 0; i < schema.fields.size(); i++) {
    const auto &f = schema.fields[i];
    if (!out.empty()) out += ' ';
    out += f.name + "=";
    bool str = f.type == KTRACK_FETCH_T_STRING || f.type == KTRACK_FETCH_T_USTRING;
    size_t need = str ? 4 : (size_t)f.size * f.count;
    if (f.slot + need > len) {
      out += "(truncated)";
      continue;
    }
    if (i < 32 && (fault_mask & (1u << i))) {
      out += "(fault)";
      continue;
    }
    const uint8_t *p = data + f.slot;
    if (str) {
      uint32_t loc;
      std::memcpy(&loc, p, 4);
      size_t off = loc >> 16, n = loc & 0xffff;
      if (off + n > len) {
        out += "(truncated)";
        continue;
      }
      out += quote(std::string(reinterpret_cast<const char *>(data) + off, n));
      continue;
    }
    if (f.count > 1) {
      out += '{';
      for (uint16_t k = 0; k < f.count; k++) {
        if (k) out += ',';
        out += format_scalar(f, p + k * f.size);
      }
      out += '}';
      continue;
    }
    out += format_scalar(f, p);
  }
  return out;
}

const char *mechanism_name(uint32_t m) {
  switch (m) {
    case KTRACK_MECH_KPROBE:
      return "kprobe";
    case KTRACK_MECH_KRETPROBE:
      return "kretprobe";
    case KTRACK_MECH_FPROBE:
      return "fprobe";
    case KTRACK_MECH_KPROBE_FTRACE:
      return "kprobe+kretprobe (ftrace)";
    case KTRACK_MECH_TRACEPOINT:
      return "tracepoint";
    default:
      return "unknown";
  }
}

const char *probe_state_name(uint32_t s) {
  switch (s) {
    case KTRACK_PROBE_ST_PENDING:
      return "pending";
    case KTRACK_PROBE_ST_ARMED:
      return "armed";
    case KTRACK_PROBE_ST_DISARMED:
      return "disarmed";
    default:
      return "unknown";
  }
}

const char *probe_kind_name(uint32_t k) {
  switch (k) {
    case KTRACK_PROBE_KPROBE:
      return "p";
    case KTRACK_PROBE_KRETPROBE:
      return "r";
    case KTRACK_PROBE_FUNCS:
      return "f";
    case KTRACK_PROBE_TRACEPOINT:
      return "t";
    default:
      return "?";
  }
}

}  // namespace ktrack
