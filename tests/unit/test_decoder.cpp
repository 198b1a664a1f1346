// Decoder and schema registry: built-in records, probe schemas, malformed
// input, and a randomized fuzz loop over mutated records.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "format/event.hpp"
#include "records.hpp"
#include "util/error.hpp"

using namespace ktrack;

namespace {

using ktrack::testing::bytes_of;
using ktrack::testing::probe_schema;

ktrack_rec_hdr hdr(uint16_t type, uint16_t cpu = 1, uint64_t ts = 1000, uint32_t pid = 42,
                   uint32_t tgid = 40) {
  return ktrack::testing::rec_hdr(type, cpu, ts, pid, tgid);
}

std::vector<uint8_t> probe_record(uint32_t probe_id, uint16_t ev, std::string_view data,
                                  uint32_t fault_mask = 0) {
  std::string payload = ktrack::testing::probe_payload(probe_id, ev, 0xffffffff81000010ull,
                                                       0xffffffff81000100ull, data, fault_mask);
  std::vector<uint8_t> out;
  append_record(out, hdr(KTRACK_REC_PROBE), payload);
  return out;
}

// One record of a built-in type, decoded; 'ev' points into 'reg' and 'buf'.
struct BuiltinRecord {
  SchemaRegistry reg;
  Decoder dec{reg};
  std::vector<uint8_t> buf;
  Event ev;

  bool decode(uint16_t type, std::string_view payload) {
    append_record(buf, hdr(type), payload);
    return dec.decode(buf, ev);
  }
};

}  // namespace

TEST(Decoder, MarkerHeaderAndText) {
  SchemaRegistry reg;
  CommTable comms;
  comms.set(42, "bash");
  Decoder dec(reg, &comms);
  std::vector<uint8_t> buf;
  auto h = hdr(KTRACK_REC_MARKER, 3, 123456789, 42, 40);
  h.flags = KTRACK_RECF_CTX_SOFTIRQ;
  append_record(buf, h, std::string_view("hello world\0", 12));
  ASSERT_EQ(buf.size(), 40u);
  Event ev;
  std::string err;
  ASSERT_TRUE(dec.decode(buf, ev, &err)) << err;
  EXPECT_EQ(ev.type, KTRACK_REC_MARKER);
  EXPECT_EQ(ev.cpu, 3);
  EXPECT_EQ(ev.ts, 123456789u);
  EXPECT_EQ(ev.pid, 42u);
  EXPECT_EQ(ev.tgid, 40u);
  EXPECT_EQ(ev.len, 40u);
  EXPECT_EQ(ev.context(), KTRACK_RECF_CTX_SOFTIRQ);
  EXPECT_EQ(context_name(ev.context()), "softirq");
  EXPECT_EQ(ev.name, "marker");
  EXPECT_EQ(ev.comm, "bash");
  const FieldValue *t = ev.field("text");
  ASSERT_NE(t, nullptr);
  ASSERT_TRUE(t->valid);
  EXPECT_EQ(t->str(), "hello world");
  EXPECT_EQ(ev.field("nope"), nullptr);
}

TEST(Decoder, CommFallsBackToTgidAndResolver) {
  SchemaRegistry reg;
  CommTable comms;
  comms.set(40, "proc");
  int calls = 0;
  comms.set_resolver([&](uint32_t pid) -> std::optional<std::string> {
    calls++;
    if (pid == 7) return "seven";
    return std::nullopt;
  });
  Decoder dec(reg, &comms);
  std::vector<uint8_t> buf;
  append_record(buf, hdr(KTRACK_REC_MARKER, 0, 1, 42, 40), "x");
  Event ev;
  ASSERT_TRUE(dec.decode(buf, ev));
  EXPECT_EQ(ev.comm, "proc");
  buf.clear();
  append_record(buf, hdr(KTRACK_REC_MARKER, 0, 1, 7, 7), "x");
  ASSERT_TRUE(dec.decode(buf, ev));
  EXPECT_EQ(ev.comm, "seven");
  ASSERT_TRUE(dec.decode(buf, ev));
  EXPECT_EQ(calls, 2);  // 42 (miss, cached) and 7; the second decode hits the cache
}

TEST(Decoder, LostRecordWithEnum) {
  ktrack_rec_lost l{};
  l.count = 17;
  l.first_ts = 5;
  l.last_ts = 9;
  l.reason = KTRACK_LOST_OVERWRITTEN;
  BuiltinRecord rec;
  ASSERT_TRUE(rec.decode(KTRACK_REC_LOST, bytes_of(l)));
  const Event &ev = rec.ev;
  EXPECT_EQ(ev.name, "lost");
  EXPECT_EQ(ev.field("count")->u, 17u);
  EXPECT_EQ(ev.field("first_ts")->u, 5u);
  EXPECT_EQ(ev.field("last_ts")->u, 9u);
  const FieldValue *r = ev.field("reason");
  EXPECT_EQ(r->u, KTRACK_LOST_OVERWRITTEN);
  ASSERT_EQ(r->desc->enums.size(), 3u);
}

TEST(Decoder, EmitBytesBoundedBySize) {
  std::string payload(8, '\0');
  uint32_t id = 9, size = 3;
  std::memcpy(payload.data(), &id, 4);
  std::memcpy(payload.data() + 4, &size, 4);
  payload += "abcdefgh";  // 8 data bytes, only 3 used
  BuiltinRecord rec;
  ASSERT_TRUE(rec.decode(KTRACK_REC_EMIT, payload));
  const Event &ev = rec.ev;
  EXPECT_EQ(ev.field("id")->u, 9u);
  const FieldValue *d = ev.field("data");
  ASSERT_TRUE(d->valid);
  EXPECT_EQ(d->len, 3u);
  EXPECT_EQ(d->str(), "abc");
}

TEST(Decoder, TestSeq) {
  ktrack_rec_test_seq s{};
  s.seq = 77;
  s.context = KTRACK_RECF_CTX_HARDIRQ;
  s.run = 4;
  BuiltinRecord rec;
  ASSERT_TRUE(rec.decode(KTRACK_REC_TEST_SEQ, bytes_of(s)));
  const Event &ev = rec.ev;
  EXPECT_EQ(ev.name, "test_seq");
  EXPECT_EQ(ev.field("seq")->u, 77u);
  EXPECT_EQ(ev.field("context")->u, 2u);
  EXPECT_EQ(ev.field("run")->u, 4u);
}

TEST(Decoder, StackSymbolArrayBoundedByNr) {
  std::string payload(8, '\0');
  uint32_t pid = 5, nr = 2;
  std::memcpy(payload.data(), &pid, 4);
  std::memcpy(payload.data() + 4, &nr, 4);
  for (uint64_t ip : {0x1000ull, 0x2000ull, 0x3000ull}) payload += bytes_of(ip);
  BuiltinRecord rec;
  ASSERT_TRUE(rec.decode(KTRACK_REC_STACK, payload));
  const Event &ev = rec.ev;
  EXPECT_EQ(ev.probe_id, 5u);
  const FieldValue *ips = ev.field("ips");
  ASSERT_NE(ips, nullptr);
  ASSERT_TRUE(ips->valid);
  EXPECT_TRUE(ips->is_array);
  ASSERT_EQ(ips->count, 2u);
  EXPECT_EQ(ips->at(0), 0x1000u);
  EXPECT_EQ(ips->at(1), 0x2000u);
}

TEST(Decoder, ProbeSchemaPerIdAndEvent) {
  SchemaRegistry reg;
  reg.add(probe_schema(
      3, "do_open",
      {make_field("dfd", FieldType::S32, 0, 4), make_field("filename", FieldType::DynString, 4)}));
  reg.add(
      probe_schema(3, "do_open__return", {make_field("ret", FieldType::S64, 0, 8)}, KTRACK_PROBE_EV_EXIT));

  Decoder dec(reg);
  Event ev;
  // entry: dfd=-100, filename slot -> offset 8, length 5 ("/tmp\0")
  std::string data(8, '\0');
  int32_t dfd = -100;
  uint32_t slot = (8u << 16) | 5u;
  std::memcpy(data.data(), &dfd, 4);
  std::memcpy(data.data() + 4, &slot, 4);
  data += std::string_view("/tmp\0", 5);
  auto rec = probe_record(3, KTRACK_PROBE_EV_ENTRY, data);
  ASSERT_TRUE(dec.decode(rec, ev));
  EXPECT_EQ(ev.name, "do_open");
  EXPECT_TRUE(ev.has_ip);
  EXPECT_EQ(ev.ip, 0xffffffff81000010ull);
  EXPECT_EQ(ev.parent_ip, 0xffffffff81000100ull);
  EXPECT_EQ(ev.probe_event, KTRACK_PROBE_EV_ENTRY);
  EXPECT_EQ(ev.field("dfd")->s(), -100);
  EXPECT_FALSE(ev.field("dfd")->faulted);
  EXPECT_EQ(ev.field("filename")->str(), "/tmp");

  rec = probe_record(3, KTRACK_PROBE_EV_ENTRY, data, 2);
  ASSERT_TRUE(dec.decode(rec, ev));
  EXPECT_EQ(ev.fault_mask, 2u);
  EXPECT_FALSE(ev.field("dfd")->faulted);
  EXPECT_TRUE(ev.field("filename")->faulted);

  int64_t rv = -2;
  rec = probe_record(3, KTRACK_PROBE_EV_EXIT, bytes_of(rv));
  ASSERT_TRUE(dec.decode(rec, ev));
  EXPECT_EQ(ev.name, "do_open__return");
  EXPECT_EQ(ev.field("ret")->s(), -2);

  // An unknown probe id falls back to the generic schema.
  rec = probe_record(99, KTRACK_PROBE_EV_ENTRY, "abc");
  ASSERT_TRUE(dec.decode(rec, ev));
  EXPECT_EQ(ev.name, "probe");
  EXPECT_EQ(ev.probe_id, 99u);
  EXPECT_EQ(ev.field("data")->len, 3u);
}

TEST(Decoder, DynStringOutOfRangeIsInvalid) {
  SchemaRegistry reg;
  reg.add(probe_schema(1, "p", {make_field("s", FieldType::DynString, 0)}));
  Decoder dec(reg);
  uint32_t slot = (100u << 16) | 5u;
  auto rec = probe_record(1, KTRACK_PROBE_EV_ENTRY, bytes_of(slot));
  Event ev;
  ASSERT_TRUE(dec.decode(rec, ev));
  EXPECT_FALSE(ev.field("s")->valid);
}

TEST(Decoder, UnknownTypeAndShortPayload) {
  SchemaRegistry reg;
  Decoder dec(reg);
  std::vector<uint8_t> buf;
  append_record(buf, hdr(200), "zz");
  Event ev;
  ASSERT_TRUE(dec.decode(buf, ev));
  EXPECT_EQ(ev.name, "type_200");
  EXPECT_EQ(ev.schema, nullptr);
  EXPECT_TRUE(ev.fields.empty());

  buf.clear();
  append_record(buf, hdr(KTRACK_REC_LOST), "abc");  // 8-byte payload, lost needs 32
  ASSERT_TRUE(dec.decode(buf, ev));
  EXPECT_TRUE(ev.field("count")->valid);
  EXPECT_FALSE(ev.field("first_ts")->valid);
  EXPECT_FALSE(ev.field("reason")->valid);
}

TEST(Decoder, MalformedHeaders) {
  SchemaRegistry reg;
  Decoder dec(reg);
  Event ev;
  std::string err;
  std::vector<uint8_t> buf(10, 0);
  EXPECT_FALSE(dec.decode(buf, ev, &err));
  EXPECT_NE(err.find("truncated"), std::string::npos);
  buf.assign(32, 0);
  uint16_t len = 20;
  std::memcpy(buf.data(), &len, 2);
  EXPECT_FALSE(dec.decode(buf, ev, &err));
  len = 30;
  std::memcpy(buf.data(), &len, 2);
  EXPECT_FALSE(dec.decode(buf, ev, &err));
  len = 40;
  std::memcpy(buf.data(), &len, 2);
  EXPECT_FALSE(dec.decode(buf, ev, &err));
  EXPECT_NE(err.find("only 32 bytes"), std::string::npos);
  len = 32;
  std::memcpy(buf.data(), &len, 2);
  EXPECT_TRUE(dec.decode(buf, ev, &err));
}

TEST(Schema, ValidationRejectsBadSchemas) {
  SchemaRegistry reg;
  Schema s;
  s.rec_type = KTRACK_REC_PROBE;
  s.probe_id = 1;
  s.name = "has space";
  EXPECT_THROW(reg.add(s), Error);
  s.name = "ok";
  FieldDesc f;
  f.name = "x";
  f.type = FieldType::U32;
  f.size = 6;
  s.fields = {f};
  EXPECT_THROW(reg.add(s), Error);
  f.size = 4;
  FieldDesc g = f;
  s.fields = {f, g};
  EXPECT_THROW(reg.add(s), Error);  // duplicate name
  g.name = "y";
  g.type = FieldType::Bytes;
  g.size = 0;
  g.length_field = "later";
  s.fields = {f, g};
  EXPECT_THROW(reg.add(s), Error);
  g.length_field = "x";
  s.fields = {f, g};
  EXPECT_NO_THROW(reg.add(s));
  Schema m;
  m.rec_type = KTRACK_REC_MARKER;
  m.probe_id = 3;
  m.name = "marker";
  EXPECT_THROW(reg.add(m), Error);
}

TEST(Schema, SerializeRoundTrip) {
  SchemaRegistry reg;
  FieldDesc f = make_field("arr", FieldType::X16, 8, 16);
  f.enums = {{1, "one two"}, {2, "two"}};
  Schema s = probe_schema(12, "weird%name:x", {f}, KTRACK_PROBE_EV_EXIT);
  reg.add(s);
  std::string text = reg.serialize();
  SchemaRegistry back = SchemaRegistry::parse(text);
  EXPECT_EQ(back.serialize(), text);
  const Schema *b = back.find(KTRACK_REC_PROBE, 12, KTRACK_PROBE_EV_EXIT);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->name, "weird%name:x");
  ASSERT_EQ(b->fields.size(), 1u);
  EXPECT_EQ(b->fields[0].enums[0].name, "one two");
  EXPECT_EQ(back.all().size(), reg.all().size());
  EXPECT_NE(back.find(KTRACK_REC_MARKER), nullptr);

  EXPECT_THROW(SchemaRegistry::parse("S 2 0 0 marker 1\n"), Error);
  EXPECT_THROW(SchemaRegistry::parse("S 2 0 0 marker 1\nF x u99 0 1 % %\n"), Error);
  EXPECT_THROW(SchemaRegistry::parse("S x 0 0 marker 0\n"), Error);
  EXPECT_THROW(SchemaRegistry::parse("S 2 0 0 m%4 0\n"), Error);
}

// Random mutations of valid records: decode must never crash or read out
// of bounds (run under ASan in CI builds), and accepted records respect
// their own length.
TEST(Decoder, FuzzMutatedRecords) {
  SchemaRegistry reg;
  reg.add(probe_schema(1, "p",
                       {make_field("a", FieldType::U32, 0), make_field("b", FieldType::DynString, 4, 4),
                        make_field("c", FieldType::X64, 8, 0, "a")}));
  // Scalars of each width and sign, for locate() + RecordFields::scalar().
  reg.add(probe_schema(2, "q",
                       {make_field("s8", FieldType::S8, 0), make_field("s16", FieldType::S16, 2),
                        make_field("s32", FieldType::S32, 4), make_field("u64", FieldType::U64, 8),
                        make_field("x16", FieldType::X16, 16)}));
  Decoder dec(reg);
  std::vector<std::vector<uint8_t>> seeds;
  {
    seeds.push_back(probe_record(2, 1, std::string(18, '\xf0'), 0x4));
    std::vector<uint8_t> buf;
    append_record(buf, hdr(KTRACK_REC_MARKER), "some marker text");
    seeds.push_back(buf);
    seeds.push_back(probe_record(1, 1, std::string(40, 'x')));
    ktrack_rec_lost l{};
    buf.clear();
    append_record(buf, hdr(KTRACK_REC_LOST), bytes_of(l));
    seeds.push_back(buf);
    buf.clear();
    append_record(buf, hdr(KTRACK_REC_STACK), std::string(64, '\x01'));
    seeds.push_back(buf);
  }
  std::mt19937_64 rng(12345);
  Event ev;
  size_t accepted = 0;
  for (int iter = 0; iter < 200000; iter++) {
    std::vector<uint8_t> buf = seeds[rng() % seeds.size()];
    int nmut = 1 + rng() % 4;
    for (int m = 0; m < nmut; m++) {
      switch (rng() % 3) {
        case 0:
          buf[rng() % buf.size()] = static_cast<uint8_t>(rng());
          break;
        case 1:
          buf.resize(rng() % (buf.size() + 1));
          break;
        default:
          buf.insert(buf.begin() + rng() % (buf.size() + 1), static_cast<uint8_t>(rng()));
      }
      if (buf.empty()) break;
    }
    // Exact-size heap copy so ASan catches any over-read.
    std::unique_ptr<uint8_t[]> exact(new uint8_t[buf.size() ? buf.size() : 1]);
    if (!buf.empty()) std::memcpy(exact.get(), buf.data(), buf.size());
    std::span<const uint8_t> in(exact.get(), buf.size());
    RecordFields rf;
    bool located = dec.locate(in, rf);
    if (dec.decode(in, ev)) {
      accepted++;
      // locate() + scalar() give what decode() gives for every scalar
      // integer field, and nothing for the others.
      ASSERT_TRUE(located);
      ASSERT_EQ(rf.schema, ev.schema);
      for (size_t i = 0; i < ev.fields.size(); i++) {
        const FieldValue &f = ev.fields[i];
        bool want = f.valid && !f.faulted && !f.is_array && field_is_integer(f.desc->type);
        int64_t got = 0x5a5a;
        ASSERT_EQ(want, rf.scalar(i, got)) << "field " << f.desc->name << " iter " << iter;
        if (want) {
          ASSERT_EQ(f.s(), got) << "field " << f.desc->name;
        }
      }
      int64_t beyond = 0;
      ASSERT_FALSE(rf.scalar(ev.fields.size(), beyond));
      ASSERT_LE(ev.len, buf.size());
      for (const auto &f : ev.fields) {
        if (!f.valid || !f.data) continue;
        ASSERT_GE(f.data, in.data());
        ASSERT_LE(f.data + f.len, in.data() + ev.len);
      }
    } else {
      ASSERT_FALSE(located);
    }
  }
  EXPECT_GT(accepted, 1000u);
}
