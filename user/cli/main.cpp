// ktrackctl: load the ktrack modules, configure sessions, record, decode
// and report.  Subcommands live in cmd_*.cpp.
#include <fmt/core.h>

#include <algorithm>

#include "command.hpp"
#include "util/error.hpp"

int main(int argc, char **argv) {
  CLI::App app{"ktrackctl: kernel tracing with ktrack (/dev/ktrack)", "ktrackctl"};
  app.require_subcommand(1);
  app.set_version_flag("-V,--ctl-version", std::string("ktrackctl ") + KTRACK_VERSION);
  app.footer(
      "Exit status: 0 ok, 1 usage error, 2 runtime error.\n"
      "Run 'ktrackctl SUBCOMMAND --help' for the options and examples of each subcommand.");

  auto &registry = ktrackctl::command_registry();
  std::stable_sort(registry.begin(), registry.end(),
                   [](const auto &a, const auto &b) { return a.first < b.first; });
  for (auto &entry : registry) entry.second(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    int rc = app.exit(e);
    return rc == 0 ? ktrackctl::kExitOk : ktrackctl::kExitUsage;
  } catch (const ktrack::UsageError &e) {
    fmt::print(stderr, "ktrackctl: {}\n", e.what());
    return ktrackctl::kExitUsage;
  } catch (const ktrack::Error &e) {
    fmt::print(stderr, "ktrackctl: {}\n", e.what());
    return ktrackctl::kExitRuntime;
  } catch (const std::exception &e) {
    fmt::print(stderr, "ktrackctl: {}\n", e.what());
    return ktrackctl::kExitRuntime;
  }
  return ktrackctl::kExitOk;
}
