// The one predicate grammar (util/predicate.hpp) and its two users: a
// probe's 'if' (probes/filter_compiler) and the views' --where
// (analysis/filter).  The same text parses the same way in both, and the
// same mistake gets the same sentence at the same place.
#include <gtest/gtest.h>

#include <string>

#include "analysis/filter.hpp"
#include "analysis_fixture.hpp"
#include "probes/probe_spec.hpp"
#include "util/error.hpp"
#include "util/predicate.hpp"

namespace predicate = ktrack::predicate;

namespace {

// The tree in postfix, one token per node: "a==1 b<2 AND".
std::string postfix(const predicate::Expr &e) {
  std::string out;
  for (const auto &n : e.nodes) {
    if (!out.empty()) out += ' ';
    switch (n.kind) {
      case predicate::Node::Compare: {
        const auto &c = e.comparisons[n.comparison];
        out += c.field + c.op + (c.quoted ? "\"" + c.value + "\"" : c.value);
        break;
      }
      case predicate::Node::And:
        out += "AND";
        break;
      case predicate::Node::Or:
        out += "OR";
        break;
      case predicate::Node::Not:
        out += "NOT";
        break;
    }
  }
  return out;
}

struct Failure {
  size_t pos = std::string::npos;
  std::string message;
};

Failure parse_error(const std::string &text) {
  try {
    predicate::parse(text, "a field");
  } catch (const predicate::Error &e) {
    return {e.pos, e.what()};
  }
  return {};
}

}  // namespace

TEST(Predicate, PrecedenceParenthesesAndNot) {
  EXPECT_EQ("a==1 b<2 AND c>=3 OR", postfix(predicate::parse("a == 1 && b < 2 || c >= 3", "")));
  EXPECT_EQ("a==1 b<2 c>=3 OR AND", postfix(predicate::parse("a == 1 && (b < 2 || c >= 3)", "")));
  EXPECT_EQ("a==1 NOT NOT b!=x AND", postfix(predicate::parse("!!a==1&&b!=x", "")));
  EXPECT_EQ("comm~\"ba sh*\" x&0x10 OR", postfix(predicate::parse("comm ~ 'ba sh*' || x & 0x10", "")));
  EXPECT_EQ("d>1.5ms", postfix(predicate::parse("d>1.5ms", "")));
  auto e = predicate::parse("  len  >=  -5", "");
  ASSERT_EQ(1u, e.comparisons.size());
  EXPECT_EQ(2u, e.comparisons[0].field_pos);
  EXPECT_EQ(7u, e.comparisons[0].op_pos);
  EXPECT_EQ(11u, e.comparisons[0].value_pos);
  EXPECT_EQ("-5", e.comparisons[0].value);
}

TEST(Predicate, MistakesSayWhatAndWhere) {
  const struct {
    const char *text;
    size_t pos;
    const char *message;
  } cases[] = {
      {"a = 1", 2, "use == to compare"},
      {"a == \"x", 5, "unterminated string"},
      {"(a == 1", 0, "missing ')'"},
      {"(a == 1 b", 8, "missing ')'"},
      {"a == 1 b", 7, "unexpected text after the condition: expected &&, || or the end"},
      {"a == 1 &&", 9, "expected a field name (a field)"},
      {"a ==", 4, "expected a value after the operator"},
      {"a >> 3", 3, "expected a value after the operator"},
      {"a 3", 2, "expected an operator"},
      {"a == 1 | b == 2", 7, "unexpected character"},
      {"", 0, "expected a condition"},
  };
  for (const auto &c : cases) {
    Failure f = parse_error(c.text);
    EXPECT_EQ(c.pos, f.pos) << c.text << " -> " << f.message;
    EXPECT_NE(std::string::npos, f.message.find(c.message)) << c.text << " -> " << f.message;
  }
  std::string deep(predicate::kMaxDepth + 1, '(');
  EXPECT_NE(std::string::npos, parse_error(deep + "a == 1").message.find("nested too deep"));
}

// Both users report a syntax mistake with the parser's sentence, at the
// same column of the condition.
TEST(Predicate, ProbeIfAndWhereAgree) {
  const char *conds[] = {"len = 1", "len == \"x", "(len == 1", "len == 1 len", "len >> 3", "len == 1 &&"};
  auto names = fixture::names();
  const std::string head = "p vfs_read len=$arg3:u64 if ";
  for (const char *cond : conds) {
    Failure want = parse_error(cond);
    ASSERT_NE(std::string::npos, want.pos) << cond;
    try {
      ktrack::parse_probe_spec(head + cond);
      ADD_FAILURE() << "probe accepted: " << cond;
    } catch (const ktrack::SpecError &e) {
      EXPECT_EQ(head.size() + want.pos, e.pos()) << cond;
      EXPECT_EQ(want.message.substr(0, 20), e.message().substr(0, 20)) << cond << " -> " << e.message();
    }
    ktrack::analysis::FilterSpec spec;
    spec.where = cond;
    try {
      ktrack::analysis::Filter f(spec, names);
      ADD_FAILURE() << "--where accepted: " << cond;
    } catch (const ktrack::UsageError &e) {
      std::string what = e.what();
      EXPECT_NE(std::string::npos, what.find(want.message.substr(0, 20))) << cond << " -> " << what;
      EXPECT_NE(std::string::npos, what.find("at column " + std::to_string(want.pos + 1)))
          << cond << " -> " << what;
    }
  }
}

// What one accepts, the other accepts: --where has the probe's parentheses,
// '!', '~' and single quotes.
TEST(Predicate, WhereTakesTheProbeGrammar) {
  auto names = fixture::names();
  const char *conds[] = {"!(len > 10) || comm ~ 'kw*'", "(len == 5 || len == 50) && !(cpu == 1)",
                         "comm != \"bash\""};
  for (const char *cond : conds) {
    ktrack::analysis::FilterSpec spec;
    spec.where = cond;
    EXPECT_NO_THROW(ktrack::analysis::Filter(spec, names)) << cond;
    EXPECT_NO_THROW(ktrack::parse_probe_spec(std::string("p vfs_read len=$arg3:u64 if ") + cond)) << cond;
  }
}
