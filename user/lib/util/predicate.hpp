// Predicates: the one grammar of the conditions a user writes, shared by a
// probe's "if COND" (compiled for the kernel, probes/filter_compiler) and
// the views' --where (run over records, analysis/filter), so both accept the
// same text and say the same thing about the same mistake.
//
//   COND   := OR
//   OR     := AND ('||' AND)*
//   AND    := UNARY ('&&' UNARY)*
//   UNARY  := '!' UNARY | '(' OR ')' | FIELD OP VALUE
//   OP     := == != < <= > >= & ~
//   VALUE  := "string" | 'string' | word (a number, a duration, a glob...)
//
// This is syntax only: what a field name means, which operators suit it and
// how a value reads (a number, a duration, a glob) is the caller's typing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ktrack::predicate {

// FIELD OP VALUE, with where each part starts in the parsed text.
struct Comparison {
  std::string field, op, value;
  size_t field_pos = 0, op_pos = 0, value_pos = 0;
  bool quoted = false;  // the value was "..." or '...'
};

struct Node {
  enum Kind : uint8_t { Compare, And, Or, Not };
  Kind kind = Compare;
  int left = -1, right = -1;  // children (indices into Expr::nodes); Not has left only
  int comparison = -1;        // Compare: index into Expr::comparisons
};

// A parsed condition in postfix order: children come before their parent
// and the root is last, so a compiler emits the nodes as they stand and an
// evaluator starts at root().
struct Expr {
  std::vector<Node> nodes;
  std::vector<Comparison> comparisons;  // in the order they appear
  bool empty() const { return nodes.empty(); }
  int root() const { return static_cast<int>(nodes.size()) - 1; }
};

// A syntax error at byte 'pos' of the parsed text.
class Error : public std::runtime_error {
 public:
  Error(size_t pos, const std::string &message) : std::runtime_error(message), pos(pos) {}
  size_t pos;
};

// Deepest nesting of '(' and '!' accepted.
inline constexpr int kMaxDepth = 32;

// Parses 'text'; 'fields' names what a field may be, for the error that
// expects one ("an argument, pid, tgid, comm or cpu").  Throws Error.
Expr parse(std::string_view text, std::string_view fields);

}  // namespace ktrack::predicate
