// What a record means to the analysis views (hist, profile, graph, stack,
// top, exports): a small Sample of a decoded record, and the Names
// interface through which the views ask the decoder for names, fields and
// symbols.  The views never allocate per record: a Sample points into the
// decoder's buffers, keys are integers (ip, pid, probe id, interned comm),
// and names are resolved once per distinct key when a view prints.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ktrack::analysis {

// What a record means to the views.
enum class Kind : uint8_t {
  Other,   // any record the views do not interpret (still filtered/counted)
  Entry,   // probe hit at function entry (KTRACK_PROBE_EV_ENTRY)
  Exit,    // probe hit at function return (KTRACK_PROBE_EV_EXIT)
  Point,   // tracepoint or mid-function probe hit (KTRACK_PROBE_EV_TP)
  Lost,    // KTRACK_REC_LOST: 'lost' records between lost_first..lost_last
  Stack,   // KTRACK_REC_STACK: stack of the probe record before it (same CPU)
  Marker,  // user marker / driver printf text
};

struct Sample {
  uint64_t ts = 0;
  uint32_t pid = 0;
  uint32_t tgid = 0;
  uint16_t cpu = 0;
  uint16_t type = 0;  // KTRACK_REC_*
  uint16_t flags = 0;
  Kind kind = Kind::Other;
  uint32_t probe_id = 0;
  uint64_t ip = 0;         // probed function (Entry/Exit/Point)
  uint64_t parent_ip = 0;  // caller (Entry) or return address (Exit)
  uint64_t lost = 0;       // Lost: how many records
  uint64_t lost_first = 0, lost_last = 0;
  const uint64_t *stack = nullptr;  // Stack: innermost frame first
  uint32_t stack_nr = 0;
  std::string_view text;         // Marker text
  std::string_view comm;         // task name when the decoder knows it
  const void *origin = nullptr;  // the decoder's own record (field access)
};

// Fills 's' from one raw record as the ABI defines it (header + payload,
// 'len' bytes available).  Returns false when the record is malformed
// (length too short for its type).  Probe payload fields are not decoded
// here: they are reached through Names::field_value().
bool sample_from_record(const void *rec, size_t len, Sample &s);

// A symbol as the views print it.
struct Symbol {
  std::string name;  // "vfs_read", or "0xffffffff81234567" when unknown
  uint64_t offset = 0;
  std::string module;  // "" for the kernel image
};

// What the views need from the decoder (schema registry + symbolizer +
// task names).  The defaults make the views usable on bare records.
class Names {
 public:
  virtual ~Names() = default;
  virtual std::string probe_name(uint32_t probe_id) const;
  // 'ip' is an address, or a key Symbolizer::pin() made of (address, time).
  virtual Symbol symbol(uint64_t ip) const;
  // The address behind such a key (for comparisons with numbers).
  virtual uint64_t address(uint64_t ip) const { return ip; }
  virtual std::string comm(uint32_t pid) const;  // "" when unknown
  // Numeric payload fields by name: field_id() once per name (-1 when no
  // probe has it), then field_value() per record (false when this record's
  // probe has no such field).
  virtual int field_id(std::string_view name) const;
  virtual bool field_value(const Sample &s, int id, int64_t &out) const;
  // String payload fields (for --where name=="glob" and string keys).
  virtual bool field_string(const Sample &s, int id, std::string &out) const;

  // "sym+0x1a [mod]"
  std::string symbolize(uint64_t ip) const;
  // "sym" (function name only; for grouping and graph lines)
  std::string func_name(uint64_t ip) const { return symbol(ip).name; }
};

// The key a task is tracked under: its pid, except pid 0 (the idle task,
// and interrupts on it), which is distinct per CPU.
inline uint64_t task_key(const Sample &s) { return s.pid ? s.pid : (1ULL << 32) | s.cpu; }

}  // namespace ktrack::analysis
