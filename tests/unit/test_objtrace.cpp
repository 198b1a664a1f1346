// Host tests of the object tracker's userspace: source/watch parsing, the
// ioctl config it builds, and the reconstruction of lives from synthetic
// OBJ_* records (text and JSON).
#include <gtest/gtest.h>

#include <cstring>

#include "fake_lockdown.hpp"
#include "objtrace/objtrace.hpp"
#include "util/error.hpp"

using namespace ktrack;

namespace {

class FakeBtf : public BtfFields {
 public:
  void resolve(const std::string &strct, const std::string &path, uint32_t &offset, uint16_t &size,
               bool &is_signed) const override {
    if (strct != "inode") throw UsageError("no struct " + strct);
    if (path == "i_mode") {
      offset = 0;
      size = 2;
      is_signed = false;
    } else if (path == "i_count.counter") {
      offset = 352;
      size = 4;
      is_signed = true;
    } else if (path == "i_sb") {
      offset = 40;
      size = 8;
      is_signed = false;
    } else if (path == "i_data") {
      offset = 400;
      size = 200;
      is_signed = false;
    } else {
      throw UsageError("no member " + path);
    }
  }
};

}  // namespace

TEST(ObjSource, RetvalAndArgs) {
  auto s = parse_obj_source("r:alloc_inode $retval");
  EXPECT_EQ(KTRACK_OBJ_SRC_RETVAL, s.type);
  EXPECT_EQ("alloc_inode", s.symbol);
  EXPECT_FALSE(s.deref);
  s = parse_obj_source("alloc_inode%return $retval");
  EXPECT_EQ(KTRACK_OBJ_SRC_RETVAL, s.type);
  EXPECT_EQ("alloc_inode", s.symbol);
  s = parse_obj_source("p:myprobe/vfs_open $arg2");
  EXPECT_EQ(KTRACK_OBJ_SRC_ARG, s.type);
  EXPECT_EQ("vfs_open", s.symbol);
  EXPECT_EQ(1u, s.arg);
  s = parse_obj_source("p:vfs_open +16($arg1)");
  EXPECT_EQ(KTRACK_OBJ_SRC_ARG, s.type);
  EXPECT_TRUE(s.deref);
  EXPECT_EQ(16u, s.deref_offset);
  EXPECT_EQ(0u, s.arg);
  s = parse_obj_source("r:d_alloc +48($retval)");
  EXPECT_TRUE(s.deref);
  EXPECT_EQ(48u, s.deref_offset);
  s = parse_obj_source("0xff5800edc04b4000");  // 5-level paging (LA57)
  EXPECT_EQ(0xff5800edc04b4000ull, s.addr);
  EXPECT_THROW(parse_obj_source("0x00ff800000000000"), UsageError);
  s = parse_obj_source("0xffff888001234500");
  EXPECT_EQ(KTRACK_OBJ_SRC_EXPLICIT, s.type);
  EXPECT_EQ(0xffff888001234500ull, s.addr);
}

TEST(ObjSource, BadInputSaysWhy) {
  for (const char *bad : {"", "r:alloc_inode", "r:alloc_inode $arg1", "p:vfs_open $retval",
                          "p:vfs_open $arg0", "p:vfs_open $arg7", "p:vfs_open $x", "r:9bad $retval",
                          "p:vfs_open +3($arg1)", "p:vfs_open +8$arg1", "0x1000"}) {
    try {
      parse_obj_source(bad);
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const UsageError &e) {
      EXPECT_NE(nullptr, std::strstr(e.what(), "invalid object source")) << e.what();
    }
  }
}

TEST(ObjWatch, OffsetForm) {
  auto w = parse_obj_watch("+4:u16", nullptr);
  EXPECT_EQ(4u, w.offset);
  EXPECT_EQ(2u, w.size);
  EXPECT_FALSE(w.is_signed);
  EXPECT_EQ("+4", w.label);
  w = parse_obj_watch("+0x10:s32", nullptr);
  EXPECT_EQ(16u, w.offset);
  EXPECT_EQ(4u, w.size);
  EXPECT_TRUE(w.is_signed);
  EXPECT_THROW(parse_obj_watch("+4", nullptr), UsageError);                 // no type
  EXPECT_THROW(parse_obj_watch("+4:u12", nullptr), UsageError);             // bad type
  EXPECT_THROW(parse_obj_watch("+4:f32", nullptr), UsageError);             // bad type
  EXPECT_THROW(parse_obj_watch("+99999:u8", nullptr), UsageError);          // offset too large
  EXPECT_THROW(parse_obj_watch("inode->i_mode:u16", nullptr), UsageError);  // needs BTF
}

TEST(ObjWatch, BtfForm) {
  FakeBtf btf;
  auto w = parse_obj_watch("inode->i_mode:u16", &btf);
  EXPECT_EQ(0u, w.offset);
  EXPECT_EQ(2u, w.size);
  EXPECT_EQ("inode->i_mode", w.label);
  w = parse_obj_watch("struct inode->i_count.counter", &btf);
  EXPECT_EQ(352u, w.offset);
  EXPECT_EQ(4u, w.size);
  EXPECT_TRUE(w.is_signed);
  EXPECT_EQ("s32", w.type);
  w = parse_obj_watch("inode->i_data:u64", &btf);  // part of a big field, with a type
  EXPECT_EQ(400u, w.offset);
  EXPECT_EQ(8u, w.size);
  EXPECT_THROW(parse_obj_watch("inode->i_data", &btf), UsageError);  // 200 bytes, no type
  EXPECT_THROW(parse_obj_watch("inode->nope", &btf), UsageError);
  EXPECT_THROW(parse_obj_watch("dentry->d_flags", &btf), UsageError);
  EXPECT_THROW(parse_obj_watch("->i_mode", &btf), UsageError);
}

TEST(ObjConfig, ToUapi) {
  ObjConfig c;
  c.functions = "vfs_* do_open";
  c.watches.push_back(parse_obj_watch("+4:u16", nullptr));
  c.watches.push_back(parse_obj_watch("+8:s64", nullptr));
  c.flags = KTRACK_OBJF_CHANGES_ONLY;
  c.max_objects = 100;
  c.nr_args = 3;
  parse_obj_destructor("iput:arg1", c);
  auto u = c.to_uapi();
  EXPECT_EQ(sizeof(u), u.size);
  EXPECT_EQ(KTRACK_OBJF_CHANGES_ONLY, u.flags);
  EXPECT_EQ(100u, u.max_objects);
  EXPECT_EQ(3u, u.nr_args);
  EXPECT_EQ(2u, u.nr_watch);
  EXPECT_EQ(4u, u.watch[0].offset);
  EXPECT_EQ(2u, u.watch[0].size);
  EXPECT_EQ(0u, u.watch[0].flags);
  EXPECT_EQ(KTRACK_OBJ_WATCH_SIGNED, u.watch[1].flags);
  EXPECT_EQ(0u, u.watch[2].size);
  EXPECT_STREQ("iput", u.destructor);
  EXPECT_EQ(0u, u.destructor_arg);
  EXPECT_EQ(c.functions.size(), u.functions_len);
  EXPECT_EQ(0,
            std::memcmp(reinterpret_cast<const char *>(u.functions_ptr), "vfs_* do_open", u.functions_len));
  EXPECT_EQ(0u, u.derive_offset);
}

TEST(ObjConfig, ValidateSaysWhat) {
  ObjConfig c;
  c.max_objects = 0;
  EXPECT_THROW(c.validate(), UsageError);
  c.max_objects = KTRACK_OBJ_MAX_OBJECTS + 1;
  EXPECT_THROW(c.validate(), UsageError);
  c.max_objects = 10;
  c.nr_args = 7;
  EXPECT_THROW(c.validate(), UsageError);
  c.nr_args = 6;
  c.functions = "  ";
  EXPECT_THROW(c.validate(), UsageError);
  c.functions = "*";
  for (int i = 0; i < 5; i++) c.watches.push_back(parse_obj_watch("+0:u8", nullptr));
  EXPECT_THROW(c.validate(), UsageError);
  c.watches.resize(4);
  EXPECT_NO_THROW(c.validate());
  EXPECT_THROW(parse_obj_destructor("iput:arg7", c), UsageError);
  EXPECT_THROW(parse_obj_destructor("bad name", c), UsageError);
}

TEST(ObjErrno, Sentences) {
  EXPECT_NE(std::string::npos, explain_obj_errno("configure", ENOSPC).find("--max-objects"));
  EXPECT_NE(std::string::npos, explain_obj_errno("configure", EINVAL).find("traceable"));
  EXPECT_NE(std::string::npos, explain_obj_errno("configure", ENOTTY).find("object tracker"));
  {
    test::FakeLockdown ld("confidentiality");
    std::string m = explain_obj_errno("configure", EPERM);
    EXPECT_NE(std::string::npos, m.find("locked down (confidentiality)")) << m;
  }
  {
    test::FakeLockdown ld("integrity");
    EXPECT_NE(std::string::npos, explain_obj_errno("configure", EPERM).find("run as root"));
  }
  EXPECT_NE(std::string::npos, explain_obj_errno("enable the object tracker", ESTALE).find("module"));
  EXPECT_NE(std::string::npos,
            explain_obj_errno("enable the object tracker", ESTALE).find("re-run objtrace"));
}

namespace {

constexpr uint64_t kObj = 0xffff888004a1b000ull;

ktrack_rec_hdr hdr(uint16_t type, uint64_t ts, uint16_t cpu = 0) {
  ktrack_rec_hdr h{};
  h.type = type;
  h.ts = ts;
  h.cpu = cpu;
  h.pid = 42;
  h.tgid = 42;
  return h;
}

template <typename T>
std::string_view bytes(const T &t) {
  return {reinterpret_cast<const char *>(&t), sizeof(t)};
}

void add_track(std::vector<uint8_t> &out, uint64_t life, uint64_t ts, uint64_t mode) {
  ktrack_rec_obj_track r{};
  r.obj = kObj;
  r.life = life;
  r.ip = 0x1000;
  r.source = KTRACK_OBJ_SRC_RETVAL;
  r.nr_values = 1;
  r.values[0] = mode;
  append_record(out, hdr(KTRACK_REC_OBJ_TRACK, ts), bytes(r));
}

void add_hit(std::vector<uint8_t> &out, uint64_t life, uint64_t ts, uint64_t ip, uint16_t arg, uint32_t hit,
             uint64_t mode, uint32_t flags = 0, uint16_t cpu = 0) {
  ktrack_rec_obj_hit r{};
  r.obj = kObj;
  r.life = life;
  r.ip = ip;
  r.parent_ip = 0x9000;
  r.hit = hit;
  r.arg = arg;
  r.nr_values = 1;
  r.values[0] = mode;
  r.flags = flags;
  if (flags & KTRACK_OBJ_HITF_PREV) {
    r.prev_ip = 0x2000;
    r.prev_ts = ts - 5;
    r.prev_cpu = 1;
  }
  append_record(out, hdr(KTRACK_REC_OBJ_HIT, ts, cpu), bytes(r));
}

void add_untrack(std::vector<uint8_t> &out, uint64_t life, uint64_t ts, uint32_t reason, uint64_t hits) {
  ktrack_rec_obj_untrack r{};
  r.obj = kObj;
  r.life = life;
  r.ip = 0x5000;
  r.parent_ip = 0x9100;
  r.hits = hits;
  r.reason = reason;
  append_record(out, hdr(KTRACK_REC_OBJ_UNTRACK, ts), bytes(r));
}

std::vector<ObjLife> build(const std::vector<uint8_t> &recs) {
  ObjLifeBuilder b;
  size_t off = 0;
  while (off < recs.size()) {
    ktrack_rec_hdr h;
    std::memcpy(&h, recs.data() + off, sizeof(h));
    b.add_raw({recs.data() + off, h.len});
    off += h.len;
  }
  return b.lives();
}

Symbolizer fake_syms() {
  Symbolizer s;
  s.load(
      "0000000000001000 T obj_alloc\n0000000000002000 T obj_step1\n0000000000003000 T obj_step2\n"
      "0000000000004000 T obj_step6\n0000000000005000 T kmem_cache_free\n0000000000009000 T run_once\n");
  return s;
}

}  // namespace

TEST(ObjLife, ReconstructsOrderedPathAndNewLifeAtSameAddress) {
  std::vector<uint8_t> recs;
  add_track(recs, 7, 100, 0x10);
  add_hit(recs, 7, 110, 0x2004, 0, 1, 0x10);
  // Out of timestamp order across CPUs: the hit number orders them.
  add_hit(recs, 7, 125, 0x4004, 5, 3, 0x30, KTRACK_OBJ_HITF_CHANGED, 1);
  add_hit(recs, 7, 120, 0x3004, 1, 2, 0x20, KTRACK_OBJ_HITF_CHANGED);
  add_untrack(recs, 7, 130, KTRACK_OBJ_END_FREE, 3);
  add_track(recs, 8, 140, 0x10);
  add_hit(recs, 8, 150, 0x2004, 0, 1, 0x10);
  add_untrack(recs, 8, 160, KTRACK_OBJ_END_FREE, 1);
  // A record of another type is ignored.
  append_record(recs, hdr(KTRACK_REC_MARKER, 170), std::string_view("hello"));

  auto lives = build(recs);
  ASSERT_EQ(2u, lives.size());
  EXPECT_EQ(7u, lives[0].life);
  EXPECT_EQ(8u, lives[1].life);
  EXPECT_EQ(lives[0].obj, lives[1].obj);  // same address, two lives
  ASSERT_EQ(3u, lives[0].hits.size());
  EXPECT_EQ(0x2004u, lives[0].hits[0].ip);
  EXPECT_EQ(0x3004u, lives[0].hits[1].ip);
  EXPECT_EQ(0x4004u, lives[0].hits[2].ip);
  EXPECT_EQ(0u, lives[0].hits[0].arg);
  EXPECT_EQ(1u, lives[0].hits[1].arg);
  EXPECT_EQ(5u, lives[0].hits[2].arg);
  EXPECT_EQ(0x20u, lives[0].hits[1].values.at(0));
  EXPECT_TRUE(lives[0].tracked);
  EXPECT_TRUE(lives[0].ended);
  EXPECT_EQ(KTRACK_OBJ_END_FREE, lives[0].end_reason);
  ASSERT_EQ(1u, lives[1].hits.size());

  auto syms = fake_syms();
  std::vector<ObjWatchLabel> labels = parse_watch_labels("mode:u16");
  std::string text = format_lives_text(lives, labels, syms);
  EXPECT_NE(std::string::npos, text.find("life 7 obj 0xffff888004a1b000 tracked by retval obj_alloc"))
      << text;
  EXPECT_NE(std::string::npos, text.find("obj_step1 <- run_once+0x0  arg1  mode=0x10")) << text;
  EXPECT_NE(std::string::npos, text.find("obj_step2 <- run_once+0x0  arg2  mode=0x20  changed")) << text;
  EXPECT_NE(std::string::npos, text.find("obj_step6 <- run_once+0x0  arg6  mode=0x30  changed")) << text;
  EXPECT_NE(std::string::npos, text.find("end: free by kmem_cache_free <- run_once+0x100")) << text;
  EXPECT_NE(std::string::npos, text.find("life 8 obj 0xffff888004a1b000")) << text;
  EXPECT_LT(text.find("obj_step1"), text.find("obj_step2"));
  EXPECT_LT(text.find("obj_step2"), text.find("obj_step6"));

  std::string json = format_lives_json(lives, labels, syms);
  EXPECT_NE(std::string::npos, json.find("\"life\":7,\"obj\":\"0xffff888004a1b000\"")) << json;
  EXPECT_NE(std::string::npos, json.find("\"function\":\"obj_step6\",\"caller\":\"run_once+0x0\",\"arg\":6,"
                                         "\"changed\":true,\"values\":{\"mode\":48}"))
      << json;
  EXPECT_NE(std::string::npos, json.find("\"end\":{\"reason\":\"free\",\"function\":\"kmem_cache_free\""))
      << json;
}

TEST(ObjLife, ChangesOnlyShowsWhereLastSeenUnchanged) {
  std::vector<uint8_t> recs;
  add_track(recs, 1, 100, 0x10);
  add_hit(recs, 1, 120, 0x3004, 1, 2, 0x20, KTRACK_OBJ_HITF_CHANGED | KTRACK_OBJ_HITF_PREV);
  auto lives = build(recs);
  ASSERT_EQ(1u, lives.size());
  ASSERT_EQ(1u, lives[0].hits.size());
  EXPECT_EQ(0x2000u, lives[0].hits[0].prev_ip);
  auto syms = fake_syms();
  std::string text = format_lives_text(lives, parse_watch_labels("mode:u16"), syms);
  EXPECT_NE(std::string::npos, text.find("(last seen unchanged: obj_step1 cpu1 at +0.000000015)")) << text;
  EXPECT_NE(std::string::npos, text.find("still tracked")) << text;
  std::string json = format_lives_json(lives, parse_watch_labels("mode:u16"), syms);
  EXPECT_NE(std::string::npos,
            json.find("\"last_unchanged\":{\"function\":\"obj_step1\",\"cpu\":1,\"ts\":115}"))
      << json;
}

TEST(ObjLife, TruncatedRecordsAreIgnored) {
  std::vector<uint8_t> recs;
  ktrack_rec_obj_hit r{};
  append_record(recs, hdr(KTRACK_REC_OBJ_HIT, 1), std::string_view(reinterpret_cast<const char *>(&r), 16));
  ObjLifeBuilder b;
  EXPECT_FALSE(b.add_raw(recs));
  EXPECT_TRUE(b.lives().empty());
}

TEST(ObjLife, SignedValuesAndLabels) {
  auto l = parse_watch_labels("inode->i_count.counter:s32;+4:u16");
  ASSERT_EQ(2u, l.size());
  EXPECT_EQ("inode->i_count.counter", l[0].label);
  EXPECT_TRUE(l[0].is_signed);
  EXPECT_EQ(4u, l[0].size);
  std::vector<uint8_t> recs;
  ktrack_rec_obj_track r{};
  r.obj = kObj;
  r.life = 3;
  r.nr_values = 2;
  r.values[0] = 0xffffffffu;  // -1 as s32
  r.values[1] = 7;
  r.fault_mask = 2;  // second value unreadable
  append_record(recs, hdr(KTRACK_REC_OBJ_TRACK, 5), bytes(r));
  auto lives = build(recs);
  Symbolizer none;
  std::string text = format_lives_text(lives, l, none);
  EXPECT_NE(std::string::npos, text.find("inode->i_count.counter=-1  +4=<fault>")) << text;
  std::string json = format_lives_json(lives, l, none);
  EXPECT_NE(std::string::npos, json.find("{\"inode->i_count.counter\":-1,\"+4\":null}")) << json;
}

TEST(ObjSchemas, DecodeHitRecords) {
  SchemaRegistry reg;
  for (auto &s : objtrace_schemas()) reg.add(s);
  std::vector<uint8_t> recs;
  add_hit(recs, 9, 100, 0x2004, 5, 4, 0x30, KTRACK_OBJ_HITF_CHANGED);
  Decoder dec(reg);
  Event ev;
  ASSERT_TRUE(dec.decode(recs, ev));
  EXPECT_EQ("obj_hit", ev.name);
  ASSERT_NE(nullptr, ev.field("life"));
  EXPECT_EQ(9u, ev.field("life")->u);
  EXPECT_EQ(5u, ev.field("arg")->u);
  ASSERT_NE(nullptr, ev.field("values"));
  EXPECT_EQ(1u, ev.field("values")->count);
  EXPECT_EQ(0x30u, ev.field("values")->at(0));
}
