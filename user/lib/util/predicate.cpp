// Predicate parser (see util/predicate.hpp): a lexer and a recursive-descent
// parser that leaves a postfix tree.
#include "util/predicate.hpp"

#include <fmt/core.h>

#include <cctype>
#include <cstring>

namespace ktrack::predicate {

namespace {

struct Token {
  enum Kind : uint8_t { End, Word, String, Op, LParen, RParen, AndAnd, OrOr, Not };
  Kind kind = End;
  std::string text;
  size_t pos = 0;
};

// Characters that end a word: blanks and what the grammar spells.
constexpr const char *kStops = "()&|!=<>~\"'";

class Parser {
 public:
  Parser(std::string_view text, std::string_view fields) : s_(text), fields_(fields) { next(); }

  Expr run() {
    if (cur_.kind == Token::End) throw Error(cur_.pos, "expected a condition");
    parse_or();
    if (cur_.kind != Token::End)
      throw Error(cur_.pos, "unexpected text after the condition: expected &&, || or the end");
    return std::move(e_);
  }

 private:
  void next() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) i_++;
    cur_ = Token{Token::End, "", i_};
    if (i_ >= s_.size()) return;
    const char c = s_[i_];
    const std::string_view two = s_.substr(i_, 2);
    if (two == "&&" || two == "||") {
      cur_.kind = two == "&&" ? Token::AndAnd : Token::OrOr;
      i_ += 2;
      return;
    }
    if (two == "==" || two == "!=" || two == "<=" || two == ">=") {
      cur_.kind = Token::Op;
      cur_.text = std::string(two);
      i_ += 2;
      return;
    }
    if (c == '<' || c == '>' || c == '&' || c == '~') {
      cur_.kind = Token::Op;
      cur_.text = std::string(1, c);
      i_++;
      return;
    }
    if (c == '=') throw Error(i_, "expected an operator: use == to compare");
    if (c == '!' || c == '(' || c == ')') {
      cur_.kind = c == '!' ? Token::Not : c == '(' ? Token::LParen : Token::RParen;
      i_++;
      return;
    }
    if (c == '"' || c == '\'') {
      size_t end = s_.find(c, i_ + 1);
      if (end == std::string_view::npos) throw Error(i_, "unterminated string");
      cur_.kind = Token::String;
      cur_.text = std::string(s_.substr(i_ + 1, end - i_ - 1));
      i_ = end + 1;
      return;
    }
    size_t start = i_;
    while (i_ < s_.size() && !std::isspace(static_cast<unsigned char>(s_[i_])) &&
           !std::strchr(kStops, s_[i_]))
      i_++;
    if (i_ == start) throw Error(i_, "unexpected character in the condition");
    cur_.kind = Token::Word;
    cur_.text = std::string(s_.substr(start, i_ - start));
  }

  int add(Node n) {
    e_.nodes.push_back(n);
    return static_cast<int>(e_.nodes.size()) - 1;
  }

  int parse_or() {
    int left = parse_and();
    while (cur_.kind == Token::OrOr) {
      next();
      int right = parse_and();
      left = add({Node::Or, left, right, -1});
    }
    return left;
  }

  int parse_and() {
    int left = parse_unary();
    while (cur_.kind == Token::AndAnd) {
      next();
      int right = parse_unary();
      left = add({Node::And, left, right, -1});
    }
    return left;
  }

  int parse_unary() {
    if (++depth_ > kMaxDepth) throw Error(cur_.pos, "the condition is nested too deep");
    int n;
    if (cur_.kind == Token::Not) {
      next();
      n = add({Node::Not, parse_unary(), -1, -1});
    } else if (cur_.kind == Token::LParen) {
      size_t open = cur_.pos;
      next();
      n = parse_or();
      if (cur_.kind != Token::RParen) throw Error(cur_.kind == Token::End ? open : cur_.pos, "missing ')'");
      next();
    } else {
      n = parse_comparison();
    }
    depth_--;
    return n;
  }

  int parse_comparison() {
    if (cur_.kind != Token::Word) throw Error(cur_.pos, fmt::format("expected a field name ({})", fields_));
    Comparison c;
    c.field = cur_.text;
    c.field_pos = cur_.pos;
    next();
    if (cur_.kind != Token::Op) throw Error(cur_.pos, "expected an operator: == != < <= > >= & ~");
    c.op = cur_.text;
    c.op_pos = cur_.pos;
    next();
    if (cur_.kind != Token::Word && cur_.kind != Token::String)
      throw Error(cur_.pos, "expected a value after the operator");
    c.value = cur_.text;
    c.value_pos = cur_.pos;
    c.quoted = cur_.kind == Token::String;
    next();
    e_.comparisons.push_back(std::move(c));
    return add({Node::Compare, -1, -1, static_cast<int>(e_.comparisons.size()) - 1});
  }

  std::string_view s_, fields_;
  size_t i_ = 0;
  int depth_ = 0;
  Token cur_;
  Expr e_;
};

}  // namespace

Expr parse(std::string_view text, std::string_view fields) { return Parser(text, fields).run(); }

}  // namespace ktrack::predicate
