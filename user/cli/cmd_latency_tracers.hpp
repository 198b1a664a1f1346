// ktrackctl latency timer / latency noise: the subcommands of 'latency'
// (cmd_latency.cpp) over ktrack.ko's latency tracers.
#pragma once

#include <CLI/CLI.hpp>

namespace ktrackctl {

void add_latency_timer(CLI::App *latency);
void add_latency_noise(CLI::App *latency);

}  // namespace ktrackctl
