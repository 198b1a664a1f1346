#include "host/btf.hpp"

#include <filesystem>

#ifdef KTRACK_HAVE_LIBBPF
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#endif

namespace ktrack {

#ifdef KTRACK_HAVE_LIBBPF

std::unique_ptr<KernelBtf> KernelBtf::open(std::string *why, const std::string &path) {
  std::error_code ec;
  struct btf *b = std::filesystem::exists(path, ec) ? btf__parse(path.c_str(), nullptr) : nullptr;
  if ((!b || libbpf_get_error(b)) && path == "/sys/kernel/btf/vmlinux") {
    // No sysfs BTF: libbpf's other places (/boot/vmlinux-RELEASE, ...).
    b = btf__load_vmlinux_btf();
  }
  if (!b || libbpf_get_error(b)) {
    if (why) *why = "the kernel has no BTF (" + path + ")";
    return nullptr;
  }
  return std::unique_ptr<KernelBtf>(new KernelBtf(b));
}

KernelBtf::~KernelBtf() {
  for (auto &[name, b] : modules_)
    if (b) btf__free(b);
  btf__free(vmlinux_);
}

const struct btf *KernelBtf::module(const std::string &name) const {
  auto [it, inserted] = modules_.try_emplace(name, nullptr);
  if (!inserted) return it->second;
  std::string path = "/sys/kernel/btf/" + name;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return nullptr;
  struct btf *b = btf__parse_split(path.c_str(), vmlinux_);
  if (b && libbpf_get_error(b)) b = nullptr;
  it->second = b;
  return b;
}

#else

std::unique_ptr<KernelBtf> KernelBtf::open(std::string *why, const std::string &) {
  if (why) *why = "ktrackctl was built without libbpf";
  return nullptr;
}
KernelBtf::~KernelBtf() = default;
const struct btf *KernelBtf::module(const std::string &) const { return nullptr; }

#endif

}  // namespace ktrack
