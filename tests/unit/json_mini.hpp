// A tiny strict JSON parser for the tests: validates the exporters'
// output and gives access to what it contains.
#pragma once

#include <cctype>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace json_mini {

struct Value {
  enum Type { Null, Bool, Number, String, Array, Object } type = Null;
  bool b = false;
  double num = 0;
  std::string str;
  std::vector<Value> arr;
  std::map<std::string, Value> obj;
  const Value &operator[](const std::string &k) const {
    static const Value null;
    auto it = obj.find(k);
    return it == obj.end() ? null : it->second;
  }
  bool has(const std::string &k) const { return obj.count(k) != 0; }
};

class Parser {
 public:
  explicit Parser(const std::string &s) : s_(s) {}
  Value parse() {
    Value v = value();
    ws();
    if (p_ != s_.size()) fail("trailing characters");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string &m) {
    throw std::runtime_error(m + " at offset " + std::to_string(p_));
  }
  void ws() {
    while (p_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[p_]))) ++p_;
  }
  char peek() {
    ws();
    if (p_ >= s_.size()) fail("unexpected end");
    return s_[p_];
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected ") + c);
    ++p_;
  }
  bool lit(const char *w) {
    std::string t(w);
    if (s_.compare(p_, t.size(), t) == 0) {
      p_ += t.size();
      return true;
    }
    return false;
  }
  std::string string() {
    expect('"');
    std::string out;
    while (true) {
      if (p_ >= s_.size()) fail("unterminated string");
      char c = s_[p_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (p_ >= s_.size()) fail("bad escape");
      char e = s_[p_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'u': {
          if (p_ + 4 > s_.size()) fail("bad \\u escape");
          unsigned v = static_cast<unsigned>(std::stoul(s_.substr(p_, 4), nullptr, 16));
          p_ += 4;
          out += static_cast<char>(v & 0xff);
          break;
        }
        default:
          fail("bad escape");
      }
    }
  }
  Value value() {
    Value v;
    char c = peek();
    if (c == '{') {
      ++p_;
      v.type = Value::Object;
      if (peek() == '}') {
        ++p_;
        return v;
      }
      while (true) {
        std::string k = string();
        expect(':');
        v.obj[k] = value();
        if (peek() == ',') {
          ++p_;
          continue;
        }
        expect('}');
        return v;
      }
    }
    if (c == '[') {
      ++p_;
      v.type = Value::Array;
      if (peek() == ']') {
        ++p_;
        return v;
      }
      while (true) {
        v.arr.push_back(value());
        if (peek() == ',') {
          ++p_;
          continue;
        }
        expect(']');
        return v;
      }
    }
    if (c == '"') {
      v.type = Value::String;
      v.str = string();
      return v;
    }
    if (lit("true")) {
      v.type = Value::Bool;
      v.b = true;
      return v;
    }
    if (lit("false")) {
      v.type = Value::Bool;
      return v;
    }
    if (lit("null")) return v;
    size_t start = p_;
    if (s_[p_] == '-') ++p_;
    if (p_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[p_]))) fail("bad value");
    while (p_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[p_])) || s_[p_] == '.' ||
                              s_[p_] == 'e' || s_[p_] == 'E' || s_[p_] == '+' || s_[p_] == '-'))
      ++p_;
    v.type = Value::Number;
    v.num = std::stod(s_.substr(start, p_ - start));
    return v;
  }

  const std::string &s_;
  size_t p_ = 0;
};

inline Value parse(const std::string &s) { return Parser(s).parse(); }

}  // namespace json_mini
