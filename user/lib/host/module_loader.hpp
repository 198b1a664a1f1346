// Loading and unloading ktrack's kernel modules through libkmod, with every
// failure turned into a sentence (wrong kernel, signature enforcement,
// lockdown, permission, busy, not loaded).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ktrack {

struct ModuleStatus {
  bool loaded = false;
  std::string state;    // "live", "coming", "going"
  int refcount = 0;     // sessions and users holding it
  std::string taint;    // letters from /sys/module/NAME/taint
  std::string version;  // /sys/module/NAME/version
  std::vector<std::string> holders;
};

// Where 'name'.ko for this kernel is: $KTRACK_MODULE_DIR, then the build
// tree next to this ktrackctl (build/modules/RELEASE/...), then the
// installed module path (/lib/modules/RELEASE, via modules.dep).
std::optional<std::filesystem::path> find_module_file(const std::string &name);

// Insert 'name' with 'params' ("k=v k2=v2").  Returns false (and does
// nothing) when it is already loaded; throws Error with a sentence otherwise.
bool load_module(const std::string &name, const std::string &params);
// What to do when a module file is missing or built for another kernel:
// 'make' in a build tree, DKMS for an installed ktrackctl.
std::string module_build_hint();

// Remove 'name'.  Returns false when it was not loaded; throws Error with a
// sentence when it is busy or the caller lacks the privilege.
bool unload_module(const std::string &name);

ModuleStatus module_status(const std::string &name);

// The kernel release we run on (uname -r).
std::string running_kernel_release();

}  // namespace ktrack
