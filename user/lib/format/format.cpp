#include "format/format.hpp"

#include "util/json.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/error.hpp"

namespace ktrack {

namespace {

using Buf = fmt::memory_buffer;

// A line's pieces are short (names, numbers): copied with fixed-size moves
// the compiler inlines instead of a call into the C library's memcpy.
inline void copy_short(char *d, const char *s, size_t n) {
  if (n >= 8) {
    if (n > 16) {
      std::memcpy(d, s, n);
      return;
    }
    std::memcpy(d, s, 8);  // two overlapping 8-byte moves
    std::memcpy(d + n - 8, s + n - 8, 8);
  } else if (n >= 4) {
    std::memcpy(d, s, 4);
    std::memcpy(d + n - 4, s + n - 4, 4);
  } else {
    for (size_t i = 0; i < n; i++) d[i] = s[i];
  }
}

// One resize and one copy: fmt's append() copies in a loop of capacity
// checks, which a line of a dozen short pieces pays a dozen times.
inline void put_raw(Buf &out, const char *p, size_t n) {
  if (!n) return;  // memcpy from a view's null data is undefined even for 0 bytes
  size_t at = out.size();
  out.resize(at + n);
  copy_short(out.data() + at, p, n);
}

inline void put(Buf &out, std::string_view s) { put_raw(out, s.data(), s.size()); }

inline void put_u(Buf &out, uint64_t v) {
  fmt::format_int f(v);
  put_raw(out, f.data(), f.size());
}

inline void put_s(Buf &out, int64_t v) {
  fmt::format_int f(v);
  put_raw(out, f.data(), f.size());
}

inline void put_hex(Buf &out, uint64_t v) {
  char tmp[18];
  char *end = tmp + sizeof(tmp), *p = end;
  do {
    *--p = "0123456789abcdef"[v & 15];
    v >>= 4;
  } while (v);
  *--p = 'x';
  *--p = '0';
  put_raw(out, p, static_cast<size_t>(end - p));
}

// Zero-padded decimal of exactly 'width' digits (v < 10^width) at 'd'.
// The low 'width' digits of v, zero-padded.  Four digits per division and
// two per table lookup: a digit per division made a chain of 9 dependent
// divisions per timestamp, a quarter of format_text's time.
inline void write_u_padded(char *d, uint64_t v, int width) {
  static constexpr char kPairs[] =
      "0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546474849"
      "5051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";
  char *p = d + width;
  for (; p - d >= 4; p -= 4) {
    uint64_t q = v / 10000;
    auto r = static_cast<uint32_t>(v - q * 10000);
    std::memcpy(p - 2, kPairs + 2 * (r % 100), 2);
    std::memcpy(p - 4, kPairs + 2 * (r / 100), 2);
    v = q;
  }
  if (p - d >= 2) {
    uint64_t q = v / 100;
    std::memcpy(p - 2, kPairs + 2 * (v - q * 100), 2);
    v = q;
    p -= 2;
  }
  if (p > d) d[0] = static_cast<char>('0' + v % 10);
}

inline void put_u_padded(Buf &out, uint64_t v, int width) {
  char tmp[20];
  write_u_padded(tmp, v, width);
  put_raw(out, tmp, static_cast<size_t>(width));
}

inline void pad(Buf &out, size_t n) {
  size_t at = out.size();
  out.resize(at + n);
  std::memset(out.data() + at, ' ', n);
}

// Direct stores into 'out' after one resize to an upper bound 'max': a
// line's fixed pieces then cost a store or a memcpy each, not a capacity
// check and an out-of-line call each.  The destructor trims 'out' to what
// was written.
class Raw {
 public:
  Raw(Buf &out, size_t max) : out_(out) {
    size_t at = out.size();
    out.resize(at + max);
    p_ = out.data() + at;
  }
  ~Raw() { out_.resize(static_cast<size_t>(p_ - out_.data())); }
  Raw(const Raw &) = delete;
  Raw &operator=(const Raw &) = delete;
  void c(char ch) { *p_++ = ch; }
  void s(std::string_view v) {
    copy_short(p_, v.data(), v.size());
    p_ += v.size();
  }
  void u(uint64_t v) {
    fmt::format_int f(v);
    copy_short(p_, f.data(), f.size());
    p_ += f.size();
  }
  void spaces(size_t n) {
    std::memset(p_, ' ', n);
    p_ += n;
  }
  void u_padded(uint64_t v, int width) {
    write_u_padded(p_, v, width);
    p_ += width;
  }

 private:
  Buf &out_;
  char *p_;
};

const EnumName *enum_name(const FieldDesc &d, uint64_t v) {
  for (const auto &e : d.enums)
    if (e.value == v) return &e;
  return nullptr;
}

void text_quote(Buf &out, std::string_view s) {
  // Runs of characters that need no escape go in one copy.
  out.push_back('"');
  const char *run = s.data();
  for (const char *p = s.data(), *end = p + s.size(); p != end; p++) {
    auto c = static_cast<unsigned char>(*p);
    if (c >= 0x20 && c != 0x7f && c != '"' && c != '\\') continue;
    put_raw(out, run, static_cast<size_t>(p - run));
    run = p + 1;
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c == '\n') {
      put(out, "\\n");
    } else if (c == '\t') {
      put(out, "\\t");
    } else {
      fmt::format_to(std::back_inserter(out), "\\x{:02x}", c);
    }
  }
  put_raw(out, run, static_cast<size_t>(s.data() + s.size() - run));
  out.push_back('"');
}

void hex_bytes(Buf &out, const uint8_t *p, uint32_t n) {
  static constexpr char digits[] = "0123456789abcdef";
  for (uint32_t i = 0; i < n; i++) {
    out.push_back(digits[p[i] >> 4]);
    out.push_back(digits[p[i] & 15]);
  }
}

void int_value(Buf &out, const FieldDesc &d, uint64_t v, const FormatOptions &opt, bool json) {
  if (!d.enums.empty()) {
    if (const EnumName *e = enum_name(d, v)) {
      if (json)
        json_escape(out, e->name);
      else
        put(out, e->name);
      return;
    }
  }
  switch (d.type) {
    case FieldType::S8:
    case FieldType::S16:
    case FieldType::S32:
    case FieldType::S64:
      put_s(out, static_cast<int64_t>(v));
      return;
    case FieldType::X8:
    case FieldType::X16:
    case FieldType::X32:
    case FieldType::X64:
      if (json) out.push_back('"');
      put_hex(out, v);
      if (json) out.push_back('"');
      return;
    case FieldType::Symbol:
      if (json) {
        Buf tmp;
        if (opt.symbols)
          opt.symbols->format_to(tmp, v, opt.ts);
        else
          put_hex(tmp, v);
        json_escape(out, std::string_view(tmp.data(), tmp.size()));
      } else if (opt.symbols) {
        opt.symbols->format_to(out, v, opt.ts);
      } else {
        put_hex(out, v);
      }
      return;
    default:
      put_u(out, v);
  }
}

void field_value(Buf &out, const FieldValue &f, const FormatOptions &opt, bool json) {
  const FieldDesc &d = *f.desc;
  if (f.faulted) {
    put(out, json ? "null" : "(fault)");
    return;
  }
  if (!f.valid) {
    put(out, json ? "null" : "<truncated>");
    return;
  }
  switch (d.type) {
    case FieldType::String:
    case FieldType::DynString:
      if (json)
        json_escape(out, f.str());
      else
        text_quote(out, f.str());
      return;
    case FieldType::Bytes:
      if (json) out.push_back('"');
      hex_bytes(out, f.data, f.len);
      if (json) out.push_back('"');
      return;
    default:
      break;
  }
  if (f.is_array) {
    out.push_back(json ? '[' : '{');
    for (uint32_t i = 0; i < f.count; i++) {
      if (i) out.push_back(',');
      int_value(out, d, f.at(i), opt, json);
    }
    out.push_back(json ? ']' : '}');
    return;
  }
  int_value(out, d, f.u, opt, json);
}

void sym_or_hex(Buf &out, uint64_t addr, const FormatOptions &opt, bool offset = true) {
  if (opt.symbols)
    opt.symbols->format_to(out, addr, opt.ts, offset);
  else
    put_hex(out, addr);
}

// A record's ip or parent_ip: a u/ur probe's are user addresses, never
// named from kernel symbols (its ip is its site when the probe names one).
void ip_text(Buf &out, const Event &ev, bool parent, const FormatOptions &opt, bool offset = true) {
  if (ev.schema && ev.schema->user_ip) {
    if (!parent && !ev.schema->user_site.empty())
      put(out, ev.schema->user_site);
    else
      put_hex(out, parent ? ev.parent_ip : ev.ip);
    return;
  }
  sym_or_hex(out, parent ? ev.parent_ip : ev.ip, opt, offset);
}

}  // namespace

void format_text(const Event &ev, const FormatOptions &options, Buf &out) {
  FormatOptions opt = options;
  opt.ts = ev.ts;
  std::string_view comm = ev.comm;
  if (comm.empty()) comm = ev.pid == 0 ? std::string_view("<idle>") : std::string_view("<...>");
  // "{:>16}-{:<7} [{:03}] {}.{:09}: " without the format-string machinery:
  // padding 16 + pid 20 + 2 + cpu 20 + 2 + seconds 20 + 1 + 9 + 2 + 1.
  {
    Raw r(out, comm.size() + ev.name.size() + 96);
    if (comm.size() < 16) r.spaces(16 - comm.size());
    r.s(comm);
    r.c('-');
    fmt::format_int pid(ev.pid);
    r.s(std::string_view(pid.data(), pid.size()));
    if (pid.size() < 7) r.spaces(7 - pid.size());
    r.c(' ');
    r.c('[');
    if (ev.cpu < 1000)
      r.u_padded(ev.cpu, 3);
    else
      r.u(ev.cpu);
    r.c(']');
    r.c(' ');
    r.u(ev.ts / 1000000000u);
    r.c('.');
    r.u_padded(ev.ts % 1000000000u, 9);
    r.c(':');
    r.c(' ');
    r.s(ev.name);
    r.c(':');
  }
  if (ev.has_ip) {
    put(out, " (");
    if (ev.probe_event == KTRACK_PROBE_EV_EXIT) {
      ip_text(out, ev, true, opt);
      put(out, " <- ");
      ip_text(out, ev, false, opt, false);  // the probed function, as ftrace prints it
    } else {
      ip_text(out, ev, false, opt);
    }
    put(out, ")");
  }
  for (const FieldValue &f : ev.fields) {
    {
      Raw r(out, f.desc->name.size() + 2);
      r.c(' ');
      r.s(f.desc->name);
      r.c('=');
    }
    field_value(out, f, opt, false);
  }
  out.push_back('\n');
}

namespace {

// RFC 4180: a field with a comma, quote or line break is quoted, quotes
// doubled.
void csv_cell(Buf &out, std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) {
    put(out, s);
    return;
  }
  out.push_back('"');
  for (char c : s) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
}

}  // namespace

void format_csv_header(Buf &out) { put(out, "timestamp,cpu,pid,tgid,comm,event,function,fields\n"); }

void format_csv(const Event &ev, const FormatOptions &options, Buf &out) {
  FormatOptions opt = options;
  opt.ts = ev.ts;
  put_u(out, ev.ts / 1000000000u);
  out.push_back('.');
  put_u_padded(out, ev.ts % 1000000000u, 9);
  out.push_back(',');
  put_u(out, ev.cpu);
  out.push_back(',');
  put_u(out, ev.pid);
  out.push_back(',');
  put_u(out, ev.tgid);
  out.push_back(',');
  csv_cell(out, ev.comm);
  out.push_back(',');
  csv_cell(out, ev.name);
  out.push_back(',');
  Buf cell;
  if (ev.has_ip) ip_text(cell, ev, false, opt);
  csv_cell(out, std::string_view(cell.data(), cell.size()));
  out.push_back(',');
  cell.clear();
  for (const FieldValue &f : ev.fields) {
    if (cell.size()) cell.push_back(' ');
    put(cell, f.desc->name);
    cell.push_back('=');
    field_value(cell, f, opt, false);
  }
  csv_cell(out, std::string_view(cell.data(), cell.size()));
  out.push_back('\n');
}

void format_json(const Event &ev, const FormatOptions &options, Buf &out) {
  FormatOptions opt = options;
  opt.ts = ev.ts;
  {
    // The pieces' 37 bytes and four numbers of at most 20 digits.
    Raw r(out, 37 + 4 * 20);
    r.s("{\"ts\":");
    r.u(ev.ts);
    r.s(",\"cpu\":");
    r.u(ev.cpu);
    r.s(",\"pid\":");
    r.u(ev.pid);
    r.s(",\"tgid\":");
    r.u(ev.tgid);
    r.s(",\"comm\":");
  }
  if (ev.comm.empty())
    put(out, "null");
  else
    json_escape(out, ev.comm);
  put(out, ",\"ctx\":\"");
  put(out, context_name(ev.context()));
  put(out, "\",\"event\":");
  json_escape(out, ev.name);
  put(out, ",\"type\":");
  put_u(out, ev.type);
  if (ev.has_ip) {
    put(out, ",\"probe_id\":");
    put_u(out, ev.probe_id);
    put(out, ",\"probe_event\":");
    std::string_view pe = probe_event_name(ev.probe_event);
    if (pe.empty())
      put_u(out, ev.probe_event);
    else
      json_escape(out, pe);
    Buf tmp;
    ip_text(tmp, ev, false, opt);
    put(out, ",\"ip\":");
    json_escape(out, std::string_view(tmp.data(), tmp.size()));
    tmp.clear();
    ip_text(tmp, ev, true, opt);
    put(out, ",\"parent_ip\":");
    json_escape(out, std::string_view(tmp.data(), tmp.size()));
  }
  put(out, ",\"fields\":{");
  bool first = true;
  for (const FieldValue &f : ev.fields) {
    if (!first) out.push_back(',');
    first = false;
    json_escape(out, f.desc->name);
    out.push_back(':');
    field_value(out, f, opt, true);
  }
  put(out, "}}\n");
}

BufferedOutput::~BufferedOutput() {
  try {
    flush();
  } catch (const Error &) {
    // Destructors must not throw; callers that care call flush() first.
  }
}

void BufferedOutput::flush() {
  size_t done = 0;
  while (done < buf_.size()) {
    ssize_t n = ::write(fd_, buf_.data() + done, buf_.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      buf_.clear();
      throw SysError("write output", err);
    }
    done += static_cast<size_t>(n);
  }
  buf_.clear();
}

}  // namespace ktrack
