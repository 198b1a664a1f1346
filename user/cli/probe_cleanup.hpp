// The probes 'trace'/'record' SPEC... attach are theirs: on an anonymous
// session they go with its fd, on a named session (-s NAME) the command
// deletes them when it ends, and leaves the probes it found there alone.
#pragma once

#include "device/session.hpp"

namespace ktrackctl {

// Deletes the probes the spec hook added to 'session' (no-op for an
// anonymous session, or when none were added).  Never throws.
void remove_spec_probes(ktrack::Session &session) noexcept;

// Calls remove_spec_probes() when the command's scope ends, however it ends.
class SpecProbesGuard {
 public:
  explicit SpecProbesGuard(ktrack::Session &s) : s_(s) {}
  ~SpecProbesGuard() { remove_spec_probes(s_); }
  SpecProbesGuard(const SpecProbesGuard &) = delete;
  SpecProbesGuard &operator=(const SpecProbesGuard &) = delete;

 private:
  ktrack::Session &s_;
};

}  // namespace ktrackctl
