// u and ur probes: the spec syntax and its errors (with their carets), ELF
// symbols to file offsets (host/elf_symbols) checked against a reading of
// the ELF headers of its own, and the description a u/ur spec compiles to.
#include <elf.h>
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <limits.h>
#include <stdlib.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include "analysis/analysis_source.hpp"
#include "format/event.hpp"
#include "format/format.hpp"
#include "format/symbols.hpp"
#include "host/elf_symbols.hpp"
#include "probes/probe_attach.hpp"
#include "probes/probe_client.hpp"
#include "probes/probe_spec.hpp"
#include "records.hpp"

using namespace ktrack;

namespace {

// u/ur look nothing up in the kernel's symbols.
class NoSymbols : public SymbolSource {
 public:
  std::vector<uint64_t> lookup(const std::string &, const std::string &) override { return {}; }
  std::vector<std::string> filter_functions() override { return {}; }
  bool tracepoint_exists(const std::string &, const std::string &) override { return false; }
  std::vector<std::string> aliases(const std::string &) override { return {}; }
};

std::string real(const std::string &p) {
  char buf[PATH_MAX];
  return realpath(p.c_str(), buf) ? std::string(buf) : p;
}

// The file offset of function 'name' as readelf's numbers give it: the
// symbol's st_value in 'table' (SHT_SYMTAB or SHT_DYNSYM), less p_vaddr
// plus p_offset of the executable PT_LOAD holding it; 0 when not found.
uint64_t readelf_offset(const std::string &path, const std::string &name, uint32_t table = SHT_SYMTAB) {
  std::ifstream in(path, std::ios::binary);
  std::string f((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (f.size() < sizeof(Elf64_Ehdr)) return 0;
  Elf64_Ehdr eh;
  std::memcpy(&eh, f.data(), sizeof(eh));
  auto shdr = [&](size_t i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, f.data() + eh.e_shoff + i * eh.e_shentsize, sizeof(sh));
    return sh;
  };
  uint64_t value = 0;
  for (size_t i = 0; i < eh.e_shnum && !value; i++) {
    Elf64_Shdr sh = shdr(i);
    if (sh.sh_type != table) continue;
    Elf64_Shdr strs = shdr(sh.sh_link);
    for (size_t k = 0; k < sh.sh_size / sizeof(Elf64_Sym); k++) {
      Elf64_Sym sym;
      std::memcpy(&sym, f.data() + sh.sh_offset + k * sizeof(sym), sizeof(sym));
      if (ELF64_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_shndx != SHN_UNDEF &&
          name == f.data() + strs.sh_offset + sym.st_name)
        value = sym.st_value;
    }
  }
  for (size_t i = 0; i < eh.e_phnum && value; i++) {
    Elf64_Phdr ph;
    std::memcpy(&ph, f.data() + eh.e_phoff + i * eh.e_phentsize, sizeof(ph));
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) && value >= ph.p_vaddr &&
        value < ph.p_vaddr + ph.p_filesz)
      return value - ph.p_vaddr + ph.p_offset;
  }
  return 0;
}

ProbeSpec resolved(const std::string &text) {
  ProbeSpec s = parse_probe_spec(text);
  NoSymbols syms;
  resolve_symbols(s, syms);
  return s;
}

ktrack_probe_desc desc_of(const std::vector<uint8_t> &blob) {
  ktrack_probe_desc d;
  std::memcpy(&d, blob.data(), sizeof(d));
  return d;
}

ktrack_probe_fetch fetch_of(const std::vector<uint8_t> &blob, size_t i) {
  ktrack_probe_fetch f;
  std::memcpy(&f, blob.data() + desc_of(blob).fetch_off + i * sizeof(f), sizeof(f));
  return f;
}

// An error: SpecError with 'msg' in its message and the caret at 'pos'.
void expect_error(const std::string &spec, size_t pos, const std::string &msg) {
  try {
    parse_probe_spec(spec);
    ADD_FAILURE() << spec << ": no error";
  } catch (const SpecError &e) {
    EXPECT_EQ(pos, e.pos()) << spec << " -> " << e.what();
    EXPECT_NE(std::string::npos, e.message().find(msg)) << spec << " -> " << e.what();
  }
}

// A target the system does not have: a runtime error (not a usage one:
// ktrackctl exits 2), 'msg' in it, the spec and the caret at 'pos' under it.
void expect_resolve_error(const std::string &spec, size_t pos, const std::string &msg) {
  try {
    resolved(spec);
    ADD_FAILURE() << spec << ": no error";
  } catch (const UsageError &e) {
    ADD_FAILURE() << spec << ": a usage error: " << e.what();
  } catch (const Error &e) {
    std::string w = e.what();
    EXPECT_NE(std::string::npos, w.find(msg)) << spec << " -> " << w;
    EXPECT_NE(std::string::npos, w.find("\n  " + spec + "\n  " + std::string(pos, ' ') + "^")) << w;
  }
}

}  // namespace

TEST(UprobeSpec, ParsesTheAcceptanceSpellings) {
  ProbeSpec s = parse_probe_spec("u:m /lib/x86_64-linux-gnu/libc.so.6:malloc size=$arg1");
  EXPECT_EQ(ProbeKind::kUprobe, s.kind);
  EXPECT_EQ("m", s.name);
  EXPECT_EQ("/lib/x86_64-linux-gnu/libc.so.6", s.path);
  EXPECT_EQ("malloc", s.symbol);
  EXPECT_EQ(0u, s.offset);
  ASSERT_EQ(1u, s.args.size());
  EXPECT_EQ(KTRACK_FETCH_SRC_ARG, s.args[0].src);

  s = parse_probe_spec("ur:mr /lib/x86_64-linux-gnu/libc.so.6:malloc ret=$retval:x64");
  EXPECT_EQ(ProbeKind::kUretprobe, s.kind);
  EXPECT_EQ(KTRACK_FETCH_SRC_RETVAL, s.args[0].src);
  EXPECT_EQ(KTRACK_FETCH_T_X, s.args[0].type);

  s = parse_probe_spec("u:o /usr/bin/foo:open_file name=+0($arg1):ustring");
  EXPECT_EQ(KTRACK_FETCH_T_USTRING, s.args[0].type);
  EXPECT_EQ(KTRACK_FETCH_F_USER, s.args[0].flags & KTRACK_FETCH_F_USER);

  s = parse_probe_spec("ur:d /path/bin:fn dur=$duration");
  EXPECT_EQ(KTRACK_FETCH_SRC_DURATION, s.args[0].src);

  s = parse_probe_spec("u /path/bin:fn%return");  // p's spelling of r, for u
  EXPECT_EQ(ProbeKind::kUretprobe, s.kind);
  EXPECT_EQ("ur_fn_0", s.name);
}

TEST(UprobeSpec, UserMemoryAndDefaults) {
  // :string is a user string, every dereference reads user memory; $comm stays a string
  ProbeSpec s = parse_probe_spec(
      "u:GRP/n /a:b/c:fn s=+0($arg1):string p=+8(+0(%di)):u32 c=$comm st=$stack2 r=%ax if s == \"x*\" => "
      "stop snapshot");
  EXPECT_EQ("GRP", s.group);
  EXPECT_EQ("/a:b/c", s.path);  // split at the last ':'
  EXPECT_EQ("fn", s.symbol);
  EXPECT_EQ(0u, s.offset);
  EXPECT_EQ(0x40u, parse_probe_spec("u /a:fn+0x40 %ax").offset);
  EXPECT_EQ(KTRACK_FETCH_T_USTRING, s.args[0].type);
  EXPECT_TRUE(s.args[0].flags & KTRACK_FETCH_F_USER);
  EXPECT_TRUE(s.args[1].flags & KTRACK_FETCH_F_USER);
  EXPECT_EQ(2u, s.args[1].deref.size());
  EXPECT_EQ(KTRACK_FETCH_T_STRING, s.args[2].type);
  EXPECT_FALSE(s.args[2].flags & KTRACK_FETCH_F_USER);
  EXPECT_EQ(KTRACK_FETCH_SRC_STACK, s.args[3].src);
  EXPECT_FALSE(s.args[4].flags & KTRACK_FETCH_F_USER);  // a register, no memory read
  EXPECT_EQ(2u, s.actions.size());
  EXPECT_FALSE(s.program.empty());

  EXPECT_EQ("u_malloc_0", parse_probe_spec("u /x:malloc").name);
  EXPECT_EQ("u_malloc_16", parse_probe_spec("u /x:malloc+16").name);
  EXPECT_EQ("u_0x1139", parse_probe_spec("u /x:0x1139").name);
  EXPECT_EQ(0x1139u, parse_probe_spec("u /x:0x1139").addr);
  EXPECT_EQ("ur_malloc_0", parse_probe_spec("ur /x:malloc").name);
  EXPECT_EQ("u_malloc__GLIBC_2_2_5_0", parse_probe_spec("u /x:malloc@@GLIBC_2.2.5").name);
  std::string longsym(60, 'a');
  EXPECT_EQ(size_t(KTRACK_PROBE_NAME_MAX - 1), parse_probe_spec("u /x:" + longsym).name.size());
}

TEST(UprobeSpec, ErrorsHaveTheirCarets) {
  expect_error("u lib/libc.so.6:malloc", 2, "absolute path");
  expect_error("u /usr/bin/foo", 14, "missing ':SYMBOL'");
  expect_error("u /usr/bin/foo:", 15, "missing symbol or address");
  expect_error("ur /bin/foo:fn+4", 14, "drop the offset");
  expect_error("u /bin/foo:fn+4%return", 11, "drop the offset");
  expect_error("u /bin/foo:fn%entry", 13, "unknown suffix");
  expect_error("u /bin/foo:fn-4", 13, "negative offset");
  expect_error("u /bin/foo:fn+zz", 14, "bad offset");
  expect_error("u /bin/foo:f#n", 12, "bad character");
  expect_error("u /bin/foo:fn x=@jiffies", 16, "cannot use @SYM");
  expect_error("u /bin/foo:fn $field", 14, "cannot use $FIELD");
  expect_error("u /bin/foo:fn file->f_pos", 14, "BTF");
  expect_error("u /bin/foo:fn $arg1->pid", 14, "BTF");
  expect_error("u /bin/foo:fn $$args", 14, "$$args");
  expect_error("u /bin/foo:fn r=$retval", 16, "$retval is only for return probes");
  expect_error("u /bin/foo:fn d=$duration", 16, "$duration is only for return probes");
  expect_error("u /bin/foo:fn+8 a=$arg1", 18, "only at function entry");
  expect_error("u /bin/foo:fn x=$arg1:symbol", 14, ":symbol");
  expect_error("u /bin/foo:fn => stack", 17, "kernel stacks of a user probe say nothing");
  expect_error("ur:x /bin/foo:fn => stop stack:2", 25, "kernel stacks of a user probe say nothing");
  expect_error("ux /bin/foo:fn", 1, "expected ':NAME'");
  expect_error("z /bin/foo:fn", 0, "u (uprobe), ur (uretprobe) or U (user event)");
}

TEST(UprobeElf, SymbolsBecomeFileOffsets) {
  for (const char *path : {KT_ELF_EXE, KT_ELF_PIE, KT_ELF_LIB}) {
    SCOPED_TRACE(path);
    ElfSymbols elf(path);
    for (const char *fn : {"kt_elf_fn", "kt_elf_other", "kt_elf_local"}) {
      auto f = elf.function(fn);
      ASSERT_TRUE(f) << fn;
      EXPECT_GT(f->size, 0u);
      uint64_t want = readelf_offset(path, fn);
      ASSERT_NE(0u, want) << fn;
      EXPECT_EQ(want, elf.file_offset(f->addr)) << fn;
    }
    EXPECT_TRUE(elf.function("kt_elf_local")->local);
    EXPECT_FALSE(elf.function("no_such_fn"));
    EXPECT_FALSE(elf.file_offset(0));  // no code at ELF address 0
  }
}

TEST(UprobeElf, DynsymWhenStripped) {
  ElfSymbols elf(KT_ELF_STRIPPED);
  ASSERT_EQ(0u, readelf_offset(KT_ELF_STRIPPED, "kt_elf_fn"));  // no .symtab left
  auto f = elf.function("kt_elf_fn");
  ASSERT_TRUE(f);
  EXPECT_EQ(readelf_offset(KT_ELF_STRIPPED, "kt_elf_fn", SHT_DYNSYM), elf.file_offset(f->addr));
  EXPECT_EQ(readelf_offset(KT_ELF_LIB, "kt_elf_fn"), elf.file_offset(f->addr));  // same code as unstripped
  EXPECT_FALSE(elf.function("kt_elf_local"));                                    // a static one is gone
}

TEST(UprobeElf, LibcMallocThroughItsDynsym) {
  const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
  if (access(libc, R_OK) != 0) GTEST_SKIP() << libc << " is not here";
  ProbeSpec s = resolved(std::string("u:m ") + libc + ":malloc size=$arg1");
  EXPECT_EQ(real(libc), s.path);  // /lib -> /usr/lib: the real path
  EXPECT_EQ(readelf_offset(libc, "malloc", SHT_DYNSYM), s.file_offset);
  EXPECT_NE(0u, s.file_offset);
  // a versioned name matches too
  EXPECT_EQ(s.file_offset, resolved(std::string("u ") + libc + ":malloc@@GLIBC_2.2.5").file_offset);
}

TEST(UprobeElf, ResolutionErrors) {
  const std::string exe = KT_ELF_EXE;
  expect_resolve_error("u /no/such/file:fn", 2, "/no/such/file does not exist");
  expect_resolve_error(std::string("u ") + __FILE__ + ":fn", 2, "not an ELF file");
  expect_resolve_error("u /proc/self/status:fn", 2, "not an ELF file");
  expect_resolve_error("u " + exe + ":kt_elf_fm", 3 + exe.size(), "did you mean kt_elf_fn");
  expect_resolve_error("u " + exe + ":kt_elf_fn+100000", 3 + exe.size(), "past its end");
  expect_resolve_error("u " + exe + ":0x10", 3 + exe.size(), "no executable segment");
  // the same file for another machine (e_machine: AArch64)
  std::ifstream in(exe, std::ios::binary);
  std::string f((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  uint16_t machine = EM_AARCH64;
  std::memcpy(f.data() + offsetof(Elf64_Ehdr, e_machine), &machine, sizeof(machine));
  std::string arm = ::testing::TempDir() + "uprobe_elf_aarch64";
  std::ofstream(arm, std::ios::binary) << f;
  expect_resolve_error("u " + arm + ":kt_elf_fn", 2, "is not x86-64 code");
  std::remove(arm.c_str());
}

TEST(UprobeElf, AddressIsAnElfAddress) {
  ElfSymbols elf(KT_ELF_PIE);
  auto f = elf.function("kt_elf_fn");
  ASSERT_TRUE(f);
  ProbeSpec s = resolved(fmt::format("u {}:0x{:x}", KT_ELF_PIE, f->addr));
  EXPECT_EQ(readelf_offset(KT_ELF_PIE, "kt_elf_fn"), s.file_offset);
  EXPECT_EQ("", s.symbol);
}

TEST(UprobeCompile, DescFollowsTheUapi) {
  const std::string exe = KT_ELF_EXE;
  ProbeSpec s = resolved("u:m " + exe + ":kt_elf_fn+0 x=$arg1 s=+0($arg2):string c=$comm");
  std::vector<uint8_t> blob = compile_probe(s);
  ktrack_probe_desc d = desc_of(blob);
  EXPECT_EQ(uint32_t(KTRACK_PROBE_UPROBE), d.kind);
  EXPECT_EQ(0u, d.flags);
  EXPECT_STREQ("m", d.name);
  EXPECT_STREQ("", d.module);
  EXPECT_STREQ("kt_elf_fn", d.symbol);
  EXPECT_EQ(0u, d.addr);
  EXPECT_EQ(readelf_offset(exe, "kt_elf_fn"), d.offset);
  EXPECT_EQ(0u, d.stack_depth);
  EXPECT_EQ(0u, d.maxactive);
  ASSERT_EQ(1u, d.nr_funcs);
  std::string path = real(exe);
  ASSERT_EQ(path.size() + 1, d.funcs_len);
  EXPECT_EQ(path, std::string(reinterpret_cast<const char *>(blob.data() + d.funcs_off)));
  EXPECT_EQ('\0', blob[d.funcs_off + d.funcs_len - 1]);
  ASSERT_EQ(3u, d.nr_fetch);
  EXPECT_EQ(KTRACK_FETCH_SRC_ARG, fetch_of(blob, 0).src);
  EXPECT_EQ(KTRACK_FETCH_T_USTRING, fetch_of(blob, 1).type);
  EXPECT_EQ(KTRACK_FETCH_F_USER, fetch_of(blob, 1).flags);
  EXPECT_EQ(1u, fetch_of(blob, 1).nderef);
  EXPECT_EQ(KTRACK_FETCH_T_STRING, fetch_of(blob, 2).type);  // $comm stays as it is
  ProbeSchema ps = schema_from_desc(blob);
  EXPECT_EQ(s.text, ps.spec);
  EXPECT_STREQ("u", probe_kind_name(ps.kind));

  // ur: the function's entry, $retval and $duration; a PIE and a library alike
  for (const char *file : {KT_ELF_PIE, KT_ELF_LIB}) {
    ProbeSpec r = resolved(std::string("ur ") + file + ":kt_elf_other ret=$retval dur=$duration a=$arg1");
    blob = compile_probe(r);
    d = desc_of(blob);
    EXPECT_EQ(uint32_t(KTRACK_PROBE_URETPROBE), d.kind);
    EXPECT_STREQ("ur_kt_elf_other_0", d.name);
    EXPECT_EQ(readelf_offset(file, "kt_elf_other"), d.offset);
    EXPECT_EQ(KTRACK_FETCH_SRC_RETVAL, fetch_of(blob, 0).src);
    EXPECT_EQ(KTRACK_FETCH_SRC_DURATION, fetch_of(blob, 1).src);
    EXPECT_STREQ("ur", probe_kind_name(d.kind));
  }
  EXPECT_STREQ("uprobe", mechanism_name(KTRACK_MECH_UPROBE));
}

TEST(UprobeCompile, FeatureAndErrnoSentences) {
  ProbeSpec s = resolved(std::string("u:m ") + KT_ELF_EXE + ":kt_elf_fn");
  EXPECT_THROW(check_probe_features(s, KTRACK_FEAT_KPROBE), Error);
  EXPECT_NO_THROW(check_probe_features(s, KTRACK_FEAT_UPROBE));
  EXPECT_NO_THROW(check_probe_features(parse_probe_spec("p vfs_read"), 0));
  EXPECT_NE(std::string::npos, explain_probe_add_errno(s, ENOENT).find("does not exist"));
  EXPECT_NE(std::string::npos, explain_probe_add_errno(s, EINVAL).find("instruction boundary"));
  EXPECT_NE(std::string::npos, explain_probe_add_errno(s, EOPNOTSUPP).find("cannot place a uprobe"));
  EXPECT_NE(std::string::npos, explain_probe_add_errno(s, EPERM).find("permission denied"));
}

TEST(UprobeFormat, UserIpsAreNotKernelSymbols) {
  ProbeSpec s = resolved(std::string("u:m ") + KT_ELF_EXE + ":kt_elf_fn+0x2");
  Schema sc = probe_decoder_schema(7, schema_from_desc(compile_probe(s)));
  EXPECT_TRUE(sc.user_ip);
  EXPECT_EQ("kt_elf_fn+0x2", sc.user_site);
  SchemaRegistry reg(false);
  reg.add(sc);
  SchemaRegistry back = SchemaRegistry::parse(reg.serialize());
  const Schema *b = back.find(KTRACK_REC_PROBE, 7, 0);
  ASSERT_TRUE(b);
  EXPECT_TRUE(b->user_ip);
  EXPECT_EQ("kt_elf_fn+0x2", b->user_site);
  // a kernel probe's schema line stays as before
  EXPECT_EQ(std::string::npos, SchemaRegistry().serialize().find(" u:"));
}

namespace {

std::vector<uint8_t> probe_rec(uint32_t id, uint16_t event, uint64_t ip, uint64_t parent_ip) {
  std::string payload = ktrack::testing::probe_payload(id, event, ip, parent_ip, "");
  ktrack_rec_hdr h = ktrack::testing::rec_hdr(KTRACK_REC_PROBE, 0, 1000, 42, 42);
  h.len = static_cast<uint16_t>((sizeof(h) + payload.size() + 7) & ~size_t(7));
  std::vector<uint8_t> out(h.len);
  std::memcpy(out.data(), &h, sizeof(h));
  std::memcpy(out.data() + sizeof(h), payload.data(), payload.size());
  return out;
}

std::string text_of(const SchemaRegistry &reg, const Symbolizer &syms, const std::vector<uint8_t> &rec,
                    bool json = false) {
  Decoder dec(reg);
  Event ev;
  EXPECT_TRUE(dec.decode(rec, ev));
  fmt::memory_buffer out;
  FormatOptions opt;
  opt.symbols = &syms;
  if (json)
    format_json(ev, opt, out);
  else
    format_text(ev, opt, out);
  return fmt::to_string(out);
}

}  // namespace

TEST(UprobeFormat, RecordsShowTheSiteNotKernelSymbols) {
  // a symbol table that would name the user addresses, were they kernel ones
  Symbolizer syms;
  syms.load("0000555555550000 T kernel_fn\n0000555555560000 T kernel_end\n");
  SchemaRegistry reg;
  ProbeSpec u = resolved(std::string("u:m ") + KT_ELF_EXE + ":kt_elf_fn+0x2");
  reg.add(probe_decoder_schema(1, schema_from_desc(compile_probe(u))));
  ProbeSpec ur = resolved(std::string("ur:r ") + KT_ELF_EXE + ":kt_elf_fn");
  reg.add(probe_decoder_schema(2, schema_from_desc(compile_probe(ur))));
  ProbeSpec a =
      resolved(fmt::format("u:a {}:0x{:x}", KT_ELF_EXE, ElfSymbols(KT_ELF_EXE).function("kt_elf_fn")->addr));
  reg.add(probe_decoder_schema(3, schema_from_desc(compile_probe(a))));
  reg.add(ktrack::testing::probe_schema(4, "k", {}));

  std::string t = text_of(reg, syms, probe_rec(1, KTRACK_PROBE_EV_ENTRY, 0x555555551002, 0x555555551100));
  EXPECT_NE(std::string::npos, t.find("m: (kt_elf_fn+0x2)")) << t;
  EXPECT_EQ(std::string::npos, t.find("kernel_fn")) << t;
  t = text_of(reg, syms, probe_rec(2, KTRACK_PROBE_EV_EXIT, 0x555555551000, 0x555555551100));
  EXPECT_NE(std::string::npos, t.find("r: (0x555555551100 <- kt_elf_fn)")) << t;
  t = text_of(reg, syms, probe_rec(3, KTRACK_PROBE_EV_ENTRY, 0x555555551000, 0x555555551100));
  EXPECT_NE(std::string::npos, t.find("a: (0x555555551000)")) << t;
  t = text_of(reg, syms, probe_rec(1, KTRACK_PROBE_EV_ENTRY, 0x555555551002, 0x555555551100), true);
  EXPECT_NE(std::string::npos, t.find("\"ip\":\"kt_elf_fn+0x2\",\"parent_ip\":\"0x555555551100\"")) << t;
  // a kernel probe's addresses are still named
  t = text_of(reg, syms, probe_rec(4, KTRACK_PROBE_EV_ENTRY, 0x555555551002, 0));
  EXPECT_NE(std::string::npos, t.find("kernel_fn+0x1002")) << t;
}

TEST(UprobeSpec, RecordTakesThemAsSpecs) {
  EXPECT_TRUE(looks_like_probe_spec("u /bin/foo:fn"));
  EXPECT_TRUE(looks_like_probe_spec("u:m /bin/foo:fn"));
  EXPECT_TRUE(looks_like_probe_spec("ur /bin/foo:fn"));
  EXPECT_TRUE(looks_like_probe_spec("ur:d /bin/foo:fn"));
  EXPECT_FALSE(looks_like_probe_spec("uname -a"));
  EXPECT_FALSE(looks_like_probe_spec("urandom"));
}

TEST(UprobeAnalysis, ViewsNameTheSite) {
  Symbolizer syms;
  syms.load("0000555555550000 T kernel_fn\n0000555555560000 T kernel_end\n");
  SchemaRegistry reg;
  reg.add(probe_decoder_schema(
      1, schema_from_desc(compile_probe(resolved(std::string("u:m ") + KT_ELF_EXE + ":kt_elf_fn+0x2")))));
  reg.add(probe_decoder_schema(
      2, schema_from_desc(compile_probe(resolved(std::string("ur:r ") + KT_ELF_EXE + ":kt_elf_fn")))));
  reg.add(ktrack::testing::probe_schema(3, "k", {}));
  analysis::EventNames names(reg, &syms, nullptr);
  analysis::Sample s;
  s.kind = analysis::Kind::Entry;
  s.probe_id = 1;
  s.ip = 0x555555551002;
  names.note_user_ip(s);
  EXPECT_EQ("kt_elf_fn+0x2", names.symbolize(0x555555551002));
  EXPECT_EQ("kt_elf_fn", names.func_name(0x555555551002));
  s.kind = analysis::Kind::Exit;
  s.probe_id = 2;
  s.ip = 0x7f0000001000;  // another process, another address: the same function
  names.note_user_ip(s);
  EXPECT_EQ("kt_elf_fn", names.symbolize(0x7f0000001000));
  s.probe_id = 3;  // a kernel probe's address keeps its kernel name
  s.ip = 0x555555552000;
  names.note_user_ip(s);
  EXPECT_EQ("kernel_fn+0x2000", names.symbolize(0x555555552000));
}
