// Host tests of the object tracker's function-set resolution: parsing
// available_filter_functions(_addrs) and kallsyms, globs with ':mod:', the
// BTF type filter and argument masks, ambiguous names, mask merging, and
// the ioctl argument it becomes.
#include <gtest/gtest.h>

#include <map>

#include "objtrace/objtrace_funcs.hpp"
#include "util/error.hpp"

using namespace ktrack;

namespace {

// Prototypes by name: the mask of 'inode' pointer arguments, or none.
class FakeArgs : public BtfFuncArgs {
 public:
  std::map<std::string, uint8_t> masks;
  std::optional<uint8_t> arg_mask(const std::string &func, const std::string &, const std::string &strct,
                                  unsigned nr_args) const override {
    auto it = masks.find(func);
    if (it == masks.end()) return std::nullopt;
    return strct == "inode" ? static_cast<uint8_t>(it->second & ((1u << nr_args) - 1)) : 0;
  }
  std::optional<std::string> pointee_struct(const std::string &func, int arg) const override {
    if (func == "alloc_inode" && arg < 0) return "inode";
    return std::nullopt;
  }
};

const char *kFilter =
    "inode_permission\n"
    "d_instantiate\n"
    "kfree\n"
    "dup_name\n"
    "dup_name\n"
    "inode_permission.isra.0\n"
    "kt_func [ktrack_test_objtrace]\n"
    "kt_other [ktrack_test_objtrace]\n"
    "inode_only_once\n";

const char *kKallsyms =
    "ffffffff81000100 T inode_permission\n"
    "ffffffff81000200 T d_instantiate\n"
    "ffffffff81000300 T kfree\n"
    "ffffffff81000400 t dup_name\n"
    "ffffffff81000500 t dup_name\n"
    "ffffffff81000600 t inode_permission.isra.0\n"
    "ffffffff81000700 D some_data\n"
    "ffffffff81000800 t inode_only_once\n"
    "ffffffff81000900 t inode_only_once\n"
    "ffffffffc0001000 t kt_func\t[ktrack_test_objtrace]\n"
    "ffffffffc0002000 t kt_other\t[ktrack_test_objtrace]\n";

FakeArgs fake() {
  FakeArgs f;
  f.masks = {{"inode_permission", 0x2},
             {"d_instantiate", 0x2},
             {"kfree", 0},
             {"dup_name", 0x1},
             {"inode_only_once", 0x1}};
  return f;
}

}  // namespace

TEST(ObjFuncs, ParsesFilterFunctions) {
  auto v = parse_filter_functions("a\nb [mod]\n\nffffffff81000004 c\nffffffffc0000004 d [m2]\n");
  ASSERT_EQ(4u, v.size());
  EXPECT_EQ("a", v[0].name);
  EXPECT_EQ("", v[0].module);
  EXPECT_EQ("mod", v[1].module);
  EXPECT_EQ(0xffffffff81000004ull, v[2].addr);
  EXPECT_EQ("c", v[2].name);
  EXPECT_EQ("d", v[3].name);
  EXPECT_EQ("m2", v[3].module);
}

TEST(ObjFuncs, Globs) {
  auto g = parse_func_glob("*:mod:ext4");
  EXPECT_EQ("*", g.glob);
  EXPECT_EQ("ext4", g.module);
  g = parse_func_glob(":mod:ext4");
  EXPECT_EQ("*", g.glob);
  EXPECT_THROW(parse_func_glob("a:b"), UsageError);
  EXPECT_THROW(parse_func_glob("a:mod:"), UsageError);
  auto gs = parse_func_globs("a b:mod:x", "m");
  ASSERT_EQ(2u, gs.size());
  EXPECT_EQ("m", gs[0].module);
  EXPECT_EQ("x", gs[1].module);
}

TEST(ObjFuncs, BtfTypedSelection) {
  auto traceable = parse_filter_functions(kFilter);
  KallsymsIndex ks(kKallsyms);
  FakeArgs btf = fake();
  auto globs = parse_func_globs("*", "");
  FuncSelection sel = select_functions(globs, traceable, ks, &btf, "inode", 6);
  EXPECT_EQ(9u, sel.matched);
  EXPECT_EQ(1u, sel.untyped);   // kfree
  EXPECT_EQ(3u, sel.no_proto);  // the clone and both module functions
  EXPECT_EQ(1u, sel.no_addr);   // inode_only_once: 1 ftrace entry, 2 kallsyms
  ASSERT_EQ(4u, sel.funcs.size());
  EXPECT_EQ(0xffffffff81000100ull, sel.funcs[0].addr);
  EXPECT_EQ(0x2, sel.funcs[0].arg_mask);
  EXPECT_EQ(0xffffffff81000400ull, sel.funcs[2].addr);  // both dup_name copies
  EXPECT_EQ(0xffffffff81000500ull, sel.funcs[3].addr);
  EXPECT_EQ(0x1, sel.funcs[3].arg_mask);
  auto text = describe_selection(sel, "*");
  EXPECT_NE(std::string::npos,
            text.find("hooking 4 functions that take a struct inode * (of 9 matching '*')"))
      << text;
  EXPECT_NE(std::string::npos, text.find("3 have no BTF prototype")) << text;
  // Fewer arguments checked: masks shrink, functions whose pointer is later drop.
  sel = select_functions(globs, traceable, ks, &btf, "inode", 1);
  EXPECT_EQ(2u, sel.funcs.size());
}

TEST(ObjFuncs, ModuleOnlyWithoutTypes) {
  auto traceable = parse_filter_functions(kFilter);
  KallsymsIndex ks(kKallsyms);
  auto globs = parse_func_globs("*", "ktrack_test_objtrace");
  FuncSelection sel = select_functions(globs, traceable, ks, nullptr, "", 6);
  EXPECT_EQ(2u, sel.matched);
  ASSERT_EQ(2u, sel.funcs.size());
  EXPECT_EQ(0xffffffffc0001000ull, sel.funcs[0].addr);
  EXPECT_EQ(0x3f, sel.funcs[0].arg_mask);
  EXPECT_EQ(0, sel.funcs[0].__pad[0]);
  sel =
      select_functions(parse_func_globs("kt_o*:mod:ktrack_test_objtrace", ""), traceable, ks, nullptr, "", 2);
  ASSERT_EQ(1u, sel.funcs.size());
  EXPECT_EQ(0x3, sel.funcs[0].arg_mask);
}

TEST(ObjFuncs, AddrsFileAndAliases) {
  // The _addrs file names __fentry__ sites: no kallsyms needed, duplicates resolved.
  auto traceable = parse_filter_functions(
      "ffffffff81000104 inode_permission\nffffffff81000404 dup_name\nffffffff81000504 dup_name\n");
  KallsymsIndex none("");
  FakeArgs btf = fake();
  FuncSelection sel = select_functions(parse_func_globs("*", ""), traceable, none, &btf, "inode", 6);
  ASSERT_EQ(3u, sel.funcs.size());
  EXPECT_EQ(0xffffffff81000104ull, sel.funcs[0].addr);
  EXPECT_EQ(0u, sel.no_addr);
}

TEST(ObjFuncs, MergesRareMasks) {
  std::vector<ktrack_obj_func> f;
  for (unsigned m = 1; m <= 20; m++)
    for (unsigned i = 0; i < 21 - m; i++)
      f.push_back({0xffffffff81000000ull + 16 * f.size(), uint8_t(m), {}});
  limit_masks(f);
  std::map<uint8_t, int> masks;
  for (auto &x : f) masks[x.arg_mask]++;
  EXPECT_EQ(size_t(KTRACK_OBJ_MAX_MASKS), masks.size());
  // The merged group covers every argument of the masks it absorbed.
  uint8_t merged = 0;
  for (unsigned m = KTRACK_OBJ_MAX_MASKS; m <= 20; m++) merged |= uint8_t(m);
  EXPECT_TRUE(masks.count(merged));
}

TEST(ObjFuncs, TrackedStructAndUapi) {
  FakeArgs btf = fake();
  ObjConfig cfg;
  cfg.sources.push_back(parse_obj_source("r:alloc_inode $retval"));
  EXPECT_EQ("inode", tracked_struct(cfg, &btf));
  EXPECT_EQ("", tracked_struct(cfg, nullptr));
  cfg.sources.clear();
  cfg.sources.push_back(parse_obj_source("r:something_else $retval"));
  EXPECT_EQ("", tracked_struct(cfg, &btf));
  cfg.func_addrs = {{0xffffffff81000100ull, 0x2, {}}, {0xffffffff81000200ull, 0x1, {}}};
  ktrack_obj_config c = cfg.to_uapi();
  EXPECT_TRUE(c.flags & KTRACK_OBJF_FUNC_ADDRS);
  EXPECT_EQ(sizeof(ktrack_obj_func), c.func_size);
  EXPECT_EQ(2u, c.functions_len);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(cfg.func_addrs.data()), c.functions_ptr);
  cfg.func_addrs.clear();
  c = cfg.to_uapi();
  EXPECT_FALSE(c.flags & KTRACK_OBJF_FUNC_ADDRS);
  EXPECT_EQ(0u, c.func_size);
}
