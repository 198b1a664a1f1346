// CTF 1.8 export (ktrackctl export --format ctf -o DIR): the Common Trace
// Format that LTTng writes, so babeltrace2 and Trace Compass open ktrack
// recordings.  DIR gets a TSDL 'metadata' file and one stream file per CPU
// ('stream_N', one packet each).
//
// Each decoded event becomes a CTF event of the class of its schema (a
// probe, marker, lost, stack...), named as 'report' names it:
//   event header   id, timestamp (the recording's clock, ns)
//   event context  pid, tgid, comm (unknown: "<idle>" for pid 0, else
//                  "<...>", as report's text), ctx ("task", "softirq", ...)
//   payload        probe records first: probe_event ("entry"/"exit"/"tp"),
//                  ip and parent_ip (named "sym+0xoff", as report --json),
//                  fault_mask; then the schema's fields, typed:
//                  u*/s* integers, x* integers in base 16, value names as
//                  CTF enumerations, symbols as named strings, strings,
//                  integer arrays as sequences, bytes as uint8 sequences.
// A field whose fetch faulted (report --json: null) is written as 0 or ""
// with its bit set in fault_mask.  Known limit of babeltrace2 2.0 (Debian
// 12): it shows an empty string field as the value the same field had in
// the event before.  Field names keep report's spelling
// (TSDL's leading underscore protects names that are TSDL keywords).
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "format/event.hpp"
#include "format/symbols.hpp"

namespace ktrack {

struct CtfTraceInfo {
  std::string hostname, kernel_release, clock, session;
};

class CtfWriter {
 public:
  // Creates DIR (it may exist, empty); throws ktrack::Error otherwise.
  CtfWriter(std::string dir, CtfTraceInfo info, const Symbolizer *symbols);
  ~CtfWriter();
  CtfWriter(const CtfWriter &) = delete;
  CtfWriter &operator=(const CtfWriter &) = delete;

  void add(const Event &ev);
  // Completes the packets and writes the metadata; throws on I/O errors.
  void finish();

  uint64_t events() const { return events_; }
  // Timestamps that went backwards on their CPU, written as the previous
  // one (a CTF stream is in time order).
  uint64_t clamped() const { return clamped_; }

 private:
  struct Stream {
    FILE *f = nullptr;
    std::vector<uint8_t> buf;
    uint64_t bytes = 0, first_ts = 0, last_ts = 0;
    bool any = false;
  };
  struct EventClass {
    uint32_t id = 0;
    std::string name;
    const Schema *schema = nullptr;
    bool has_ip = false;
  };
  Stream &stream(uint16_t cpu);
  const EventClass &event_class(const Event &ev);
  void flush(Stream &s);
  std::string metadata() const;

  std::string dir_;
  CtfTraceInfo info_;
  const Symbolizer *symbols_;
  uint8_t uuid_[16] = {};
  std::map<uint16_t, Stream> streams_;
  std::map<std::pair<const Schema *, std::string>, EventClass> classes_;
  std::map<std::string, int> class_names_;
  uint64_t events_ = 0, clamped_ = 0;
  bool finished_ = false;
};

}  // namespace ktrack
