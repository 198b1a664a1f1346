#include "device/user_events.hpp"

#include <cerrno>
#include <cstring>
#include <vector>

#include <uapi/ktrack.h>

#include "device/device.hpp"
#include "util/error.hpp"

namespace ktrack {

std::optional<UserEventInfo> query_user_event(const Device &dev, const std::string &name) {
  if (name.size() >= KTRACK_UEVENT_NAME_MAX) return std::nullopt;
  std::vector<char> buf(KTRACK_UEVENT_FORMAT_MAX);
  ktrack_uevent_query q{};
  q.size = sizeof(q);
  std::memcpy(q.name, name.data(), name.size());
  q.format_ptr = (uintptr_t)buf.data();
  q.format_len = (uint32_t)buf.size();
  int r = dev.ioctl_raw(KTRACK_IOC_UEVENT_QUERY, &q);
  if (r == -ENOENT || r == -ENOTTY) return std::nullopt;
  if (r < 0) throw SysError("query user event " + name, -r);
  UserEventInfo info;
  info.id = q.id;
  info.enabled = q.enabled;
  info.format.assign(buf.data(), strnlen(buf.data(), buf.size()));
  return info;
}

}  // namespace ktrack
