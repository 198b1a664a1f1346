// The object tracker (issue 5), userspace side:
//   - parsing what the user types (sources like 'r:alloc_inode $retval',
//     watches like 'inode->i_mode:u16' or '+4:u16') into the kernel's
//     struct ktrack_obj_config / ktrack_obj_source (include/uapi/ktrack.h);
//   - applying it to a session (ioctls 0x30..0x3f) with errors that say what
//     to fix;
//   - rebuilding each object's life (track, ordered hits with argument
//     positions and value changes, untrack) from OBJ_* records, as text and
//     JSON.
//
// The source syntax is a small subset of the probe spec (issue 4):
//   r:SYM $retval            kretprobe on SYM: its return value
//   r:SYM +OFF($retval)      ... the pointer stored at OFF in it
//   p:SYM $argN              kprobe at SYM's entry: argument N (1-based)
//   p:SYM +OFF($argN)        ... the pointer stored at OFF in it
//   0xADDR                   an explicit kernel address
// ('SYM%return' is accepted for 'r:SYM'; the 'p:'/'r:' prefix may carry an
// event name, 'r:name/SYM', which is ignored.)
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <uapi/ktrack.h>

#include "format/event.hpp"
#include "format/symbols.hpp"

namespace ktrack {

struct ObjSource {
  std::string text;                       // as the user typed it
  uint32_t type = KTRACK_OBJ_SRC_RETVAL;  // RETVAL, ARG or EXPLICIT
  std::string symbol;
  uint32_t arg = 0;  // 0-based (ARG)
  bool deref = false;
  uint32_t deref_offset = 0;
  uint64_t addr = 0;        // EXPLICIT
  std::string struct_name;  // BTF: the struct the value points to, when known
};

// Throws UsageError with a sentence that shows the accepted forms.
ObjSource parse_obj_source(std::string_view spec);

struct ObjWatch {
  std::string label;  // "inode->i_mode", "+4"
  uint32_t offset = 0;
  uint16_t size = 8;  // 1, 2, 4, 8
  bool is_signed = false;
  std::string type;         // "u16", "s32", "x64", ...
  std::string struct_name;  // BTF form only
};

// Type names: u8 u16 u32 u64 s8 s16 s32 s64 x8 x16 x32 x64 ptr.
// Returns false for an unknown name.
bool parse_obj_type(std::string_view name, uint16_t &size, bool &is_signed);

// Field resolution through BTF: STRUCT, a member path (a.b.c, anonymous
// unions/structs searched), out: byte offset, byte size, signedness.
class BtfFields {
 public:
  virtual ~BtfFields() = default;
  // Throws UsageError naming the unknown struct/member.
  virtual void resolve(const std::string &strct, const std::string &path, uint32_t &offset, uint16_t &size,
                       bool &is_signed) const = 0;
};

// The running kernel's BTF (/sys/kernel/btf/vmlinux) through libbpf; null
// when unavailable (no libbpf, no BTF): 'why' says why.
std::unique_ptr<BtfFields> load_vmlinux_btf(std::string *why = nullptr);

// "+OFF:TYPE" (OFF decimal or 0x hex) or "STRUCT->FIELD[:TYPE]" (needs
// 'btf'; the type defaults to the field's own size and signedness).
// Throws UsageError.
ObjWatch parse_obj_watch(std::string_view spec, const BtfFields *btf);

// Everything `ktrackctl objtrace` configures.
struct ObjConfig {
  std::vector<ObjSource> sources;
  std::vector<ObjWatch> watches;
  std::string functions = "*";  // space-separated ftrace globs
  uint32_t flags = 0;           // KTRACK_OBJF_*
  uint32_t max_objects = 4096;
  uint32_t nr_args = KTRACK_OBJ_MAX_ARGS;
  uint32_t max_hits = 0;
  uint64_t max_age_ns = 0;
  std::string destructor;
  uint32_t destructor_arg = 0;
  uint32_t derive_offset = 0;
  // When not empty: the exact function set (KTRACK_OBJF_FUNC_ADDRS), e.g.
  // resolved through BTF (objtrace_funcs.hpp); 'functions' then only names
  // the globs it came from.
  std::vector<ktrack_obj_func> func_addrs;

  // Checks ranges before the kernel does, with sentences; throws UsageError.
  void validate() const;
  // The ioctl argument; functions_ptr points into this->functions (or
  // this->func_addrs).
  ktrack_obj_config to_uapi() const;
};

// "SYM[:ARGN]" -> destructor, 0-based argument (ARGN 1-based, default 1).
void parse_obj_destructor(std::string_view spec, ObjConfig &cfg);

// One sentence for an errno of an object-tracker ioctl ('what' says which
// call: "configure the object tracker", "add source 'r:foo $retval'", ...).
std::string explain_obj_errno(std::string_view what, int err);

// Applies 'cfg' to the session on 'fd': CONFIG, every probe source, and
// (with_addresses) the explicit addresses.  Throws Error (with
// explain_obj_errno) on the first failure.
void apply_obj_config(int fd, const ObjConfig &cfg, bool with_addresses = true);
// Tracks the explicit addresses of 'cfg' (after the session started, so
// their track records are recorded).
void obj_track_addresses(int fd, const ObjConfig &cfg);
void obj_enable(int fd);
void obj_disable(int fd);
ktrack_obj_stats obj_stats(int fd);
// The stats as "key value" lines, drops and ends by reason.
std::string format_obj_stats(const ktrack_obj_stats &st);

// ---- reconstruction -------------------------------------------------------

struct ObjHit {
  uint64_t ts = 0;
  uint32_t cpu = 0, pid = 0;
  uint64_t ip = 0, parent_ip = 0;
  uint32_t arg = 0;  // 0-based
  uint32_t hit = 0;
  uint32_t flags = 0;  // KTRACK_OBJ_HITF_*
  uint8_t fault_mask = 0;
  std::vector<uint64_t> values;
  uint32_t prev_cpu = 0;
  uint64_t prev_ts = 0, prev_ip = 0;
};

struct ObjLife {
  uint64_t life = 0;
  uint64_t obj = 0;
  bool tracked = false;  // the track record was seen
  uint64_t track_ts = 0;
  uint32_t track_cpu = 0, track_pid = 0;
  uint32_t source = 0;
  uint64_t source_ip = 0;
  uint64_t parent_life = 0;
  uint8_t track_fault_mask = 0;
  std::vector<uint64_t> track_values;
  std::vector<ObjHit> hits;  // in time order
  bool ended = false;
  uint64_t end_ts = 0;
  uint32_t end_reason = 0;
  uint64_t end_ip = 0, end_parent_ip = 0;
  uint64_t end_hits = 0;
};

// Collects OBJ_* records (decoded Events, or raw records) into lives.
class ObjLifeBuilder {
 public:
  // Returns false for events that are not OBJ_* records (ignored).
  bool add(const Event &ev);
  // Raw record bytes (header + payload); false if not an OBJ_* record.
  bool add_raw(std::span<const uint8_t> rec);
  // Lives ordered by life id; each life's hits by (ts, hit number).
  std::vector<ObjLife> lives() const;
  uint64_t records() const { return records_; }

 private:
  ObjLife &life(uint64_t id, uint64_t obj);
  std::vector<ObjLife> lives_;
  std::vector<std::pair<uint64_t, size_t>> index_;  // life id -> position (sorted lazily)
  uint64_t records_ = 0;
};

// Labels of the watched values (ObjWatch::label) and how to print them; a
// recorded file carries them in its META chunk ("objtrace.watch").
struct ObjWatchLabel {
  std::string label;
  bool is_signed = false;
  uint16_t size = 8;
};
std::string serialize_watch_labels(const std::vector<ObjWatch> &w);
std::vector<ObjWatchLabel> parse_watch_labels(std::string_view text);

std::string obj_source_name(uint32_t src);
std::string obj_end_name(uint32_t reason);

// Text: one block per life:
//   life 3 obj 0xffff... (retval ktrack_test_obj_alloc) [values at track]
//     +0.000012 cpu1 ktrack_test_obj_step1 <- caller  arg1  mode=0x10
//     ...
//     freed by kmem_cache_free <- ktrack_test_obj_free after 5 hits
std::string format_lives_text(const std::vector<ObjLife> &lives, const std::vector<ObjWatchLabel> &labels,
                              const Symbolizer &syms);
// JSON: {"lives":[{...}]}.
std::string format_lives_json(const std::vector<ObjLife> &lives, const std::vector<ObjWatchLabel> &labels,
                              const Symbolizer &syms);

// Schemas of the KTRACK_REC_OBJ_* records (add them to a SchemaRegistry so
// generic views decode every field).
std::vector<Schema> objtrace_schemas();

// Reads a recorded file (TraceReader) and reconstructs its lives; labels
// from its META, symbols from its KSYMS chunk.
std::string report_objects(const std::string &path, bool json);

}  // namespace ktrack
