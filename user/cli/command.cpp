#include "command.hpp"

namespace ktrackctl {

std::vector<std::pair<int, std::function<void(CLI::App &)>>> &command_registry() {
  static std::vector<std::pair<int, std::function<void(CLI::App &)>>> registry;
  return registry;
}

std::vector<std::string> &trailing_command() {
  static std::vector<std::string> argv;
  return argv;
}

std::optional<int> &exit_status() {
  static std::optional<int> status;
  return status;
}

Command::Command(int order, std::function<void(CLI::App &app)> setup) {
  command_registry().emplace_back(order, std::move(setup));
}

}  // namespace ktrackctl
