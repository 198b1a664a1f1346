// ELF symbols and PT_LOAD segments through libelf (host/elf_symbols.hpp).
#include "host/elf_symbols.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "util/error.hpp"

namespace ktrack {

namespace {

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};
struct ElfDeleter {
  void operator()(Elf *e) const { elf_end(e); }
};

// The defined functions of one symbol table section.
std::vector<ElfFunction> read_functions(Elf *elf, Elf_Scn *scn, const GElf_Shdr &sh) {
  std::vector<ElfFunction> out;
  Elf_Data *data = elf_getdata(scn, nullptr);
  if (!data || sh.sh_entsize == 0) return out;
  size_t n = sh.sh_size / sh.sh_entsize;
  for (size_t i = 0; i < n; i++) {
    GElf_Sym sym;
    if (!gelf_getsym(data, (int)i, &sym)) continue;
    int type = GELF_ST_TYPE(sym.st_info);
    if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
      continue;
    const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
    if (!name || !*name) continue;
    std::string base(name);
    base = base.substr(0, base.find('@'));  // malloc@@GLIBC_2.2.5
    out.push_back({base, sym.st_value, sym.st_size, GELF_ST_BIND(sym.st_info) == STB_LOCAL});
  }
  return out;
}

const ElfFunction *find(const std::vector<ElfFunction> &v, const std::string &name) {
  // a global (or weak) one before a local (static) one of the same name
  const ElfFunction *local = nullptr;
  for (const auto &f : v)
    if (f.name == name) {
      if (!f.local) return &f;
      if (!local) local = &f;
    }
  return local;
}

}  // namespace

ElfSymbols::ElfSymbols(const std::string &path) {
  if (elf_version(EV_CURRENT) == EV_NONE) throw Error("libelf is too old for this ELF version");
  Fd fd{open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (fd.fd < 0) {
    int e = errno;
    if (e == ENOENT || e == ENOTDIR)
      throw Error(
          fmt::format("{} does not exist: give the absolute path of a program or shared library", path));
    throw Error(explain_errno(fmt::format("open {}", path), e));
  }
  std::unique_ptr<Elf, ElfDeleter> elf(elf_begin(fd.fd, ELF_C_READ, nullptr));
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF)
    throw Error(fmt::format("{} is not an ELF file: a u probe goes in a program or shared library", path));
  GElf_Ehdr eh;
  if (!gelf_getehdr(elf.get(), &eh)) throw Error(fmt::format("{}: bad ELF header: {}", path, elf_errmsg(-1)));
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64)
    throw Error(
        fmt::format("{} is not x86-64 code (ELF machine {}, class {}): probe a program built for this "
                    "machine",
                    path, eh.e_machine, eh.e_ident[EI_CLASS] == ELFCLASS64 ? 64 : 32));
  size_t nph = 0;
  if (elf_getphdrnum(elf.get(), &nph) == 0)
    for (size_t i = 0; i < nph; i++) {
      GElf_Phdr ph;
      if (gelf_getphdr(elf.get(), (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
        text_.push_back({ph.p_vaddr, ph.p_filesz, ph.p_offset});
    }
  Elf_Scn *scn = nullptr;
  while ((scn = elf_nextscn(elf.get(), scn))) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) continue;
    if (sh.sh_type == SHT_SYMTAB) symtab_ = read_functions(elf.get(), scn, sh);
    if (sh.sh_type == SHT_DYNSYM) dynsym_ = read_functions(elf.get(), scn, sh);
  }
}

std::optional<ElfFunction> ElfSymbols::function(const std::string &name) const {
  std::string base = name.substr(0, name.find('@'));
  if (const ElfFunction *f = find(symtab_, base)) return *f;
  if (const ElfFunction *f = find(dynsym_, base)) return *f;
  return std::nullopt;
}

std::vector<std::string> ElfSymbols::function_names() const {
  std::vector<std::string> out;
  for (const auto *v : {&symtab_, &dynsym_})
    for (const auto &f : *v) out.push_back(f.name);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::optional<uint64_t> ElfSymbols::file_offset(uint64_t addr) const {
  for (const auto &s : text_)
    if (addr >= s.vaddr && addr - s.vaddr < s.filesz) return addr - s.vaddr + s.offset;
  return std::nullopt;
}

}  // namespace ktrack
