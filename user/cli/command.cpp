#include "command.hpp"

namespace ktrackctl {

std::vector<std::pair<int, std::function<void(CLI::App &)>>> &command_registry() {
  static std::vector<std::pair<int, std::function<void(CLI::App &)>>> registry;
  return registry;
}

Command::Command(int order, std::function<void(CLI::App &app)> setup) {
  command_registry().emplace_back(order, std::move(setup));
}

}  // namespace ktrackctl
