// Filter compiler (see probes/filter_compiler.hpp).
#include "probes/filter_compiler.hpp"

#include "util/glob.hpp"
#include "util/predicate.hpp"

#include <fmt/core.h>

#include <cctype>
#include <cerrno>
#include <cstring>

namespace ktrack {

namespace {

// Types each comparison of the parsed condition against the probe's fetch
// arguments (and pid, tgid, cpu, comm) and emits the kernel's postfix program.
class FilterCompiler {
 public:
  explicit FilterCompiler(ProbeSpec &spec) : s_(spec), base_(spec.filter_pos) {}

  void run() {
    predicate::Expr e;
    try {
      e = predicate::parse(s_.filter, "an argument, pid, tgid, comm or cpu");
    } catch (const predicate::Error &x) {
      err(x.pos, x.what());
    }
    for (const auto &n : e.nodes) {
      switch (n.kind) {
        case predicate::Node::Compare:
          compare(e.comparisons[n.comparison]);
          break;
        case predicate::Node::And:
          emit(KTRACK_FLT_AND);
          break;
        case predicate::Node::Or:
          emit(KTRACK_FLT_OR);
          break;
        case predicate::Node::Not:
          emit(KTRACK_FLT_NOT);
          break;
      }
    }
    if (s_.program.size() > KTRACK_PROBE_MAX_INSNS)
      err(0, fmt::format("the condition is too long ({} operations, max {})", s_.program.size(),
                         KTRACK_PROBE_MAX_INSNS));
  }

 private:
  // 'pos' is in the condition; SpecError wants it in the whole spec.
  [[noreturn]] void err(size_t pos, const std::string &m) { throw SpecError(s_.text, base_ + pos, m); }

  void emit(uint8_t op) {
    FilterInsn fi;
    fi.insn.op = op;
    s_.program.push_back(fi);
  }

  void compare(const predicate::Comparison &c) {
    FilterInsn fi;
    fi.insn.op = KTRACK_FLT_CMP;
    bool is_str = false;
    size_t k = 0;
    for (; k < s_.args.size(); k++)
      if (s_.args[k].name == c.field) break;
    // fetched arguments first; pid, tgid, cpu, comm name the current task
    if (k == s_.args.size() &&
        (c.field == "pid" || c.field == "tgid" || c.field == "cpu" || c.field == "comm")) {
      fi.insn.field_kind = c.field == "pid"    ? KTRACK_FLD_PID
                           : c.field == "tgid" ? KTRACK_FLD_TGID
                           : c.field == "cpu"  ? KTRACK_FLD_CPU
                                               : KTRACK_FLD_COMM;
      is_str = c.field == "comm";
    } else {
      if (k == s_.args.size())
        err(c.field_pos,
            fmt::format("unknown field '{}': use an argument name, pid, tgid, comm or cpu", c.field));
      const FetchArg &a = s_.args[k];
      if (a.count > 1) err(c.field_pos, "cannot filter on an array");
      fi.insn.field_kind = KTRACK_FLD_FETCH;
      fi.insn.field = static_cast<uint8_t>(k);
      is_str = a.type == KTRACK_FETCH_T_STRING || a.type == KTRACK_FETCH_T_USTRING;
    }
    bool negate = false;
    if (is_str) {
      bool glob = has_glob(c.value);
      if (c.op == "~") {
        fi.insn.cmp = KTRACK_FLT_GLOB;
      } else if (c.op == "==" || c.op == "!=") {
        fi.insn.cmp = glob ? KTRACK_FLT_GLOB : c.op == "==" ? KTRACK_FLT_EQ : KTRACK_FLT_NE;
        negate = glob && c.op == "!=";
      } else {
        err(c.op_pos, "strings compare with ==, != or ~ (glob)");
      }
      if (c.value.size() > KTRACK_FLT_GLOB_MAX)
        err(c.value_pos, fmt::format("string is too long (max {})", KTRACK_FLT_GLOB_MAX));
      if (fi.insn.cmp == KTRACK_FLT_GLOB) check_classes(c);
      fi.str = c.value;
    } else {
      fi.insn.imm = number(c);
      static const std::pair<const char *, uint8_t> ops[] = {
          {"==", KTRACK_FLT_EQ}, {"!=", KTRACK_FLT_NE}, {"<", KTRACK_FLT_LT},    {"<=", KTRACK_FLT_LE},
          {">", KTRACK_FLT_GT},  {">=", KTRACK_FLT_GE}, {"&", KTRACK_FLT_BITAND}};
      fi.insn.cmp = 0;
      for (const auto &[t, op] : ops)
        if (c.op == t) fi.insn.cmp = op;
      if (!fi.insn.cmp) err(c.op_pos, "'~' (glob) is for strings");
    }
    s_.program.push_back(fi);
    if (negate) emit(KTRACK_FLT_NOT);
  }

  // The value of a numeric comparison: decimal, 0x hex or 0 octal, maybe negative.
  int64_t number(const predicate::Comparison &c) {
    const std::string &w = c.value;
    bool neg = !w.empty() && w[0] == '-';
    std::string digits = neg ? w.substr(1) : w;
    if (c.quoted || digits.empty() || !std::isdigit(static_cast<unsigned char>(digits[0])))
      err(c.value_pos, fmt::format("'{}' is a number: compare it with a number", c.field));
    errno = 0;
    char *end = nullptr;
    unsigned long long v = std::strtoull(digits.c_str(), &end, 0);
    if (*end || errno) err(c.value_pos, "bad number");
    return neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  }

  // The kernel bounds a [...] class of a glob (its matcher's work per hit).
  void check_classes(const predicate::Comparison &c) {
    const std::string &v = c.value;
    for (size_t q = v.find('['); q != std::string::npos; q = v.find('[', q + 1)) {
      size_t end = v.find(']', q + 1);
      if (end == std::string::npos) end = v.size();
      if (end - q - 1 > KTRACK_FLT_GLOB_CLASS_MAX)
        err(c.value_pos + (c.quoted ? 1 : 0) + q,
            fmt::format("a [...] class is too long (max {} characters)", KTRACK_FLT_GLOB_CLASS_MAX));
      q = end;
      if (q >= v.size()) break;
    }
  }

  ProbeSpec &s_;
  size_t base_;
};

}  // namespace

void compile_filter(ProbeSpec &spec) {
  spec.program.clear();
  if (spec.filter.empty()) return;
  FilterCompiler(spec).run();
}

std::string describe_filter(const ProbeSpec &spec) {
  static const char *cmps[] = {"?", "==", "!=", "<", "<=", ">", ">=", "&", "~"};
  std::string out;
  for (const auto &fi : spec.program) {
    const auto &in = fi.insn;
    if (!out.empty()) out += ' ';
    switch (in.op) {
      case KTRACK_FLT_AND:
        out += "AND";
        break;
      case KTRACK_FLT_OR:
        out += "OR";
        break;
      case KTRACK_FLT_NOT:
        out += "NOT";
        break;
      default: {
        std::string field;
        switch (in.field_kind) {
          case KTRACK_FLD_FETCH:
            field = spec.args[in.field].name;
            break;
          case KTRACK_FLD_PID:
            field = "pid";
            break;
          case KTRACK_FLD_TGID:
            field = "tgid";
            break;
          case KTRACK_FLD_COMM:
            field = "comm";
            break;
          default:
            field = "cpu";
            break;
        }
        const char *c = in.cmp <= KTRACK_FLT_GLOB ? cmps[in.cmp] : "?";
        if (fi.str.empty() && in.field_kind != KTRACK_FLD_COMM &&
            !(in.field_kind == KTRACK_FLD_FETCH && (spec.args[in.field].type == KTRACK_FETCH_T_STRING ||
                                                    spec.args[in.field].type == KTRACK_FETCH_T_USTRING)))
          out += fmt::format("({} {} {})", field, c, in.imm);
        else
          out += fmt::format("({} {} \"{}\")", field, c, fi.str);
      }
    }
  }
  return out;
}

}  // namespace ktrack
