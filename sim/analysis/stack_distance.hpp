#pragma once
// LRU stack distances of a stream of block ids (Mattson, Gecsei, Slutz and Traiger, IBM Systems
// Journal 9(2), 1970): the distance of an access is the number of distinct ids used since the
// id's previous use (0 = it was the last one used); a first use has no distance. An LRU cache
// of C blocks holds exactly the ids whose distance is below C. A Fenwick tree over access times
// with one mark at each id's latest access counts the distinct ids in O(log N).
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

namespace kvsim::analysis {

class StackDistances {
 public:
  static constexpr std::int64_t kFirstUse = std::numeric_limits<std::int64_t>::max();

  // `accesses`: an upper bound on the number of use() calls.
  explicit StackDistances(std::size_t accesses) : tree_(accesses + 1, 0) { last_.reserve(accesses); }

  // The distance `id` has now (kFirstUse when never used), without using it.
  std::int64_t distance(std::int64_t id) const {
    auto it = last_.find(id);
    return it == last_.end() ? kFirstUse : prefix(now_) - prefix(it->second + 1);
  }
  // The access time of the id's latest use, or -1.
  std::int64_t last_use(std::int64_t id) const {
    auto it = last_.find(id);
    return it == last_.end() ? -1 : static_cast<std::int64_t>(it->second);
  }
  // Makes `id` the most recently used.
  void use(std::int64_t id) {
    auto [it, fresh] = last_.try_emplace(id, now_);
    if (!fresh) {
      add(it->second, -1);
      it->second = now_;
    }
    add(now_, 1);
    ++now_;
  }
  std::size_t distinct() const { return last_.size(); }
  std::size_t accesses() const { return now_; }

 private:
  void add(std::size_t i, int v) {
    for (++i; i < tree_.size(); i += i & (~i + 1)) tree_[i] += v;
  }
  // Marks at positions [0, i).
  std::int64_t prefix(std::size_t i) const {
    std::int64_t s = 0;
    for (; i > 0; i -= i & (~i + 1)) s += tree_[i];
    return s;
  }

  std::vector<std::int64_t> tree_;
  std::unordered_map<std::int64_t, std::size_t> last_;  // id -> time of its latest use
  std::size_t now_ = 0;
};

}  // namespace kvsim::analysis
