// Typed user events as the kernel holds them (KTRACK_IOC_UEVENT_QUERY).
#pragma once

#include <optional>
#include <string>

namespace ktrack {

class Device;

struct UserEventInfo {
  uint32_t id = 0;
  std::string format;    // canonical: "mylib/req u32 id; char[] path"
  uint32_t enabled = 0;  // probes armed on it
};

// The registered event NAME, or nullopt when no program has registered it
// (or the loaded ktrack has no user events).  Throws SysError otherwise.
std::optional<UserEventInfo> query_user_event(const Device &dev, const std::string &name);

}  // namespace ktrack
