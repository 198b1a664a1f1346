// Filter compiler (see probes/filter_compiler.hpp).
#include "probes/filter_compiler.hpp"

#include "util/glob.hpp"

#include <fmt/core.h>

#include <cctype>
#include <cerrno>
#include <cstring>

namespace ktrack {

namespace {

struct Tok {
  enum Kind { kEnd, kWord, kNum, kStr, kOp, kLParen, kRParen, kAnd, kOr, kNot } kind;
  std::string text;
  int64_t num = 0;
  size_t pos = 0;  // in the whole spec
};

class FilterParser {
 public:
  explicit FilterParser(ProbeSpec &spec) : s_(spec), f_(spec.filter), base_(spec.filter_pos) { next(); }

  void run() {
    parse_or();
    if (cur_.kind != Tok::kEnd) err(cur_.pos, "unexpected text after the condition");
    if (s_.program.size() > KTRACK_PROBE_MAX_INSNS)
      err(base_, fmt::format("the condition is too long ({} operations, max {})", s_.program.size(),
                             KTRACK_PROBE_MAX_INSNS));
  }

 private:
  [[noreturn]] void err(size_t pos, const std::string &m) { throw SpecError(s_.text, pos, m); }

  void next() {
    while (i_ < f_.size() && std::isspace((unsigned char)f_[i_])) i_++;
    cur_ = Tok{Tok::kEnd, "", 0, base_ + i_};
    if (i_ >= f_.size()) return;
    char c = f_[i_];
    auto two = f_.substr(i_, 2);
    if (two == "&&" || two == "||") {
      cur_.kind = two == "&&" ? Tok::kAnd : Tok::kOr;
      i_ += 2;
      return;
    }
    if (two == "==" || two == "!=" || two == "<=" || two == ">=") {
      cur_.kind = Tok::kOp;
      cur_.text = two;
      i_ += 2;
      return;
    }
    if (c == '<' || c == '>' || c == '&' || c == '~') {
      cur_.kind = Tok::kOp;
      cur_.text = std::string(1, c);
      i_++;
      return;
    }
    if (c == '=') err(base_ + i_, "expected an operator: use == to compare");
    if (c == '!') {
      cur_.kind = Tok::kNot;
      i_++;
      return;
    }
    if (c == '(' || c == ')') {
      cur_.kind = c == '(' ? Tok::kLParen : Tok::kRParen;
      i_++;
      return;
    }
    if (c == '"' || c == '\'') {
      size_t e = f_.find(c, i_ + 1);
      if (e == std::string::npos) err(base_ + i_, "unterminated string");
      cur_.kind = Tok::kStr;
      cur_.text = f_.substr(i_ + 1, e - i_ - 1);
      i_ = e + 1;
      return;
    }
    size_t st = i_;
    while (i_ < f_.size() && !std::isspace((unsigned char)f_[i_]) && !std::strchr("()&|!=<>~\"'", f_[i_]))
      i_++;
    if (i_ == st) err(base_ + i_, "unexpected character in the condition");
    cur_.text = f_.substr(st, i_ - st);
    cur_.kind = Tok::kWord;
    const std::string &w = cur_.text;
    bool neg = w[0] == '-';
    std::string digits = neg ? w.substr(1) : w;
    if (!digits.empty() && std::isdigit((unsigned char)digits[0])) {
      errno = 0;
      char *end = nullptr;
      unsigned long long v = std::strtoull(digits.c_str(), &end, 0);
      if (*end || errno) err(cur_.pos, "bad number");
      cur_.kind = Tok::kNum;
      cur_.num = neg ? -(int64_t)v : (int64_t)v;
    }
  }

  void emit(uint8_t op) {
    FilterInsn fi;
    fi.insn.op = op;
    s_.program.push_back(fi);
  }

  void parse_or() {
    parse_and();
    while (cur_.kind == Tok::kOr) {
      next();
      parse_and();
      emit(KTRACK_FLT_OR);
    }
  }

  void parse_and() {
    parse_unary();
    while (cur_.kind == Tok::kAnd) {
      next();
      parse_unary();
      emit(KTRACK_FLT_AND);
    }
  }

  void parse_unary() {
    if (++depth_ > 32) err(cur_.pos, "the condition is nested too deep");
    if (cur_.kind == Tok::kNot) {
      next();
      parse_unary();
      emit(KTRACK_FLT_NOT);
    } else if (cur_.kind == Tok::kLParen) {
      size_t open = cur_.pos;
      next();
      parse_or();
      if (cur_.kind != Tok::kRParen) err(cur_.kind == Tok::kEnd ? open : cur_.pos, "missing ')'");
      next();
    } else {
      parse_cmp();
    }
    depth_--;
  }

  void parse_cmp() {
    if (cur_.kind != Tok::kWord) err(cur_.pos, "expected a field name (an argument, pid, tgid, comm or cpu)");
    Tok field = cur_;
    FilterInsn fi;
    fi.insn.op = KTRACK_FLT_CMP;
    bool is_str = false, is_signed = false;
    size_t k = 0;
    for (; k < s_.args.size(); k++)
      if (s_.args[k].name == field.text) break;
    // fetched arguments first; pid, tgid, cpu, comm name the current task
    if (k == s_.args.size() &&
        (field.text == "pid" || field.text == "tgid" || field.text == "cpu" || field.text == "comm")) {
      fi.insn.field_kind = field.text == "pid"    ? KTRACK_FLD_PID
                           : field.text == "tgid" ? KTRACK_FLD_TGID
                           : field.text == "cpu"  ? KTRACK_FLD_CPU
                                                  : KTRACK_FLD_COMM;
      is_str = field.text == "comm";
    } else {
      if (k == s_.args.size())
        err(field.pos,
            fmt::format("unknown field '{}': use an argument name, pid, tgid, comm or cpu", field.text));
      const FetchArg &a = s_.args[k];
      if (a.count > 1) err(field.pos, "cannot filter on an array");
      fi.insn.field_kind = KTRACK_FLD_FETCH;
      fi.insn.field = (uint8_t)k;
      is_str = a.type == KTRACK_FETCH_T_STRING || a.type == KTRACK_FETCH_T_USTRING;
      is_signed = a.type == KTRACK_FETCH_T_S;
    }
    next();
    if (cur_.kind != Tok::kOp) err(cur_.pos, "expected an operator: == != < <= > >= & ~");
    Tok op = cur_;
    next();
    Tok val = cur_;
    if (val.kind != Tok::kNum && val.kind != Tok::kStr && val.kind != Tok::kWord)
      err(val.pos, "expected a value after the operator");
    next();
    bool negate = false;
    if (is_str) {
      if (val.kind == Tok::kNum) val.text = f_.substr(val.pos - base_, i_ - (val.pos - base_));
      bool glob = has_glob(val.text);
      if (op.text == "~") {
        fi.insn.cmp = KTRACK_FLT_GLOB;
      } else if (op.text == "==" || op.text == "!=") {
        fi.insn.cmp = glob ? KTRACK_FLT_GLOB : op.text == "==" ? KTRACK_FLT_EQ : KTRACK_FLT_NE;
        negate = glob && op.text == "!=";
      } else {
        err(op.pos, "strings compare with ==, != or ~ (glob)");
      }
      if (val.text.size() > KTRACK_FLT_GLOB_MAX)
        err(val.pos, fmt::format("string is too long (max {})", KTRACK_FLT_GLOB_MAX));
      if (fi.insn.cmp == KTRACK_FLT_GLOB)
        for (size_t q = val.text.find('['); q != std::string::npos; q = val.text.find('[', q + 1)) {
          size_t end = val.text.find(']', q + 1);
          if (end == std::string::npos) end = val.text.size();
          if (end - q - 1 > KTRACK_FLT_GLOB_CLASS_MAX)
            err(val.pos + (val.kind == Tok::kStr ? 1 : 0) + q,
                fmt::format("a [...] class is too long (max {} characters)", KTRACK_FLT_GLOB_CLASS_MAX));
          q = end;
          if (q >= val.text.size()) break;
        }
      fi.str = val.text;
    } else {
      if (val.kind != Tok::kNum)
        err(val.pos, fmt::format("'{}' is a number: compare it with a number", field.text));
      static const std::pair<const char *, uint8_t> ops[] = {
          {"==", KTRACK_FLT_EQ}, {"!=", KTRACK_FLT_NE}, {"<", KTRACK_FLT_LT},    {"<=", KTRACK_FLT_LE},
          {">", KTRACK_FLT_GT},  {">=", KTRACK_FLT_GE}, {"&", KTRACK_FLT_BITAND}};
      fi.insn.cmp = 0;
      for (const auto &[t, c] : ops)
        if (op.text == t) fi.insn.cmp = c;
      if (!fi.insn.cmp) err(op.pos, "'~' (glob) is for strings");
      (void)is_signed;
      fi.insn.imm = val.num;
    }
    s_.program.push_back(fi);
    if (negate) emit(KTRACK_FLT_NOT);
  }

  ProbeSpec &s_;
  const std::string &f_;
  size_t base_;
  size_t i_ = 0;
  int depth_ = 0;
  Tok cur_{};
};

}  // namespace

void compile_filter(ProbeSpec &spec) {
  spec.program.clear();
  if (spec.filter.empty()) return;
  FilterParser(spec).run();
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
