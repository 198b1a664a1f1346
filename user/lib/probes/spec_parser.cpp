// Probe spec parsing: the head (kind, name, MAXACTIVE), the target, the
// split into arguments and the filter; SpecError's caret text.
#include "probes/probe_spec.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>

#include "probes/spec_parser.hpp"

namespace ktrack {

namespace {

std::string caret_text(const std::string &spec, size_t pos, const std::string &message) {
  if (pos > spec.size()) pos = spec.size();
  return fmt::format("{}\n  {}\n  {}^", message, spec, std::string(pos, ' '));
}
// Where "=>" starts outside quotes ('...' or "...", as the filter's), or npos.
size_t find_arrow(const std::string &t) {
  char quote = 0;
  for (size_t i = 0; i + 1 < t.size(); i++) {
    if (quote) {
      if (t[i] == quote) quote = 0;
    } else if (t[i] == '"' || t[i] == '\'') {
      quote = t[i];
    } else if (t[i] == '=' && t[i + 1] == '>') {
      return i;
    }
  }
  return std::string::npos;
}
}  // namespace

const char *action_name(uint16_t type) {
  switch (type) {
    case KTRACK_ACT_STOP:
      return "stop";
    case KTRACK_ACT_START:
      return "start";
    case KTRACK_ACT_STACK:
      return "stack";
    case KTRACK_ACT_SNAPSHOT:
      return "snapshot";
    default:
      return "?";
  }
}

namespace spec_detail {

void Parser::parse_actions(size_t pos) {
  size_t i = pos;
  while (i < t_.size()) {
    while (i < t_.size() && std::isspace((unsigned char)t_[i])) i++;
    if (i >= t_.size()) break;
    if (t_.compare(i, 2, "=>") == 0) {
      i += 2;
      while (i < t_.size() && std::isspace((unsigned char)t_[i])) i++;
      if (i >= t_.size() || t_.compare(i, 2, "=>") == 0)
        err(i, "'=>' needs an action: stop, start, snapshot or stack");
    }
    size_t start = i;
    while (i < t_.size() && !std::isspace((unsigned char)t_[i]) && t_.compare(i, 2, "=>") != 0) i++;
    std::string word = t_.substr(start, i - start);
    std::string name = word.substr(0, word.find(':'));
    ProbeAction a;
    a.pos = start;
    if (name == "stop")
      a.type = KTRACK_ACT_STOP;
    else if (name == "start")
      a.type = KTRACK_ACT_START;
    else if (name == "stack")
      a.type = KTRACK_ACT_STACK;
    else if (name == "snapshot")
      a.type = KTRACK_ACT_SNAPSHOT;
    else
      err(start,
          fmt::format("unknown action '{}': use stop, start, snapshot or stack (each with an optional :N)",
                      name));
    if (name.size() < word.size()) {
      auto n = parse_uint(word.substr(name.size() + 1));
      if (!n || *n == 0 || *n > UINT32_MAX)
        err(start + name.size() + 1,
            fmt::format("':N' after '{}' must be a count from 1 to {}", name, UINT32_MAX));
      a.count = static_cast<uint32_t>(*n);
    }
    for (const auto &o : s_.actions)
      if (o.type == a.type) err(start, fmt::format("action '{}' is given twice", name));
    if (s_.actions.size() >= KTRACK_PROBE_MAX_ACTIONS)
      err(start, fmt::format("too many actions (max {})", KTRACK_PROBE_MAX_ACTIONS));
    s_.actions.push_back(a);
  }
}

void Parser::run() {
  std::vector<Tok> toks;
  size_t i = 0;
  // "=> ACTION..." ends the spec: what comes before it is parsed as usual
  const size_t end = std::min(find_arrow(t_), t_.size());
  while (i < end) {
    while (i < end && std::isspace((unsigned char)t_[i])) i++;
    if (i >= end) break;
    size_t start = i;
    // "if" starts the filter: the rest, up to any "=>", is the condition
    if (toks.size() >= 2 && t_.compare(i, 2, "if") == 0 &&
        (i + 2 == end || std::isspace((unsigned char)t_[i + 2]))) {
      size_t c = i + 2;
      while (c < end && std::isspace((unsigned char)t_[c])) c++;
      if (c >= end) err(c, "'if' needs a condition");
      size_t e = end;
      while (e > c && std::isspace((unsigned char)t_[e - 1])) e--;
      s_.filter = t_.substr(c, e - c);
      s_.filter_pos = c;
      break;
    }
    int depth = 0;
    while (i < end && (depth > 0 || !std::isspace((unsigned char)t_[i]))) {
      if (t_[i] == '(') depth++;
      if (t_[i] == ')') depth--;
      if (t_[i] == '"') {  // quoted text keeps its spaces
        i++;
        while (i < end && t_[i] != '"') i++;
      }
      i++;
    }
    if (i > end) i = end;
    toks.push_back({t_.substr(start, i - start), start});
  }
  if (end < t_.size()) parse_actions(end);
  if (toks.empty()) err(0, "empty probe: expected p, r, f, t, e, u or ur");
  parse_head(toks[0]);
  if (s_.is_user())
    for (const auto &a : s_.actions)
      if (a.type == KTRACK_ACT_STACK)
        err(a.pos,
            "'=> stack' records the kernel stack, and the kernel stacks of a user probe say nothing: use "
            "stop, start or snapshot");
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
      case ProbeKind::kEvent:
      case ProbeKind::kUserEvent:
        n = std::isdigit((unsigned char)s_.event[0]) ? "t_" + s_.event : s_.event;  // a C identifier
        break;
      case ProbeKind::kUprobe:
      case ProbeKind::kUretprobe: {
        const char *k = s_.kind == ProbeKind::kUprobe ? "u" : "ur";
        n = s_.symbol.empty() ? fmt::format("{}_0x{:x}", k, s_.addr)
                              : fmt::format("{}_{}_{}", k, s_.symbol, s_.offset);
        // ELF names may hold what an identifier cannot (malloc@@GLIBC_2.2.5)
        std::replace_if(
            n.begin(), n.end(), [](char c) { return !std::isalnum((unsigned char)c) && c != '_'; }, '_');
        break;
      }
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
    case 'e':
      s_.kind = ProbeKind::kEvent;
      break;
    case 'U':
      s_.kind = ProbeKind::kUserEvent;
      break;
    case 'u':
      s_.kind = ProbeKind::kUprobe;
      if (h.size() > 1 && h[1] == 'r') {
        s_.kind = ProbeKind::kUretprobe;
        i = 2;
      }
      break;
    default:
      err(tok.pos,
          "unknown probe type: expected p (kprobe), r (return), f (functions), t (tracepoint), e "
          "(event fields), u (uprobe), ur (uretprobe) or U (user event)");
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

// A target's MOD: prefix (p, r, f, t, e): sets s_.module ('-' read as '_',
// as modprobe does) and returns where the rest starts; 0 without one.
size_t Parser::parse_module(const std::string &x, size_t pos) {
  size_t colon = x.find(':');
  if (colon == std::string::npos) return 0;
  std::string mod = x.substr(0, colon);
  if (mod.empty()) err(pos, "missing module name before ':'");
  for (size_t k = 0; k < mod.size(); k++)
    if (!std::isalnum((unsigned char)mod[k]) && mod[k] != '_' && mod[k] != '-')
      err(pos + k, "bad character in the module name");
  if (mod.size() >= KTRACK_PROBE_MOD_MAX) err(pos, "module name is too long");
  std::replace(mod.begin(), mod.end(), '-', '_');
  s_.module = mod;
  return colon + 1;
}

// u / ur: PATH:SYMBOL[+OFFS] | PATH:0xADDR, PATH absolute, split at the
// last ':' (a path may hold one, a symbol may not).
void Parser::parse_user_target(const Tok &tok) {
  const std::string &x = tok.str;
  if (x[0] != '/')
    err(tok.pos,
        "a u probe names its file by absolute path: write /PATH/FILE:SYMBOL (e.g. "
        "/lib/x86_64-linux-gnu/libc.so.6:malloc) or /PATH/FILE:0xADDR");
  size_t colon = x.rfind(':');
  if (colon == std::string::npos)
    err(tok.pos + x.size(), "missing ':SYMBOL' after the path: write PATH:SYMBOL[+OFFS] or PATH:0xADDR");
  s_.path = x.substr(0, colon);
  if (s_.path.size() + 1 > KTRACK_PROBE_PATH_MAX)
    err(tok.pos, fmt::format("the path is too long (max {} characters)", KTRACK_PROBE_PATH_MAX - 1));
  const size_t base = colon + 1;
  std::string rest = x.substr(base);
  if (rest.empty())
    err(tok.pos + base, "missing symbol or address after the path: write PATH:SYMBOL[+OFFS] or PATH:0xADDR");
  size_t pct = rest.find('%');
  if (pct != std::string::npos) {  // SYMBOL%return: ur, as p's %return is r
    if (rest.compare(pct, std::string::npos, "%return") != 0)
      err(tok.pos + base + pct, "unknown suffix: the only one is %return (a return probe)");
    rest.resize(pct);
    if (rest.find('+') != std::string::npos)
      err(tok.pos + base, "return probes go on a function entry: drop the offset");
    s_.kind = ProbeKind::kUretprobe;
  }
  if (std::isdigit((unsigned char)rest[0])) {
    auto v = parse_uint(rest);
    if (!v || *v == 0) err(tok.pos + base, "bad address: use PATH:0xHEX (an ELF address, as nm prints it)");
    s_.addr = *v;
    return;
  }
  size_t plus = rest.find_first_of("+-");
  std::string sym = rest.substr(0, plus);
  if (sym.empty()) err(tok.pos + base, "missing symbol after the path");
  for (size_t k = 0; k < sym.size(); k++)
    if (!is_symbol_char(sym[k]) && sym[k] != '@') err(tok.pos + base + k, "bad character in the symbol name");
  if (sym.size() >= KTRACK_PROBE_SYM_MAX) err(tok.pos + base, "symbol name is too long");
  s_.symbol = sym;
  if (plus != std::string::npos) {
    if (rest[plus] == '-') err(tok.pos + base + plus, "a negative offset is not allowed: use SYMBOL+OFFS");
    auto v = parse_uint(rest.substr(plus + 1));
    if (!v) err(tok.pos + base + plus + 1, "bad offset: use SYMBOL+DECIMAL or SYMBOL+0xHEX");
    if (*v > (1u << 20)) err(tok.pos + base + plus + 1, "offset is too large");
    if (s_.kind == ProbeKind::kUretprobe && *v)
      err(tok.pos + base + plus, "return probes go on a function entry: drop the offset");
    s_.offset = *v;
  }
}

void Parser::parse_target(const Tok &tok) {
  const std::string &x = tok.str;
  target_pos_ = tok.pos;
  if (s_.is_user()) {
    parse_user_target(tok);
    return;
  }
  if (s_.kind == ProbeKind::kUserEvent) {
    // [SYSTEM/]EVENT, as the program registered it (no module)
    size_t slash = x.find('/');
    auto word = [](const std::string &w) {
      return !w.empty() && std::all_of(w.begin(), w.end(),
                                       [](char c) { return std::isalnum((unsigned char)c) || c == '_'; });
    };
    std::string sub = slash == std::string::npos ? "" : x.substr(0, slash);
    std::string ev = slash == std::string::npos ? x : x.substr(slash + 1);
    if ((slash != std::string::npos && !word(sub)) || !word(ev))
      err(tok.pos, "a user event is named [SYSTEM/]EVENT, each a word of letters, digits and '_'");
    if (x.size() >= KTRACK_UEVENT_NAME_MAX)
      err(tok.pos,
          fmt::format("user event name is too long (max {} characters)", KTRACK_UEVENT_NAME_MAX - 1));
    s_.subsys = sub;
    s_.event = ev;
    return;
  }
  if (s_.kind == ProbeKind::kTracepoint || s_.kind == ProbeKind::kEvent) {
    // [MOD:][SUBSYS/]EVENT (e: the system is required)
    size_t base = parse_module(x, tok.pos);
    std::string t = x.substr(base);
    size_t slash = t.find('/');
    std::string sub = slash == std::string::npos ? "" : t.substr(0, slash);
    std::string ev = slash == std::string::npos ? t : t.substr(slash + 1);
    // systems and events may start with a digit (9p/9p_client_req)
    auto tp_word = [](const std::string &w) {
      return !w.empty() && std::all_of(w.begin(), w.end(),
                                       [](char c) { return std::isalnum((unsigned char)c) || c == '_'; });
    };
    if (slash != std::string::npos && !tp_word(sub)) err(tok.pos + base, "bad tracepoint system name");
    if (!tp_word(ev))
      err(tok.pos + base + (slash == std::string::npos ? 0 : slash + 1), "bad tracepoint event name");
    if (ev.size() >= KTRACK_PROBE_SYM_MAX) err(tok.pos + base, "event name is too long");
    if (s_.kind == ProbeKind::kEvent) {
      if (slash == std::string::npos) err(tok.pos + base, "an e probe names its event as SUBSYS/EVENT");
      if (t.size() >= KTRACK_PROBE_SYM_MAX) err(tok.pos + base, "event name is too long");
    }
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
    // MOD:GLOB[,GLOB...]: the globs are matched in the kernel against that
    // module's functions when it loads (or now, when it is loaded).
    size_t start = parse_module(list, tok.pos);
    size_t glob_bytes = 0;
    while (true) {
      size_t comma = list.find(',', start);
      std::string pat = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (pat.empty()) err(tok.pos + start, "empty function name in the list");
      for (size_t k = 0; k < pat.size(); k++) {
        char c = pat[k];
        if (!is_symbol_char(c) && c != '*' && c != '?' && c != '[' && c != ']' && c != '-' && c != '!')
          err(tok.pos + start + (c == ':' ? k : 0), c == ':'
                                                        ? "one module per f probe: write MOD:GLOB,GLOB..."
                                                    : c == '+' ? "f probes go on function entries: no +OFFS"
                                                               : "bad character in a function name or glob");
      }
      if (!s_.module.empty() && pat.size() >= KTRACK_PROBE_SYM_MAX)
        err(tok.pos + start, fmt::format("glob is too long (max {} characters)", KTRACK_PROBE_SYM_MAX - 1));
      if (!s_.module.empty() && s_.patterns.size() >= KTRACK_PROBE_MAX_FUNCS)
        err(tok.pos + start, fmt::format("too many globs (max {})", KTRACK_PROBE_MAX_FUNCS));
      glob_bytes += pat.size();
      if (!s_.module.empty() && glob_bytes > KTRACK_PROBE_MODGLOB_MAX)
        err(tok.pos + start,
            fmt::format("the globs of one module are too long ({} bytes in all at most: the kernel matches "
                        "each against every function of the module at its load)",
                        KTRACK_PROBE_MODGLOB_MAX));
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
  if (size_t after = parse_module(rest, tok.pos)) {
    base = after;
    rest = rest.substr(after);
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

}  // namespace spec_detail

using spec_detail::fail;
using spec_detail::Parser;

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
  // e: and with fields, after the event's format is read (resolve_symbols)
  if (!spec.filter.empty() && !btf && !spec.reads_fields()) compile_filter(spec);
  return spec;
}

}  // namespace ktrack
