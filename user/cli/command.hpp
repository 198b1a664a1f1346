// Subcommand registry: each cmd_*.cpp defines its subcommand and registers
// it with a static Command object, so adding one touches no other file.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ktrackctl {

// Exit codes that mean something (documented in --help).
enum ExitCode : int { kExitOk = 0, kExitUsage = 1, kExitRuntime = 2 };

struct Command {
  // 'order' sorts subcommands in --help (lower first); 'setup' adds the
  // subcommand to 'app' and installs its callback.  The callback reports
  // failures by throwing ktrack::Error (runtime) or CLI::ValidationError (usage).
  Command(int order, std::function<void(CLI::App &app)> setup);
};

// `trace`/`record ... -- COMMAND [ARGS]`: main.cpp puts what follows the
// first "--" here (empty: none) and the command's status in exit_status().
std::vector<std::string> &trailing_command();
// Set by a command that exits with another status than 0 on success.
std::optional<int> &exit_status();

// All registered commands, in order (used by main.cpp).
std::vector<std::pair<int, std::function<void(CLI::App &)>>> &command_registry();

}  // namespace ktrackctl
