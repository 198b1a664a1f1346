// Struct member offsets from the kernel's BTF (libbpf), for watches written
// as STRUCT->FIELD.  Without libbpf the loader reports why and the caller
// falls back to +OFFSET:TYPE.
#include <fmt/format.h>

#include "host/btf.hpp"
#include "objtrace/objtrace.hpp"
#include "util/error.hpp"

#ifdef KTRACK_HAVE_LIBBPF
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#endif

namespace ktrack {

#ifdef KTRACK_HAVE_LIBBPF
namespace {

class LibbpfFields : public BtfFields {
 public:
  explicit LibbpfFields(std::unique_ptr<KernelBtf> kb) : kb_(std::move(kb)), btf_(kb_->vmlinux()) {}

  void resolve(const std::string &strct, const std::string &path, uint32_t &offset, uint16_t &size,
               bool &is_signed) const override {
    int id = btf__find_by_name_kind(btf_, strct.c_str(), BTF_KIND_STRUCT);
    if (id < 0) id = btf__find_by_name_kind(btf_, strct.c_str(), BTF_KIND_UNION);
    if (id < 0) throw UsageError(fmt::format("the kernel's BTF has no struct '{}'", strct));
    uint64_t bits = 0;
    std::string_view rest = path;
    std::string seen = strct;
    while (!rest.empty()) {
      size_t dot = rest.find('.');
      std::string name(rest.substr(0, dot));
      rest = dot == std::string_view::npos ? std::string_view{} : rest.substr(dot + 1);
      uint64_t off = 0;
      int mid = find_member(id, name, off);
      if (mid < 0)
        throw UsageError(fmt::format("struct '{}' has no member '{}' in the kernel's BTF", seen, name));
      bits += off;
      seen += "." + name;
      id = mid;
      if (!rest.empty()) {
        const struct btf_type *t = btf__type_by_id(btf_, btf__resolve_type(btf_, id));
        if (!t || (!btf_is_struct(t) && !btf_is_union(t)))
          throw UsageError(fmt::format("'{}' is not a struct: cannot take '.{}' of it", seen, rest));
        id = btf__resolve_type(btf_, id);
      }
    }
    if (bits % 8) throw UsageError(fmt::format("'{}->{}' is a bit field: use +OFFSET:TYPE", strct, path));
    offset = static_cast<uint32_t>(bits / 8);
    int rid = btf__resolve_type(btf_, id);
    long sz = rid < 0 ? -1 : btf__resolve_size(btf_, rid);
    const struct btf_type *t = rid < 0 ? nullptr : btf__type_by_id(btf_, rid);
    size = sz > 0 && sz <= 0xffff ? static_cast<uint16_t>(sz) : 0;
    is_signed = t && btf_is_int(t) && (btf_int_encoding(t) & BTF_INT_SIGNED);
  }

 private:
  // Member 'name' of struct/union 'id' (anonymous members searched); returns
  // its type id and bit offset, or -1.
  int find_member(int id, const std::string &name, uint64_t &bit_off) const {
    const struct btf_type *t = btf__type_by_id(btf_, id);
    if (!t || (!btf_is_struct(t) && !btf_is_union(t))) return -1;
    const struct btf_member *m = btf_members(t);
    for (int i = 0; i < btf_vlen(t); i++, m++) {
      uint64_t off = btf_member_bit_offset(t, i);
      const char *mname = btf__name_by_offset(btf_, m->name_off);
      if (mname && *mname) {
        if (name == mname) {
          bit_off = off;
          return static_cast<int>(m->type);
        }
        continue;
      }
      uint64_t inner = 0;
      int r = find_member(btf__resolve_type(btf_, m->type), name, inner);
      if (r >= 0) {
        bit_off = off + inner;
        return r;
      }
    }
    return -1;
  }

  std::unique_ptr<KernelBtf> kb_;
  const struct btf *btf_;
};

}  // namespace

std::unique_ptr<BtfFields> load_vmlinux_btf(std::string *why) {
  auto kb = KernelBtf::open(why);
  if (!kb) return nullptr;
  return std::make_unique<LibbpfFields>(std::move(kb));
}
#else
std::unique_ptr<BtfFields> load_vmlinux_btf(std::string *why) {
  if (why) *why = "ktrackctl was built without libbpf";
  return nullptr;
}
#endif

}  // namespace ktrack
