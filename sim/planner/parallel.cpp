#include "sim/planner/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace kvsim::planner {

void parallel_for(std::size_t n, int jobs, const std::function<void(std::size_t)>& body) {
  std::atomic<std::size_t> next{0};
  std::mutex mu;
  std::exception_ptr fatal;
  const auto worker = [&] {
    while (true) {
      const std::size_t i = next.fetch_add(1);
      if (i >= n) return;
      try {
        body(i);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(mu);
        if (!fatal) fatal = std::current_exception();
        next.store(n);
        return;
      }
    }
  };
  int threads = jobs > 0 ? jobs : static_cast<int>(std::thread::hardware_concurrency());
  threads = std::max(1, std::min<int>(threads, static_cast<int>(std::max<std::size_t>(n, 1))));
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  if (fatal) std::rethrow_exception(fatal);
}

}  // namespace kvsim::planner
