// libktrack_sample - ktrack embedded in a program of your own: open a
// session, attach one probe from a spec string, print its records.
//
//   libktrack_sample SPEC [COUNT [SECONDS]]
//   sudo build/user/bin/libktrack_sample 'r:rd vfs_read ret=$retval:s64' 5
//
// Stops after COUNT records (default 10) or SECONDS (default 10).  Every
// call below is libktrack's public API (user/lib/*/*.hpp); errors are
// ktrack::Error exceptions whose text says what to fix.
#include <fmt/core.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "host/kallsyms.hpp"
#include "util/error.hpp"
#include "format/event.hpp"
#include "format/format.hpp"
#include "probes/probe_client.hpp"
#include "probes/probe_spec.hpp"
#include "device/ring_reader.hpp"
#include "device/session.hpp"
#include "format/symbols.hpp"

namespace {

// A positive number from the command line, or 0 when it is not one.
unsigned long positive(const char *s) {
  char *end = nullptr;
  unsigned long v = std::strtoul(s, &end, 10);
  return (*s && *end == '\0' && s[0] != '-') ? v : 0;
}

}  // namespace

int main(int argc, char **argv) {
  unsigned long count = argc > 2 ? positive(argv[2]) : 10;
  unsigned long seconds = argc > 3 ? positive(argv[3]) : 10;
  if (argc < 2 || argc > 4 || !count || !seconds) {
    fmt::print(stderr, "usage: {} SPEC [COUNT [SECONDS]]  (e.g. 'r:rd vfs_read ret=$retval:s64' 5)\n",
               argv[0]);
    return 1;
  }
  try {
    // 1. A session of our own (an open file of /dev/ktrack): private
    //    buffers and probes, all released when the program exits.
    ktrack::Session session = ktrack::Session::open_anonymous();

    // 2. Parse the spec, resolve its symbols and fields for this kernel,
    //    compile it and attach it: 'ktrackctl probe add' in four lines.
    ktrack::CompiledProbe probe = ktrack::compile_probe_for_system(argv[1]);
    ktrack::ProbeAdded added = ktrack::ProbeClient(session.fd()).add(probe.spec, probe.blob);
    fmt::print("probe '{}' attached (id {}, {})\n", probe.spec.name, added.id,
               ktrack::mechanism_name(added.mechanism));

    // 3. Teach the decoder the probe's field names and types (the built-in
    //    record types - lost, marker, emit, ... - are already known), and
    //    give it process names and kernel symbols for printing.
    ktrack::SchemaRegistry schemas;
    ktrack::register_probe_schemas(session.fd(), schemas);
    ktrack::CommTable comms;
    comms.set_resolver(ktrack::proc_comm);
    ktrack::Decoder decoder(schemas, &comms);
    ktrack::Symbolizer symbols;
    symbols.load(ktrack::read_kallsyms());
    ktrack::FormatOptions format{&symbols};

    // 4. Map the per-CPU ring buffers, start recording, and drain them.
    ktrack::MmapReader reader(session);
    session.start();
    unsigned long printed = 0, lost = 0;
    ktrack::Event ev;  // reused: decoding does not allocate per record
    auto on_record = [&](uint32_t, std::span<const std::byte> rec) {
      std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t *>(rec.data()), rec.size());
      if (!decoder.decode(bytes, ev)) return;
      if (ev.type == KTRACK_REC_LOST) {  // the kernel dropped records here
        if (const ktrack::FieldValue *n = ev.field("count")) lost += n->u;
        return;
      }
      if (printed >= count) return;
      printed++;
      fmt::memory_buffer line;
      ktrack::format_text(ev, format, line);
      fmt::print("{}", fmt::to_string(line));
    };
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (printed < count && std::chrono::steady_clock::now() < deadline) {
      reader.wait(100);  // poll(2): wakes when records are ready
      reader.drain(on_record);
    }

    // 5. Stop: flush commits what the probe wrote last, then a final drain.
    session.flush();
    session.stop();
    reader.drain(on_record);
    fmt::print("{} records printed, {} lost\n", printed, lost);
    return 0;
  } catch (const ktrack::Error &e) {
    fmt::print(stderr, "libktrack_sample: {}\n", e.what());
    return 2;
  }
}
