// BTF names in probe specs: "p vfs_read file->f_pos count", "$$args",
// "$arg2->pid" on tracepoints, and $retval typed from the function's return
// type.  Resolved in userspace with libbpf into plain argument indexes,
// dereference offsets and types; the kernel only ever sees offsets.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "host/btf.hpp"
#include "probes/probe_spec.hpp"

struct btf;
struct btf_dump;

namespace ktrack {

class BtfResolver {
 public:
  // Loads 'path' (a raw BTF file such as /sys/kernel/btf/vmlinux); throws
  // Error when it cannot be parsed.
  explicit BtfResolver(const std::string &path);
  ~BtfResolver();
  BtfResolver(const BtfResolver &) = delete;
  BtfResolver &operator=(const BtfResolver &) = delete;

  // The running kernel's BTF (/sys/kernel/btf/vmlinux), or nullptr when the
  // kernel has none.
  static std::unique_ptr<BtfResolver> open_system();

  // True when some argument needs BTF (names, $$args).
  static bool needed(const ProbeSpec &spec);

  // Resolves every BTF expression and $$args of 'spec', types untyped
  // $retval from the return type, then recompiles the filter.  Module
  // functions use /sys/kernel/btf/MOD when it exists.  Throws SpecError.
  void resolve(ProbeSpec &spec);

 private:
  std::unique_ptr<KernelBtf> btf_;  // host/btf: vmlinux and module BTF
  const struct btf *vmlinux_ = nullptr;
  std::string path_;
};

// One argument of a tracepoint's prototype (TP_PROTO, without 'void *__data').
struct TracepointArg {
  int index = 0;     // $argN
  std::string name;  // "prev"; empty when BTF has no name for it
  std::string type;  // "struct task_struct *"
  std::string decl;  // "struct task_struct *prev" (the C declaration)
};

// Tracepoint prototypes as C, from the BTF BtfResolver reads them from: the
// argument names a t probe accepts ('ktrackctl events').
class TracepointProtos {
 public:
  // The running kernel's BTF; nullptr with the reason in 'why' without it.
  static std::unique_ptr<TracepointProtos> open_system(std::string *why);
  ~TracepointProtos();
  TracepointProtos(const TracepointProtos &) = delete;
  TracepointProtos &operator=(const TracepointProtos &) = delete;

  // The arguments of tracepoint 'event' of 'module' ("": the kernel; a
  // module's own BTF when it has some, else vmlinux's); nullopt when BTF
  // does not describe it.
  std::optional<std::vector<TracepointArg>> args(const std::string &module, const std::string &event);
  // Does 'module' have BTF of its own (/sys/kernel/btf/MODULE)?
  bool module_has_btf(const std::string &module) const;

 private:
  explicit TracepointProtos(std::unique_ptr<KernelBtf> btf);
  std::unique_ptr<KernelBtf> btf_;
  std::map<const struct btf *, struct btf_dump *> dumps_;  // C declarations, one printer per BTF
  std::string text_;                                       // what the printers print
  std::map<const struct btf *, std::unordered_map<std::string, uint32_t>> names_;  // prototypes' names -> ids
};

// Without BTF: fails with a SpecError at the first argument that needs it.
void reject_btf_names(const ProbeSpec &spec, const std::string &why);

}  // namespace ktrack
