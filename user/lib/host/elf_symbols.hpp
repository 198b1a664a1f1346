// An ELF file's functions and loadable segments, read with libelf: what a
// u/ur probe needs to turn PATH:SYMBOL[+OFFS] or PATH:0xADDR into the file
// offset the kernel's uprobes take.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ktrack {

struct ElfFunction {
  std::string name;    // without a version (malloc, not malloc@@GLIBC_2.2.5)
  uint64_t addr = 0;   // st_value: the ELF virtual address
  uint64_t size = 0;   // st_size, 0 when unknown
  bool local = false;  // STB_LOCAL: a global of the same name is preferred
};

class ElfSymbols {
 public:
  // Reads 'path' (an x86-64 ELF file); throws Error with a sentence saying
  // what to fix when it is missing, unreadable, not ELF or not x86-64.
  explicit ElfSymbols(const std::string &path);

  // The defined function 'name' (STT_FUNC or STT_GNU_IFUNC; a versioned
  // name matches its base), from .symtab, else .dynsym; nullopt when none.
  std::optional<ElfFunction> function(const std::string &name) const;
  // Every defined function's name, sorted, once each ("did you mean").
  std::vector<std::string> function_names() const;
  // The file offset of ELF address 'addr' through the executable PT_LOAD
  // that holds it (addr - p_vaddr + p_offset); nullopt outside them.
  std::optional<uint64_t> file_offset(uint64_t addr) const;

 private:
  struct Segment {
    uint64_t vaddr, filesz, offset;
  };
  std::vector<ElfFunction> symtab_, dynsym_;
  std::vector<Segment> text_;
};

}  // namespace ktrack
