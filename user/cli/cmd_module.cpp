// ktrackctl load | unload | status | version: the module's life cycle.
#include <fmt/core.h>

#include "command.hpp"
#include "device/device.hpp"
#include "host/module_loader.hpp"
#include "util/error.hpp"

namespace ktrackctl {
namespace {

struct LoadOptions {
  std::vector<std::string> params;
  std::string module = "ktrack";
};

const Command load_cmd(10, [](CLI::App &app) {
  auto opts = std::make_shared<LoadOptions>();
  auto *cmd = app.add_subcommand("load", "Insert the ktrack module for the running kernel");
  cmd->add_option("--param", opts->params, "Module parameter k=v (repeatable)");
  cmd->add_option("--module", opts->module, "Module to load (default ktrack; e.g. a sample)");
  cmd->footer(
      "Looks for MODULE.ko in $KTRACK_MODULE_DIR, then (a ktrackctl built in a source tree)\n"
      "in build/modules/$(uname -r)/, then in /lib/modules (DKMS, modules_install).\n"
      "'options MODULE ...' lines of /etc/modprobe.d apply; --param values win over them.\n"
      "Examples:\n  sudo ktrackctl load\n  sudo ktrackctl load --module ktrack_test_emit");
  cmd->callback([opts] {
    std::string params;
    for (const auto &p : opts->params) {
      auto eq = p.find('=');
      if (eq == std::string::npos)
        throw ktrack::UsageError(fmt::format("--param '{}' is not of the form key=value", p));
      if (p.find('"') != std::string::npos)
        throw ktrack::UsageError(fmt::format("--param '{}': a value cannot hold '\"'", p));
      // The kernel splits parameters at spaces outside double quotes (as
      // modprobe does, a value with a space is quoted).
      std::string v = p.substr(eq + 1);
      std::string one = v.find_first_of(" \t") != std::string::npos ? p.substr(0, eq + 1) + '"' + v + '"' : p;
      params += (params.empty() ? "" : " ") + one;
    }
    if (ktrack::load_module(opts->module, params))
      fmt::print("{} loaded\n", opts->module);
    else
      fmt::print("{} is already loaded\n", opts->module);
  });
});

const Command unload_cmd(11, [](CLI::App &app) {
  auto module = std::make_shared<std::string>("ktrack");
  auto *cmd = app.add_subcommand("unload", "Remove the ktrack module");
  cmd->add_option("--module", *module, "Module to remove (default ktrack)");
  cmd->footer("Fails with the reason when sessions still hold it.\nExample:\n  sudo ktrackctl unload");
  cmd->callback([module] {
    if (ktrack::unload_module(*module))
      fmt::print("{} unloaded\n", *module);
    else
      fmt::print("{} is not loaded\n", *module);
  });
});

const Command status_cmd(12, [](CLI::App &app) {
  auto *cmd = app.add_subcommand("status", "Say whether ktrack is loaded, and its users");
  cmd->footer("Example:\n  ktrackctl status");
  cmd->callback([] {
    ktrack::ModuleStatus st = ktrack::module_status("ktrack");
    if (!st.loaded) {
      fmt::print("ktrack: not loaded (kernel {})\n", ktrack::running_kernel_release());
      auto file = ktrack::find_module_file("ktrack");
      fmt::print("module file: {}\n", file ? file->string() : "none found; " + ktrack::module_build_hint());
      return;
    }
    fmt::print("ktrack: loaded, state {}, version {}, {} user{}, taint '{}'\n", st.state, st.version,
               st.refcount, st.refcount == 1 ? "" : "s", st.taint);
  });
});

const Command version_cmd(13, [](CLI::App &app) {
  auto *cmd =
      app.add_subcommand("version", "Print ktrackctl's and the loaded module's versions and features");
  cmd->footer("Example:\n  ktrackctl version");
  cmd->callback([] {
    fmt::print("ktrackctl {} (ABI {})\n", KTRACK_VERSION, KTRACK_ABI_VERSION);
    ktrack::Device dev;
    ktrack::VersionInfo v = dev.version();
    fmt::print("module    {} (ABI {}) on kernel {}\n", v.module_version, v.abi_version, v.kernel_release);
    fmt::print("features  {}\n", ktrack::feature_names(v.features));
    if (v.abi_version != KTRACK_ABI_VERSION)
      throw ktrack::Error(
          fmt::format("the module speaks ABI {} but ktrackctl speaks {}: rebuild both from the same tree",
                      v.abi_version, KTRACK_ABI_VERSION));
    // Same ABI, other release: it works, but one of the two is stale (an
    // upgraded package whose old module is still loaded, say).
    if (v.module_version != KTRACK_VERSION)
      fmt::print(stderr,
                 "ktrackctl: note: the loaded ktrack.ko is version {} and ktrackctl {}: reload the module "
                 "('sudo ktrackctl unload && sudo ktrackctl load'), or install the same version of "
                 "ktrack-dkms and ktrackctl\n",
                 v.module_version, KTRACK_VERSION);
  });
});

}  // namespace
}  // namespace ktrackctl
