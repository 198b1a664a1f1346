// libktrack_sample - ktrack embedded in a program of your own: a capture
// with one probe from a spec string, its records printed as they come.
//
//   libktrack_sample SPEC [COUNT [SECONDS]]
//   sudo build/user/bin/libktrack_sample 'r:rd vfs_read ret=$retval:s64' 5
//
// Stops after COUNT records (default 10) or SECONDS (default 10).  Every
// call below is libktrack's public API (user/lib/*/*.hpp); errors are
// ktrack::Error exceptions whose text says what to fix.
#include <fmt/core.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>

#include "device/capture.hpp"
#include "format/event.hpp"
#include "format/format.hpp"
#include "format/symbols.hpp"
#include "host/kallsyms.hpp"
#include "util/error.hpp"

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
    // 1. Kernel symbols for printing addresses, read before the probe is
    //    armed (the read itself calls vfs_read thousands of times).
    ktrack::Symbolizer symbols;
    symbols.load(ktrack::read_kallsyms());

    // 2. A capture: a session of our own (an open file of /dev/ktrack,
    //    private buffers, released when the program exits) with the probe
    //    compiled from the spec and attached, exactly as 'ktrackctl trace
    //    SPEC' does it.  It stops after COUNT records or SECONDS.
    ktrack::CaptureOptions options;
    options.specs = {argv[1]};
    options.count = count;
    options.duration = std::chrono::seconds(seconds);
    ktrack::Capture capture(options);

    // 3. The decoder knows the probe's field names and types from the
    //    capture's schemas, and process names from its comm table.
    ktrack::Decoder decoder(capture.schemas(), &capture.comms());
    ktrack::FormatOptions format{&symbols};

    // 4. Start recording: from here on every hit is delivered or counted
    //    lost.  The notes say what was attached.
    capture.start();
    for (const std::string &note : capture.notes()) fmt::print("{}\n", note);

    // 5. Records arrive merged by time across CPUs until the count, the
    //    time limit or 'stop'; then the probe is detached and every record
    //    made before is delivered.
    std::atomic<bool> stop{false};
    unsigned long printed = 0;
    ktrack::Event ev;  // reused: decoding does not allocate per record
    capture.run(
        [&](std::span<const uint8_t> rec) {
          symbols.ingest(rec);  // a module came or went: later names follow it
          if (!decoder.decode(rec, ev) || ev.type != KTRACK_REC_PROBE) return;
          printed++;
          fmt::memory_buffer line;
          ktrack::format_text(ev, format, line);
          fmt::print("{}", fmt::to_string(line));
        },
        stop);
    fmt::print("{} records printed, {} lost\n", printed, capture.status().lost);
    return 0;
  } catch (const ktrack::Error &e) {
    fmt::print(stderr, "libktrack_sample: {}\n", e.what());
    return 2;
  }
}
