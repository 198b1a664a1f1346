// BTF names in probe specs: "p vfs_read file->f_pos count", "$$args",
// "$arg2->pid" on tracepoints, and $retval typed from the function's return
// type.  Resolved in userspace with libbpf into plain argument indexes,
// dereference offsets and types; the kernel only ever sees offsets.
#pragma once

#include <memory>
#include <string>

#include "host/btf.hpp"
#include "probes/probe_spec.hpp"

struct btf;

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

// Without BTF: fails with a SpecError at the first argument that needs it.
void reject_btf_names(const ProbeSpec &spec, const std::string &why);

}  // namespace ktrack
