// Probe spec parsing: one fetch argument (NAME=FETCH:TYPE), its fetch
// forms, dereferences and types, and the checks ftrace makes on them.
#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>

#include "probes/spec_parser.hpp"

namespace ktrack::spec_detail {

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
    if (s_.reads_fields() && v != "comm" && v != "cpu") {
      // e: every other $NAME is a field of the event (checked against its
      // format when the spec is resolved)
      if (!is_ident(v))
        err(pos,
            "an e probe reads the event's fields: $FIELD (listed in events/SUBSYS/EVENT/format of tracefs)");
      a.src = KTRACK_FETCH_SRC_FIELD;
      a.field = v;
      if (depth == 0 && a.name.empty()) a.name = v;
      return;
    }
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
        refuse_in_user(pos, "BTF names (user code has no BTF)");
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
      refuse_in_user(pos, "BTF names (user code has no BTF)");
      if (!s_.has_exit()) err(pos, "$retval is only for return probes (r, ur, or f with %return/%both)");
      a.src = KTRACK_FETCH_SRC_RETVAL;
      a.btf_expr = s;
      return;
    }
    if (v == "retval" || v == "duration") {
      if (!s_.has_exit())
        err(pos, fmt::format("${} is only for return probes (r, ur, or f with %return/%both)", v));
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
    if (is_ident(v)) refuse_in_user(pos, "$FIELD (event fields are for e probes)");
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
    if (s_.reads_fields())
      err(pos,
          fmt::format("{} probes have no registers: use $FIELD", s_.kind == ProbeKind::kEvent ? "e" : "U"));
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
    refuse_in_user(pos, "@SYM or @ADDR (kernel memory)");
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
  if (s_.reads_fields())
    err(pos, fmt::format("an {} probe reads the event's fields as $FIELD: write ${}",
                         s_.kind == ProbeKind::kEvent ? "e" : "U", s));
  refuse_in_user(pos, "BTF names (user code has no BTF)");
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
  if (s_.is_user() && a.src != KTRACK_FETCH_SRC_COMM) {
    // user code: memory is user memory, strings user strings
    if (!a.deref.empty()) a.flags |= KTRACK_FETCH_F_USER;
    if (a.type == KTRACK_FETCH_T_STRING) a.type = KTRACK_FETCH_T_USTRING;
    if (a.type == KTRACK_FETCH_T_SYMBOL)
      err(pos, "a u probe reads user addresses: :symbol names kernel symbols, use :x64");
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
    refuse_in_user(base, fmt::format("{} (it needs BTF, which user code has not)", s).c_str());
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

}  // namespace ktrack::spec_detail
