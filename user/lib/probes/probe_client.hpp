// The probe ioctls of /dev/ktrack (KTRACK_IOC_PROBE_*), with every errno
// turned into a sentence that says what to fix, and the bridge from a
// probe's description to the decoder's SchemaRegistry.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <uapi/ktrack.h>

#include "format/event.hpp"
#include "probes/probe_spec.hpp"

namespace ktrack {

struct ProbeAdded {
  uint32_t id = 0;
  uint32_t state = 0;
  uint32_t mechanism = 0;
};

struct ProbeInfo {
  uint32_t id = 0;
  uint32_t kind = 0;
  uint32_t mechanism = 0;
  uint32_t state = 0;
  uint64_t hits = 0, misses = 0, filtered = 0, dropped = 0, faults = 0;
  uint64_t idle = 0;  // hits while the session was not recording (part of hits)
  uint32_t nr_funcs = 0;
  uint32_t arm_count = 0;
  std::string name;
  std::string target;
};

// The sentence for a failed PROBE_ADD of 'spec' (exposed for tests).
std::string explain_probe_add_errno(const ProbeSpec &spec, int err);
// Throws Error with a sentence when a module with 'features' (KTRACK_FEAT_*)
// cannot take 'spec' (u/ur without KTRACK_FEAT_UPROBE).
void check_probe_features(const ProbeSpec &spec, uint64_t features);

class ProbeClient {
 public:
  explicit ProbeClient(int fd) : fd_(fd) {}

  // Adds the compiled probe; throws Error with a sentence on failure.
  ProbeAdded add(const ProbeSpec &spec, const std::vector<uint8_t> &blob) const;
  // Raw add: returns 0 or -errno (tests send malformed blobs).
  int add_raw(const void *blob, uint32_t size, ProbeAdded *out) const;
  // Deletes by name; false when there is no such probe.
  bool del(const std::string &name) const;
  void del_all() const;
  std::vector<ProbeInfo> list() const;
  // The description blob of probe 'id' (to decode its records).
  std::vector<uint8_t> get(uint32_t id) const;
  // The per-function counters of profiling probe 'id' (KTRACK_PROBE_F_PROFILE),
  // summed over CPUs; 'overflow' gets the hits its tables had no room for.
  std::vector<ktrack_profile_entry> profile(uint32_t id, uint64_t *overflow = nullptr) const;

 private:
  int fd_;
};

// The decoder schema of one probe (its records' data[] fields by name).
Schema probe_decoder_schema(uint32_t id, const ProbeSchema &ps);

// Registers a schema for every probe of the session behind 'fd' (so records
// of probes added by another ktrackctl decode with field names).
void register_probe_schemas(int fd, SchemaRegistry &reg);

// Parses, resolves (kallsyms, tracefs, BTF) and compiles a spec for the
// running kernel: what 'probe add' and 'trace' do before the ioctl.
struct CompiledProbe {
  ProbeSpec spec;
  std::vector<uint8_t> blob;
};
// globs_in_kernel: an entry-only f on one glob goes to the kernel unmatched
// (SystemSymbols), for a probe attached now and not scoped to a graph.
CompiledProbe compile_probe_for_system(const std::string &text, uint32_t stack_depth = 0,
                                       uint64_t hit_limit = 0, bool globs_in_kernel = false);

// An entry-only f probe on one function named outright (no glob, no module,
// no --graph), and a p probe at a function's entry (by name, offset 0, a
// function ftrace lists), go to the kernel's own ftrace_ops when the loaded
// module has it (KTRACK_FEAT_KERNEL_GLOB, KTRACK_FEAT_KPROBE_FTRACE_OPS):
// ftrace matches the name, and a hit costs one callback with the argument
// registers, no fprobe (6.12) or kprobe machinery.  Recompiles c.blob;
// false when 'c' stays.
bool prefer_ftrace_ops(CompiledProbe &c, uint64_t features);

}  // namespace ktrack
