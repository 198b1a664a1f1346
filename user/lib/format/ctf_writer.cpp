#include "format/ctf_writer.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <random>

#include "util/error.hpp"

namespace ktrack {

namespace {

constexpr uint32_t kMagic = 0xC1FC1FC1;
// Packet header (magic, uuid, stream_id) and context (timestamp_begin,
// timestamp_end, content_size, packet_size, cpu_id), byte-aligned.
constexpr size_t kPacketHead = 4 + 16 + 4 + 8 + 8 + 8 + 8 + 4;

void put_le(std::vector<uint8_t> &b, uint64_t v, unsigned bytes) {
  for (unsigned i = 0; i < bytes; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

void put_str(std::vector<uint8_t> &b, std::string_view s) {
  // A CTF string ends at its first NUL.
  size_t n = s.find('\0');
  if (n == std::string_view::npos) n = s.size();
  b.insert(b.end(), s.begin(), s.begin() + static_cast<std::ptrdiff_t>(n));
  b.push_back(0);
}

// TSDL string literal.
std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// A TSDL field name: report's name behind an underscore (which TSDL
// readers strip), so names such as 'string' or 'event' stay usable.
std::string ident(std::string_view name) {
  std::string out = "_";
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return out;
}

std::string int_type(const FieldDesc &d) {
  unsigned bits = 8 * field_elem_size(d.type);
  bool hex = d.type == FieldType::X8 || d.type == FieldType::X16 || d.type == FieldType::X32 ||
             d.type == FieldType::X64 || d.type == FieldType::Bytes;
  std::string t = fmt::format("integer {{ size = {}; align = 8; signed = {}; base = {}; byte_order = le; }}",
                              bits, field_is_signed(d.type) ? "true" : "false", hex ? 16 : 10);
  if (d.enums.empty() || d.type == FieldType::Bytes) return t;
  std::string e = "enum : " + t + " { ";
  for (size_t i = 0; i < d.enums.size(); ++i) {
    if (i) e += ", ";
    e += fmt::format("{} = {}", quoted(d.enums[i].name),
                     field_is_signed(d.type) ? fmt::format("{}", static_cast<int64_t>(d.enums[i].value))
                                             : fmt::format("{}", d.enums[i].value));
  }
  return e + " }";
}

bool is_sequence(const FieldDesc &d) {
  if (d.type == FieldType::String || d.type == FieldType::DynString) return false;
  if (d.type == FieldType::Bytes) return true;
  return d.size > field_elem_size(d.type) || d.size == 0 || !d.length_field.empty();
}

std::string field_decl(const FieldDesc &d) {
  std::string id = ident(d.name);
  if (d.type == FieldType::String || d.type == FieldType::DynString)
    return fmt::format("\t\tstring {};\n", id);
  // Symbols as the names report prints, integers (and bytes) typed.
  std::string elem = d.type == FieldType::Symbol ? "string" : int_type(d);
  if (is_sequence(d)) return fmt::format("\t\tuint32_t {0}_len;\n\t\t{1} {0}[{0}_len];\n", id, elem);
  return fmt::format("\t\t{} {};\n", elem, id);
}

}  // namespace

CtfWriter::CtfWriter(std::string dir, CtfTraceInfo info, const Symbolizer *symbols)
    : dir_(std::move(dir)), info_(std::move(info)), symbols_(symbols) {
  if (::mkdir(dir_.c_str(), 0755) != 0 && errno != EEXIST)
    throw FileError("create the directory " + dir_, errno);
  struct stat st {};
  if (::stat((dir_ + "/metadata").c_str(), &st) == 0)
    throw UsageError(fmt::format("{} already holds a CTF trace (metadata): give a new directory", dir_));
  std::random_device rd;
  for (auto &b : uuid_) b = static_cast<uint8_t>(rd());
  uuid_[6] = static_cast<uint8_t>((uuid_[6] & 0x0f) | 0x40);  // version 4
  uuid_[8] = static_cast<uint8_t>((uuid_[8] & 0x3f) | 0x80);
}

CtfWriter::~CtfWriter() {
  for (auto &[cpu, s] : streams_)
    if (s.f) std::fclose(s.f);
}

CtfWriter::Stream &CtfWriter::stream(uint16_t cpu) {
  Stream &s = streams_[cpu];
  if (!s.f) {
    std::string path = fmt::format("{}/stream_{}", dir_, cpu);
    s.f = std::fopen(path.c_str(), "w");
    if (!s.f) throw FileError("create " + path, errno);
    // The packet header and context, completed by finish().
    s.buf.assign(kPacketHead, 0);
  }
  return s;
}

const CtfWriter::EventClass &CtfWriter::event_class(const Event &ev) {
  auto key = std::make_pair(ev.schema, std::string(ev.name));
  auto it = classes_.find(key);
  if (it != classes_.end()) return it->second;
  EventClass c;
  c.id = static_cast<uint32_t>(classes_.size());
  c.name = std::string(ev.name);
  c.schema = ev.schema;
  c.has_ip = ev.type == KTRACK_REC_PROBE;
  return classes_.emplace(key, std::move(c)).first->second;
}

void CtfWriter::flush(Stream &s) {
  // The packet head goes out as zeros first; finish() writes it over.
  if (std::fwrite(s.buf.data(), 1, s.buf.size(), s.f) != s.buf.size())
    throw FileError("write a CTF stream in " + dir_, errno);
  s.bytes += s.buf.size();
  s.buf.clear();
}

void CtfWriter::add(const Event &ev) {
  const EventClass &c = event_class(ev);
  Stream &s = stream(ev.cpu);
  uint64_t ts = ev.ts;
  if (s.any && ts < s.last_ts) {
    ++clamped_;
    ts = s.last_ts;
  }
  if (!s.any) s.first_ts = ts;
  s.any = true;
  s.last_ts = ts;
  auto &b = s.buf;
  put_le(b, c.id, 4);
  put_le(b, ts, 8);
  put_le(b, ev.pid, 4);
  put_le(b, ev.tgid, 4);
  // An unknown task as report's text names it (babeltrace2 2.0 would
  // show an empty string as the previous event's comm).
  put_str(b, !ev.comm.empty() ? ev.comm : ev.pid == 0 ? "<idle>" : "<...>");
  put_str(b, context_name(ev.context()));
  fmt::memory_buffer sym;
  auto symbol = [&](uint64_t addr) {
    sym.clear();
    if (symbols_)
      symbols_->format_to(sym, addr, ev.ts);
    else
      fmt::format_to(fmt::appender(sym), "{:#x}", addr);
    put_str(b, std::string_view(sym.data(), sym.size()));
  };
  if (c.has_ip) {
    std::string_view pe = probe_event_name(ev.probe_event);
    put_str(b, pe.empty() ? std::string_view(std::to_string(ev.probe_event)) : pe);
    symbol(ev.ip);
    symbol(ev.parent_ip);
    put_le(b, ev.fault_mask, 4);
  }
  if (c.schema) {
    for (size_t i = 0; i < c.schema->fields.size(); ++i) {
      const FieldDesc &d = c.schema->fields[i];
      const FieldValue *f = i < ev.fields.size() ? &ev.fields[i] : nullptr;
      bool ok = f && f->valid && !f->faulted;
      unsigned elem = field_elem_size(d.type);
      switch (d.type) {
        case FieldType::String:
        case FieldType::DynString:
          put_str(b, ok ? f->str() : std::string_view());
          continue;
        case FieldType::Bytes:
          put_le(b, ok ? f->len : 0, 4);
          if (ok) b.insert(b.end(), f->data, f->data + f->len);
          continue;
        default:
          break;
      }
      if (is_sequence(d)) {
        uint32_t n = ok ? (f->is_array ? f->count : 1) : 0;
        put_le(b, n, 4);
        for (uint32_t k = 0; k < n; ++k) {
          uint64_t v = f->is_array ? f->at(k) : f->u;
          if (d.type == FieldType::Symbol)
            symbol(v);
          else
            put_le(b, v, elem);
        }
      } else if (d.type == FieldType::Symbol) {
        if (ok)
          symbol(f->u);
        else
          put_str(b, "");
      } else {
        put_le(b, ok ? f->u : 0, elem);
      }
    }
  }
  ++events_;
  if (b.size() >= (1u << 20)) flush(s);
}

std::string CtfWriter::metadata() const {
  std::string uuid;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) uuid += '-';
    uuid += fmt::format("{:02x}", uuid_[i]);
  }
  std::string m = "/* CTF 1.8 */\n\n";
  m += "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n";
  m += "typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n";
  m += "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n";
  m += "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n\n";
  m += fmt::format(
      "trace {{\n\tmajor = 1;\n\tminor = 8;\n\tuuid = \"{}\";\n\tbyte_order = le;\n"
      "\tpacket.header := struct {{\n\t\tuint32_t magic;\n\t\tuint8_t uuid[16];\n\t\tuint32_t stream_id;\n"
      "\t}};\n}};\n\n",
      uuid);
  m += fmt::format(
      "env {{\n\ttracer_name = \"ktrack\";\n\ttracer_major = 0;\n\ttracer_minor = 1;\n\thostname = {};\n"
      "\tkernel_release = {};\n\tsession = {};\n\tclock = {};\n}};\n\n",
      quoted(info_.hostname), quoted(info_.kernel_release), quoted(info_.session), quoted(info_.clock));
  m += fmt::format(
      "clock {{\n\tname = \"ktrack\";\n\tuuid = \"{}\";\n\tdescription = {};\n\tfreq = 1000000000;\n"
      "\tprecision = 1;\n\toffset_s = 0;\n\toffset = 0;\n\tabsolute = false;\n}};\n\n",
      uuid, quoted("ktrack's " + (info_.clock.empty() ? std::string("record") : info_.clock) + " clock, ns"));
  m += "typealias integer { size = 64; align = 8; signed = false; map = clock.ktrack.value; } := "
       "uint64_clock_t;\n\n";
  m +=
      "stream {\n\tid = 0;\n"
      "\tpacket.context := struct {\n\t\tuint64_clock_t timestamp_begin;\n\t\tuint64_clock_t timestamp_end;\n"
      "\t\tuint64_t content_size;\n\t\tuint64_t packet_size;\n\t\tuint32_t cpu_id;\n\t};\n"
      "\tevent.header := struct {\n\t\tuint32_t id;\n\t\tuint64_clock_t timestamp;\n\t};\n"
      "\tevent.context := struct {\n\t\tuint32_t _pid;\n\t\tuint32_t _tgid;\n\t\tstring _comm;\n\t\tstring "
      "_ctx;\n"
      "\t};\n};\n\n";
  std::vector<const EventClass *> order(classes_.size());
  for (const auto &[k, c] : classes_) order[c.id] = &c;
  for (const EventClass *c : order) {
    m += fmt::format("event {{\n\tname = {};\n\tid = {};\n\tstream_id = 0;\n\tfields := struct {{\n",
                     quoted(c->name), c->id);
    if (c->has_ip)
      m += "\t\tstring _probe_event;\n\t\tstring _ip;\n\t\tstring _parent_ip;\n"
           "\t\tinteger { size = 32; align = 8; signed = false; base = 16; } _fault_mask;\n";
    if (c->schema)
      for (const FieldDesc &d : c->schema->fields) m += field_decl(d);
    m += "\t};\n};\n\n";
  }
  return m;
}

void CtfWriter::finish() {
  if (finished_) return;
  finished_ = true;
  for (auto &[cpu, s] : streams_) {
    flush(s);
    std::vector<uint8_t> head;
    put_le(head, kMagic, 4);
    head.insert(head.end(), uuid_, uuid_ + 16);
    put_le(head, 0, 4);
    put_le(head, s.first_ts, 8);
    put_le(head, s.last_ts, 8);
    put_le(head, s.bytes * 8, 8);
    put_le(head, s.bytes * 8, 8);
    put_le(head, cpu, 4);
    if (std::fseek(s.f, 0, SEEK_SET) != 0 || std::fwrite(head.data(), 1, head.size(), s.f) != head.size())
      throw FileError("write a CTF packet header in " + dir_, errno);
    FILE *f = s.f;
    s.f = nullptr;
    if (std::fclose(f) != 0) throw SysError("close a CTF stream in " + dir_, errno);
  }
  std::string path = dir_ + "/metadata";
  FILE *f = std::fopen(path.c_str(), "w");
  if (!f) throw FileError("create " + path, errno);
  std::string m = metadata();
  bool ok = std::fwrite(m.data(), 1, m.size(), f) == m.size();
  if (std::fclose(f) != 0 || !ok) throw SysError("write " + path, errno);
}

}  // namespace ktrack
