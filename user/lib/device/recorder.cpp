#include "device/recorder.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include "util/error.hpp"

namespace ktrack {

namespace {

std::string kernel_release_of(const Session &s) {
  try {
    return s.device().version().kernel_release;
  } catch (const Error &) {
    return {};
  }
}

TraceMeta meta_of(Capture &cap) {
  TraceMeta meta;
  meta.nr_cpus = cap.nr_cpus();
  meta.clock = clock_name(cap.config().clock);
  meta.kernel_release = kernel_release_of(cap.session());
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) == 0) meta.hostname = host;
  meta.session = cap.session_name();
  meta.extra["mode"] = mode_name(cap.config().mode);
  meta.extra["buf_pages"] = std::to_string(cap.config().buf_pages);
  meta.extra["ktrackctl_version"] = KTRACK_VERSION;
  return meta;
}

}  // namespace

Recorder::Recorder(Capture &cap, const std::string &path, std::string_view kallsyms, RecordCodec codec)
    : cap_(cap), writer_(path, meta_of(cap), cap.schemas(), kallsyms, codec) {}

void Recorder::finish() {
  std::string totals;
  SessionStats st = cap_.session().stats();
  for (const auto &c : st.cpus)
    totals += fmt::format("cpu{}=written:{} lost_full:{} lost_too_big:{} overwritten:{} bytes:{}\n", c.cpu,
                          c.written, c.lost_full, c.lost_too_big, c.overwritten, c.bytes);
  writer_.finish(totals);
}

}  // namespace ktrack
