#include "analysis/view_source.hpp"

#include <fmt/format.h>

#include "host/kallsyms.hpp"
#include "util/duration.hpp"
#include "util/error.hpp"

namespace ktrack::analysis {

ViewSource::ViewSource(ViewSourceOptions o) {
  bool live = !o.session.empty() || !o.probes.empty();
  if (live && !o.file.empty())
    throw UsageError("give either FILE or a live source (-s NAME / --probe SPEC), not both");
  if (!live && o.file.empty())
    throw UsageError("give a recorded FILE, or -s NAME / --probe SPEC for a live session");
  if (!live) {
    file_ = std::make_unique<FileSource>(o.file);
    names_ = &file_->names();
    if (!o.duration.empty()) {
      uint64_t ns = parse_duration_ns(o.duration, "-d/--duration");
      if (!o.filter.until.empty())
        throw UsageError("-d/--duration and --until both bound the end: use one of them");
      o.filter.until = fmt::format("{}ns", ns);
    }
  } else {
    CaptureOptions co;
    co.session = o.session;
    co.specs = o.probes;
    if (!o.duration.empty()) co.duration = parse_duration(o.duration);
    // Symbols before the probes: reading kallsyms makes thousands of read()
    // calls, which a probe on vfs_read would count as idle hits.
    symbols_.load(read_kallsyms());
    capture_ = std::make_unique<Capture>(co);
    live_names_ = std::make_unique<EventNames>(capture_->schemas(), &symbols_, &capture_->comms());
    names_ = live_names_.get();
    decoder_ = std::make_unique<Decoder>(capture_->schemas(), &capture_->comms());
  }
  filter_ = Filter(o.filter, *names_);
}

ViewSource::~ViewSource() = default;

void ViewSource::stop() { StopSignals::flag() = true; }

void ViewSource::run_live(const std::function<void(const Sample &)> &fn, const std::function<void()> &tick) {
  StopSignals signals;
  RecordRef ref(*decoder_);
  Sample s;
  capture_->start();
  if (on_start) on_start(*capture_);
  capture_->run(
      [&](std::span<const uint8_t> rec) {
        if (!check_record(rec)) return;
        symbols_.ingest(rec);  // a module came or went: names the records after it
        ref.reset(rec);
        sample_from_ref(ref, &capture_->comms(), s, &symbols_);
        if (live_names_) live_names_->note_user_ip(s);
        if (filter_.matches(s)) fn(s);
      },
      StopSignals::flag(),
      [&](const CaptureStatus &) {
        if (tick) tick();
      });
}

}  // namespace ktrack::analysis
