// Small containers for hot aggregation paths: an open-addressing hash map
// keyed by uint64, and a string interner (task names to small integers).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ktrack::analysis {

// Open-addressing hash map from uint64 keys, linear probing, power-of-two
// capacity.  Values stay in one vector so iteration is cache friendly.
// Pointers returned by find_or_insert are stable only until the next insert.
template <typename V>
class FlatMap {
 public:
  explicit FlatMap(size_t capacity = 64) { rehash(capacity); }

  V &operator[](uint64_t key) { return find_or_insert(key); }

  V &find_or_insert(uint64_t key) {
    size_t i = slot(key);
    while (true) {
      int32_t idx = index_[i];
      if (idx < 0) break;
      if (entries_[idx].first == key) return entries_[idx].second;
      i = (i + 1) & mask_;
    }
    if ((entries_.size() + 1) * 2 > index_.size()) {
      rehash(index_.size() * 2);
      i = slot(key);
      while (index_[i] >= 0) i = (i + 1) & mask_;
    }
    index_[i] = static_cast<int32_t>(entries_.size());
    entries_.emplace_back(key, V{});
    return entries_.back().second;
  }

  V *find(uint64_t key) {
    size_t i = slot(key);
    while (true) {
      int32_t idx = index_[i];
      if (idx < 0) return nullptr;
      if (entries_[idx].first == key) return &entries_[idx].second;
      i = (i + 1) & mask_;
    }
  }
  const V *find(uint64_t key) const { return const_cast<FlatMap *>(this)->find(key); }

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  auto begin() { return entries_.begin(); }
  auto end() { return entries_.end(); }
  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }
  std::vector<std::pair<uint64_t, V>> &entries() { return entries_; }
  const std::vector<std::pair<uint64_t, V>> &entries() const { return entries_; }
  void clear() {
    entries_.clear();
    std::fill(index_.begin(), index_.end(), -1);
  }

 private:
  size_t slot(uint64_t key) const {
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return static_cast<size_t>(key) & mask_;
  }
  void rehash(size_t cap) {
    size_t n = 16;
    while (n < cap) n <<= 1;
    index_.assign(n, -1);
    mask_ = n - 1;
    for (size_t e = 0; e < entries_.size(); ++e) {
      size_t i = slot(entries_[e].first);
      while (index_[i] >= 0) i = (i + 1) & mask_;
      index_[i] = static_cast<int32_t>(e);
    }
  }

  std::vector<int32_t> index_;
  std::vector<std::pair<uint64_t, V>> entries_;
  size_t mask_ = 0;
};

// Interns short strings (task names) to small integers, so views can key
// on them without storing a string per record.
class StringInterner {
 public:
  uint32_t intern(std::string_view s);
  const std::string &str(uint32_t id) const { return strings_[id]; }
  size_t size() const { return strings_.size(); }

 private:
  // The ids recently returned, by where the caller's text lives: a view
  // keys every record on a task name that the comm table hands out from
  // the same few buffers, so most lookups end at one compare here, with no
  // hash of the text.  Exact: the text is compared with the interned one
  // (a buffer may hold another name since).
  struct Recent {
    const char *data = nullptr;
    uint32_t id = 0;
  };
  static constexpr unsigned kRecentBits = 4;
  static constexpr size_t kRecent = size_t{1} << kRecentBits;
  Recent recent_[kRecent];
  FlatMap<std::vector<uint32_t>> by_hash_;
  std::vector<std::string> strings_;
};

}  // namespace ktrack::analysis
