// Where an analysis view's records come from: a recorded file, or a live
// capture (a running named session, or probe specs on a new session) until
// Ctrl-C or a duration.  Every view (report, hist, profile, graph, stack,
// top, export) reads through this one source, so they share the filters
// (-p -C -c -e --since --until --where -d) and the live/file rules.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "analysis/analysis_source.hpp"
#include "analysis/filter.hpp"
#include "device/capture.hpp"
#include "format/symbols.hpp"

namespace ktrack::analysis {

struct ViewSourceOptions {
  std::string file;                 // a recorded file (or raw stream); "-" = stdin
  std::string session;              // live: a running named session
  std::vector<std::string> probes;  // live: probe specs attached to a new session
  std::string duration;             // live: stop after it; file: only its first DURATION
  FilterSpec filter;
};

class ViewSource {
 public:
  // Throws UsageError when the options name no source, or both kinds.
  explicit ViewSource(ViewSourceOptions o);
  ~ViewSource();

  bool live() const { return capture_ != nullptr; }
  Names &names() { return *names_; }
  FileSource *file() { return file_.get(); }
  Capture *capture() { return capture_.get(); }
  // Addresses to names: the file's kallsyms snapshot, or this machine's.
  const Symbolizer &symbols() { return file_ ? file_->reader().symbols() : symbols_; }
  // Live only: called once recording has begun (the command shows the
  // capture's notes, "probe x (id 1): kprobe, armed").
  std::function<void(Capture &)> on_start;

  // Delivers every selected record; 'tick' (live only) about once a second.
  template <typename Fn>
  void run(Fn &&fn, const std::function<void()> &tick = {}) {
    if (file_)
      file_->run(filter_, fn);
    else
      run_live(fn, tick);
  }
  // Stops a live run (from a record or tick callback).
  static void stop();

 private:
  void run_live(const std::function<void(const Sample &)> &fn, const std::function<void()> &tick);

  std::unique_ptr<FileSource> file_;
  std::unique_ptr<Capture> capture_;
  Symbolizer symbols_;
  std::unique_ptr<EventNames> live_names_;
  std::unique_ptr<Decoder> decoder_;
  Names *names_ = nullptr;
  Filter filter_;
};

}  // namespace ktrack::analysis
