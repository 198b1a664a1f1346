#include "host/module_loader.hpp"

#include <fmt/core.h>
#include <fmt/format.h>
#include <libkmod.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>

#include "host/sysfs.hpp"
#include "util/error.hpp"

namespace fs = std::filesystem;

namespace ktrack {

namespace {

struct KmodCtxDeleter {
  void operator()(kmod_ctx *c) const { kmod_unref(c); }
};
struct KmodModDeleter {
  void operator()(kmod_module *m) const { kmod_module_unref(m); }
};
using KmodCtx = std::unique_ptr<kmod_ctx, KmodCtxDeleter>;
using KmodMod = std::unique_ptr<kmod_module, KmodModDeleter>;

KmodCtx new_ctx() {
  KmodCtx ctx(kmod_new(nullptr, nullptr));
  if (!ctx) throw Error("cannot initialise libkmod (out of memory?)");
  return ctx;
}

fs::path self_exe_dir() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : p.parent_path();
}

// The vermagic string's first word is the kernel release it was built for.
std::string module_built_for(kmod_ctx *ctx, const fs::path &file) {
  kmod_module *raw = nullptr;
  if (kmod_module_new_from_path(ctx, file.c_str(), &raw) < 0) return {};
  KmodMod mod(raw);
  kmod_list *info = nullptr;
  std::string release;
  if (kmod_module_get_info(mod.get(), &info) < 0) return {};
  kmod_list *l;
  kmod_list_foreach(l, info) {
    if (std::strcmp(kmod_module_info_get_key(l), "vermagic") == 0) {
      std::string v = kmod_module_info_get_value(l);
      release = v.substr(0, v.find(' '));
    }
  }
  kmod_module_info_free_list(info);
  return release;
}

std::string explain_insert_error(const std::string &name, const fs::path &file, int err) {
  const std::string lockdown = read_lockdown_mode();
  switch (err) {
    case EEXIST:
      return fmt::format("{} is already loaded", name);
    case EKEYREJECTED:
    case ENOKEY:
      return fmt::format(
          "the kernel refuses {}: module signature enforcement is on and the module is not signed "
          "with a trusted key (sign it with your MOK key, or boot with module.sig_enforce=0 where "
          "Secure Boot allows)",
          file.string());
    case EPERM:
      if (geteuid() != 0) return fmt::format("loading {} needs root: run it with sudo", name);
      if (lockdown == "integrity" || lockdown == "confidentiality")
        return fmt::format(
            "the kernel is in lockdown ({}) and refuses unsigned modules: sign {} or disable "
            "Secure Boot lockdown",
            lockdown, file.string());
      if (read_sysfs_flag("module/module/parameters/sig_enforce"))
        return fmt::format(
            "module signature enforcement refuses the unsigned {} (sign it, or boot with "
            "module.sig_enforce=0)",
            file.string());
      return fmt::format(
          "the kernel refused to load {} (EPERM); is module loading disabled "
          "(/proc/sys/kernel/modules_disabled)?",
          file.string());
    case ENOEXEC:
      return fmt::format(
          "{} is not a module for this kernel ({}): rebuild it with 'make' against the running "
          "kernel's headers",
          file.string(), running_kernel_release());
    case EINVAL:
      return fmt::format("the kernel rejected {} or its parameters: check 'dmesg | tail'", file.string());
    default:
      return fmt::format("cannot load {}: {}", file.string(), std::strerror(err));
  }
}

}  // namespace

std::string running_kernel_release() {
  utsname u{};
  uname(&u);
  return u.release;
}

std::optional<fs::path> find_module_file(const std::string &name) {
  const std::string rel = running_kernel_release();
  std::vector<fs::path> candidates;
  if (const char *dir = std::getenv("KTRACK_MODULE_DIR"))
    candidates.push_back(fs::path(dir) / (name + ".ko"));
  // Build tree: BUILD/user/bin/ktrackctl -> BUILD/modules/REL/{kmod,tests/kmod/*,samples/*}/NAME.ko
  // An installed ktrackctl (built with an empty KTRACK_SOURCE_DIR) looks in
  // no build tree: only $KTRACK_MODULE_DIR and /lib/modules.
  std::vector<fs::path> trees;
  if (*KTRACK_SOURCE_DIR)
    trees = {self_exe_dir().parent_path().parent_path(), fs::path(KTRACK_SOURCE_DIR) / "build"};
  for (const fs::path &build : trees) {
    fs::path mods = build / "modules" / rel;
    candidates.push_back(mods / "kmod" / (name + ".ko"));
    std::error_code ec;
    for (const char *sub : {"tests/kmod", "samples"}) {
      for (auto it = fs::directory_iterator(mods / sub, ec); !ec && it != fs::directory_iterator();
           it.increment(ec))
        candidates.push_back(it->path() / (name + ".ko"));
    }
  }
  for (const auto &c : candidates) {
    std::error_code ec;
    if (fs::is_regular_file(c, ec)) return c;
  }
  // Installed (make modules_install / DKMS): libkmod's lookup by name.
  KmodCtx ctx = new_ctx();
  kmod_list *list = nullptr;
  if (kmod_module_new_from_lookup(ctx.get(), name.c_str(), &list) == 0 && list) {
    kmod_module *m = kmod_module_get_module(list);
    const char *path = m ? kmod_module_get_path(m) : nullptr;
    std::optional<fs::path> found;
    if (path) found = fs::path(path);
    if (m) kmod_module_unref(m);
    kmod_module_unref_list(list);
    if (found) return found;
  }
  return std::nullopt;
}

std::string module_build_hint() {
  // An installed ktrackctl (empty KTRACK_SOURCE_DIR) has no tree to 'make' in.
  if (!*KTRACK_SOURCE_DIR)
    return fmt::format(
        "install ktrack-dkms and linux-headers-{} and let DKMS build it (see 'dkms status ktrack'; "
        "'sudo dkms autoinstall' retries)",
        running_kernel_release());
  return "build it with 'make'";
}

bool load_module(const std::string &name, const std::string &params) {
  if (module_status(name).loaded) return false;
  auto file = find_module_file(name);
  if (!file)
    throw Error(
        fmt::format("no {}.ko for kernel {}: {} (or set KTRACK_MODULE_DIR to the folder that holds it)", name,
                    running_kernel_release(), module_build_hint()));
  KmodCtx ctx = new_ctx();
  const std::string built_for = module_built_for(ctx.get(), *file);
  if (!built_for.empty() && built_for != running_kernel_release())
    throw Error(fmt::format("{} was built for kernel {} but this is {}: {}", file->string(), built_for,
                            running_kernel_release(), module_build_hint()));
  kmod_module *raw = nullptr;
  int rc = kmod_module_new_from_path(ctx.get(), file->c_str(), &raw);
  if (rc < 0) throw Error(fmt::format("cannot open {}: {}", file->string(), std::strerror(-rc)));
  KmodMod mod(raw);
  // The options of /etc/modprobe.d ('options ktrack ...') first, as modprobe
  // would pass them; --param values after them win (the kernel keeps the
  // last value of a parameter).
  std::string all_params;
  if (const char *conf = kmod_module_get_options(mod.get())) all_params = conf;
  if (!params.empty()) all_params += (all_params.empty() ? "" : " ") + params;
  rc = kmod_module_insert_module(mod.get(), 0, all_params.empty() ? nullptr : all_params.c_str());
  if (rc == -EEXIST) return false;
  if (rc < 0) throw Error(explain_insert_error(name, *file, -rc));
  return true;
}

bool unload_module(const std::string &name) {
  ModuleStatus st = module_status(name);
  if (!st.loaded) return false;
  KmodCtx ctx = new_ctx();
  kmod_module *raw = nullptr;
  if (kmod_module_new_from_name(ctx.get(), name.c_str(), &raw) < 0)
    throw Error(fmt::format("cannot look up module {}", name));
  KmodMod mod(raw);
  int rc = kmod_module_remove_module(mod.get(), KMOD_REMOVE_NOWAIT);
  if (rc == 0) return true;
  int err = -rc;
  if (err == ENOENT) return false;
  if (err == EPERM || err == EACCES)
    throw Error(fmt::format("unloading {} needs root: run it with sudo", name));
  if (err == EBUSY || err == EAGAIN) {
    std::string who = st.holders.empty() ? "" : fmt::format(", used by {}", fmt::join(st.holders, ", "));
    throw Error(
        fmt::format("{} is busy ({} user{}{}): close the programs that hold /dev/ktrack open and destroy "
                    "named sessions ('ktrackctl session destroy --all'), then unload again",
                    name, st.refcount, st.refcount == 1 ? "" : "s", who));
  }
  throw Error(fmt::format("cannot unload {}: {}", name, std::strerror(err)));
}

ModuleStatus module_status(const std::string &name) {
  ModuleStatus st;
  const std::string base = "module/" + name;
  auto state = read_sysfs_string(base + "/initstate");
  if (!state) return st;
  st.loaded = true;
  st.state = *state;
  st.refcount = std::atoi(read_sysfs_string(base + "/refcnt").value_or("0").c_str());
  st.taint = read_sysfs_string(base + "/taint").value_or("");
  st.version = read_sysfs_string(base + "/version").value_or("");
  std::error_code ec;
  for (auto it = fs::directory_iterator(sysfs_root() / base / "holders", ec);
       !ec && it != fs::directory_iterator(); it.increment(ec))
    st.holders.push_back(it->path().filename().string());
  return st;
}

}  // namespace ktrack
