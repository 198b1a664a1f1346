// Probes as part of a capture: the probe specs among the positional
// arguments of trace/record (and --probe of the live views) are compiled and
// attached to the capture's session before it starts, their schemas are
// registered so records decode with field names, and at the stop they are
// detached (a named session keeps only the probes it had before) with a
// summary line per probe.  Capture uses this; see device/capture.hpp.
#pragma once

#include <string>

#include "device/capture.hpp"
#include "probes/probe_client.hpp"

namespace ktrack {

// True when 's' starts like a probe spec: "p ", "r2:", "f:x ", "t ".
bool looks_like_probe_spec(const std::string &s);

// "probe x: 100 hits, 3 while not recording, ...": what a probe saw.
std::string probe_summary(const ProbeInfo &p);

// The SessionSetup that attaches probe specs; each call has its own record
// of the probes it attached.  With 'graph_root' (--graph FUNC --depth N):
// first a root probe on it, and every f spec scoped under it
// (probes/graph_scope.hpp).
SessionSetup probe_session_setup(const std::string &graph_root = {}, uint32_t graph_depth = 0);

}  // namespace ktrack
