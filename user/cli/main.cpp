// ktrackctl: load the ktrack modules, configure sessions, record, decode
// and report.  Subcommands live in cmd_*.cpp.
#include <fmt/core.h>

#include <algorithm>
#include <string_view>

#include "command.hpp"
#include "host/command.hpp"
#include "util/error.hpp"

int main(int argc, char **argv) {
  CLI::App app{"ktrackctl: kernel tracing with ktrack (/dev/ktrack)", "ktrackctl"};
  app.require_subcommand(1);
  app.set_version_flag("-V,--version,--ctl-version", std::string("ktrackctl ") + KTRACK_VERSION);
  app.footer(
      "Exit status: 0 ok, 1 usage error, 2 runtime error; record/trace -- COMMAND: the command's\n"
      "(127: not found, 126: not executable).\n"
      "Run 'ktrackctl SUBCOMMAND --help' for the options and examples of each subcommand.\n");

  auto &registry = ktrackctl::command_registry();
  std::stable_sort(registry.begin(), registry.end(),
                   [](const auto &a, const auto &b) { return a.first < b.first; });
  for (auto &entry : registry) entry.second(app);

  // trace/record -- COMMAND [ARGS]: the command is not ktrackctl's to parse.
  int nargs = argc;
  if (argc > 2 && (std::string_view(argv[1]) == "record" || std::string_view(argv[1]) == "trace" ||
                   std::string_view(argv[1]) == "profile" || std::string_view(argv[1]) == "stacktrace" ||
                   std::string_view(argv[1]) == "latency")) {
    for (int i = 2; i < argc; i++) {
      if (std::string_view(argv[i]) != "--") continue;
      nargs = i;
      for (int j = i + 1; j < argc; j++) ktrackctl::trailing_command().push_back(argv[j]);
      if (ktrackctl::trailing_command().empty()) {
        fmt::print(stderr, "ktrackctl: '--' must be followed by a command to run\n");
        return ktrackctl::kExitUsage;
      }
      break;
    }
  }
  try {
    app.parse(nargs, argv);
  } catch (const CLI::ParseError &e) {
    int rc = app.exit(e);
    return rc == 0 ? ktrackctl::kExitOk : ktrackctl::kExitUsage;
  } catch (const ktrack::CommandError &e) {
    fmt::print(stderr, "ktrackctl: {}\n", e.what());
    return e.status();
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
  return ktrackctl::exit_status().value_or(ktrackctl::kExitOk);
}
