/*
 * Functions at known symbols for test_uprobe_spec: built (-O1) as an
 * executable, a PIE and a shared library, and the library once more
 * stripped to its .dynsym.  Their addresses become file offsets through
 * the PT_LOAD that holds them.
 */
__attribute__((noinline)) long kt_elf_fn(long x, const char *s) {
  __asm__ volatile("" : : "r"(s) : "memory");
  return x * 3 + 7;
}

__attribute__((noinline)) static long kt_elf_local(long x) {
  __asm__ volatile("" : : : "memory");
  return x + 1;
}

long kt_elf_other(long x) { return kt_elf_local(x) + kt_elf_fn(x, "s"); }

#ifndef KT_ELF_LIB
int main(int argc, char **argv) {
  (void)argv;
  return (int)kt_elf_other(argc);
}
#endif
