// Flags shared by trace and record (-s -p -C -c -d --buffer-pages --mode
// --clock), parsed into ktrack::CaptureOptions.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "ktrack/capture.hpp"

namespace ktrackctl {

struct CaptureFlags {
  std::string session;
  std::vector<int32_t> pids;
  std::vector<uint32_t> cpus;
  std::string comm;
  std::string duration;
  uint32_t buf_pages = 0;
  std::string mode;
  std::string clock;
};

void add_capture_flags(CLI::App *cmd, CaptureFlags &f);
// Validates and copies the flags; throws ktrack::UsageError.
void apply_capture_flags(const CaptureFlags &f, ktrack::CaptureOptions &o);

}  // namespace ktrackctl
