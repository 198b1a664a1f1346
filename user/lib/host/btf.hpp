// The one home of the kernel's BTF: vmlinux (/sys/kernel/btf/vmlinux) and
// each module's split BTF (/sys/kernel/btf/MODULE), loaded through libbpf.
// Probe specs (BTF names, $$args), objtrace watches (STRUCT->FIELD) and
// objtrace function sets (argument types) all read types through it.
#pragma once

#include <map>
#include <memory>
#include <string>

struct btf;

namespace ktrack {

class KernelBtf {
 public:
  // The running kernel's BTF ('path' replaces /sys/kernel/btf/vmlinux), or
  // nullptr with the reason in 'why' (no BTF, or built without libbpf).
  static std::unique_ptr<KernelBtf> open(std::string *why = nullptr,
                                         const std::string &path = "/sys/kernel/btf/vmlinux");
  ~KernelBtf();
  KernelBtf(const KernelBtf &) = delete;
  KernelBtf &operator=(const KernelBtf &) = delete;

  const struct btf *vmlinux() const { return vmlinux_; }
  // A module's BTF (types numbered after vmlinux's), loaded at the first
  // call; null when the module has none.
  const struct btf *module(const std::string &name) const;

 private:
  explicit KernelBtf(struct btf *vmlinux) : vmlinux_(vmlinux) {}
  struct btf *vmlinux_;
  mutable std::map<std::string, struct btf *> modules_;
};

}  // namespace ktrack
