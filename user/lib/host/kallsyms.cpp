#include "host/kallsyms.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "util/error.hpp"

#include "util/text.hpp"

namespace ktrack {

namespace {

std::string env_or(const char *var, const char *dflt) {
  const char *v = std::getenv(var);
  return v && *v ? v : dflt;
}

bool is_text(char type) { return type == 't' || type == 'T'; }

std::string group_kallsyms_path() { return env_or("KTRACK_GROUP_KALLSYMS", "/run/ktrack/kallsyms"); }

// The first line of a group snapshot: whose boot it describes.
std::string group_kallsyms_header() {
  std::string id = read_file("/proc/sys/kernel/random/boot_id").value_or("");
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  return fmt::format("# ktrack kallsyms boot_id={}\n", id);
}

// Root's snapshot of this boot (save_group_kallsyms()), or empty.
std::string read_group_kallsyms() {
  std::string text = read_file(group_kallsyms_path()).value_or("");
  std::string header = group_kallsyms_header();
  if (text.compare(0, header.size(), header) != 0) return {};  // none, or of an earlier boot
  // The kernel's layout, which only the group may read: what this process
  // writes from now on (trace files) is not for other users either.
  mode_t old = ::umask(0);
  ::umask(old | 027);
  return text.substr(header.size());
}

}  // namespace

void save_group_kallsyms(const std::string &device) {
  std::string text = read_kallsyms();
  if (text.empty())
    throw Error("cannot save the symbols for the ktrack group: /proc/kallsyms shows no addresses");
  struct stat dev {};
  if (::stat(device.c_str(), &dev) != 0) throw SysError("stat " + device, errno);
  std::filesystem::path path = group_kallsyms_path();
  // root's own directory (/run is root's): made 0755, never another user's
  std::string dir = path.parent_path().string();
  struct stat d {};
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) throw FileError("create " + dir, errno);
  if (::lstat(dir.c_str(), &d) != 0 || !S_ISDIR(d.st_mode) || d.st_uid != ::geteuid() || (d.st_mode & 022))
    throw Error(
        fmt::format("cannot save the symbols for the ktrack group: {} must be a directory of "
                    "this user's, writable by it alone",
                    dir));
  std::string tmp = path.string() + ".new";
  ::unlink(tmp.c_str());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) throw FileError("create " + tmp, errno);
  std::string all = group_kallsyms_header() + text;
  bool ok = ::fchown(fd, 0, dev.st_gid) == 0 && ::fchmod(fd, 0640) == 0;
  for (size_t off = 0; ok && off < all.size();) {
    ssize_t n = ::write(fd, all.data() + off, all.size() - off);
    if (n == 0) errno = EIO;
    if (n <= 0)
      ok = false;
    else
      off += static_cast<size_t>(n);
  }
  int err = errno;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    if (ok) err = errno;
    ::unlink(tmp.c_str());
    throw FileError("write " + path.string(), err);
  }
}

std::string read_kallsyms() {
  std::string text = read_file(env_or("KTRACK_KALLSYMS", "/proc/kallsyms")).value_or("");
  // kptr_restrict: every address reads as zero; such a snapshot is useless.
  bool any = false;
  for (size_t pos = 0; pos < text.size() && !any;) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    for (size_t i = pos; i < nl && text[i] != ' '; i++)
      if (text[i] != '0') {
        any = true;
        break;
      }
    pos = nl + 1;
  }
  if (!any) return read_group_kallsyms();
  // Where each module ends, to bound its last symbol (Symbolizer::load()).
  // "/proc/modules: NAME SIZE REFS DEPS STATE 0xBASE [TAINTS]"
  std::ifstream m(env_or("KTRACK_MODULES", "/proc/modules"));
  std::string line;
  while (std::getline(m, line)) {
    std::istringstream ls(line);
    std::string name, size, refs, deps, state, base;
    if (!(ls >> name >> size >> refs >> deps >> state >> base) || base.rfind("0x", 0) != 0) continue;
    text += fmt::format("# module {} {} {}\n", name, base.substr(2), size);
  }
  return text;
}

KallsymsIndex::KallsymsIndex(std::string text) : text_(std::make_unique<const std::string>(std::move(text))) {
  // "ffffffff81234560 T name\t[mod]": scanned in place (no allocation per
  // line: a kernel has 100k-200k symbols, and this runs at every start).
  std::string_view rest = *text_;
  syms_.reserve(rest.size() / 40);
  while (!rest.empty()) {
    std::string_view line = next_line(rest);
    size_t a = line.find(' ');
    if (a == std::string_view::npos || a + 3 > line.size() || line[a + 2] != ' ' || line[0] == '#') continue;
    auto addr = parse_hex(line.substr(0, a));
    if (!addr) continue;
    std::string_view name = line.substr(a + 3), mod;
    size_t e = name.find_first_of(" \t");
    if (e != std::string_view::npos) {
      size_t m = name.find_first_not_of(" \t", e);
      if (m != std::string_view::npos) mod = module_of(name.substr(m));
      name = name.substr(0, e);
    }
    if (name.empty()) continue;
    syms_.push_back({*addr, line[a + 1], name, mod});
  }
}

KallsymsIndex KallsymsIndex::system() {
  // Always the running kernel's: these addresses go into probes and the
  // object tracker ($KTRACK_KALLSYMS only replaces the snapshot that names
  // records, see read_kallsyms()).
  return KallsymsIndex(read_file("/proc/kallsyms").value_or(""));
}

const std::vector<uint32_t> &KallsymsIndex::by_name(std::string_view name) const {
  // A scan answers the first few names (one spec names one or two); the
  // index pays off for a batch.
  if (name_index_.empty() && ++scans_ <= 8) {
    scan_.clear();
    for (uint32_t i = 0; i < syms_.size(); i++)
      if (syms_[i].name == name) scan_.push_back(i);
    return scan_;
  }
  static const std::vector<uint32_t> none;
  if (name_index_.empty()) {
    name_index_.reserve(syms_.size());
    for (uint32_t i = 0; i < syms_.size(); i++) name_index_[syms_[i].name].push_back(i);
  }
  auto it = name_index_.find(name);
  return it == name_index_.end() ? none : it->second;
}

std::vector<uint64_t> KallsymsIndex::lookup(std::string_view module, std::string_view name) const {
  std::vector<uint64_t> out;
  for (uint32_t i : by_name(name))
    if (module.empty() || syms_[i].module == module) out.push_back(syms_[i].addr);
  return out;
}

const std::vector<uint64_t> *KallsymsIndex::find_text(const std::string &name,
                                                      const std::string &module) const {
  if (text_index_.empty())
    for (const auto &s : syms_)
      if (is_text(s.type) && s.addr) {
        std::string key(s.module);
        key += '\0';
        key += s.name;
        text_index_[key].push_back(s.addr);
      }
  auto it = text_index_.find(module + '\0' + name);
  return it == text_index_.end() ? nullptr : &it->second;
}

std::vector<std::string> KallsymsIndex::aliases(std::string_view name) const {
  uint64_t want = 0;
  for (uint32_t i : by_name(name))
    if (syms_[i].module.empty() && is_text(syms_[i].type)) want = syms_[i].addr;
  std::vector<std::string> out;
  if (!want) return out;
  for (const auto &s : syms_)
    if (s.module.empty() && is_text(s.type) && s.addr == want && s.name != name) out.emplace_back(s.name);
  return out;
}

}  // namespace ktrack
