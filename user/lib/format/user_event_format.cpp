#include "format/user_event_format.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include <uapi/ktrack.h>

namespace ktrack {
namespace {

bool word(const std::string &w) {
  return !w.empty() &&
         std::all_of(w.begin(), w.end(), [](char c) { return std::isalnum((unsigned char)c) || c == '_'; });
}

std::string trim(const std::string &s) {
  size_t a = s.find_first_not_of(" \t\n"), b = s.find_last_not_of(" \t\n");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

struct IntType {
  const char *name;
  uint32_t size;
  bool is_signed;
};
constexpr IntType kInts[] = {{"u8", 1, false},  {"s8", 1, true},  {"u16", 2, false}, {"s16", 2, true},
                             {"u32", 4, false}, {"s32", 4, true}, {"u64", 8, false}, {"s64", 8, true}};

}  // namespace

std::optional<EventFormat> parse_user_event_format(const std::string &text, std::string *error) {
  auto bad = [&](const std::string &why) -> std::optional<EventFormat> {
    if (error) *error = why;
    return std::nullopt;
  };
  std::string s = trim(text);
  size_t sp = s.find_first_of(" \t\n");
  std::string name = s.substr(0, sp);
  std::string rest = sp == std::string::npos ? "" : trim(s.substr(sp));
  size_t slash = name.find('/');
  EventFormat ef;
  ef.subsys = slash == std::string::npos ? "" : name.substr(0, slash);
  ef.event = slash == std::string::npos ? name : name.substr(slash + 1);
  if ((slash != std::string::npos && !word(ef.subsys)) || !word(ef.event) ||
      name.size() >= KTRACK_UEVENT_NAME_MAX)
    return bad(fmt::format("'{}' is no event name: [SYSTEM/]EVENT of letters, digits and '_'", name));
  uint32_t off = 0;
  while (!rest.empty()) {
    size_t semi = rest.find(';');
    std::string seg = trim(rest.substr(0, semi));
    rest = semi == std::string::npos ? "" : trim(rest.substr(semi + 1));
    if (seg.empty()) {
      if (!rest.empty()) return bad("an empty field between two ';'");
      break;
    }
    size_t fsp = seg.find_first_of(" \t\n");
    if (fsp == std::string::npos) return bad(fmt::format("field '{}' has no name: write TYPE NAME", seg));
    std::string type = seg.substr(0, fsp), fname = trim(seg.substr(fsp));
    if (!word(fname) || std::isdigit((unsigned char)fname[0]) || fname.size() >= KTRACK_FETCH_NAME_MAX)
      return bad(fmt::format("'{}' is no field name (a C identifier of at most {} characters)", fname,
                             KTRACK_FETCH_NAME_MAX - 1));
    if (ef.find(fname)) return bad(fmt::format("field '{}' is declared twice", fname));
    EventField f;
    f.name = fname;
    f.type = type;
    f.offset = off;
    bool known = false;
    for (const auto &it : kInts)
      if (type == it.name) {
        f.size = it.size;
        f.is_signed = it.is_signed;
        known = true;
      }
    if (!known && type == "char[]") {
      f.type = "__data_loc char[]";
      f.size = 4;
      f.is_dynamic = f.is_string = true;
      known = true;
    } else if (!known && type.size() > 6 && type.compare(0, 5, "char[") == 0 && type.back() == ']') {
      std::string n = type.substr(5, type.size() - 6);
      if (!n.empty() && n.size() <= 3 && n[0] != '0' && std::all_of(n.begin(), n.end(), ::isdigit) &&
          std::stoul(n) <= KTRACK_UEVENT_ARRAY_MAX) {
        f.size = f.count = (uint32_t)std::stoul(n);
        f.elem_size = 1;
        f.is_array = f.is_string = true;
        known = true;
      }
    }
    if (!known)
      return bad(
          fmt::format("'{}' is no field type: u8 s8 u16 s16 u32 s32 u64 s64, char[N] (N 1..{}) or char[]",
                      type, KTRACK_UEVENT_ARRAY_MAX));
    if (ef.fields.size() == KTRACK_UEVENT_MAX_FIELDS)
      return bad(fmt::format("more than {} fields", KTRACK_UEVENT_MAX_FIELDS));
    off += f.size;
    ef.fields.push_back(f);
  }
  return ef;
}

}  // namespace ktrack
