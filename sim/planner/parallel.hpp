#pragma once
// The worker pool of sweeps and maps: independent items (simulations sharing nothing) handed out
// one at a time to a fixed number of threads.
#include <cstddef>
#include <functional>

namespace kvsim::planner {

// Calls body(i) for every i in [0, n) on min(jobs, n) threads (jobs 0: the machine's cores), each
// thread taking the next index when it is free. The first exception a call throws stops handing
// out indices; the calls in flight finish, then it is rethrown here.
void parallel_for(std::size_t n, int jobs, const std::function<void(std::size_t)>& body);

}  // namespace kvsim::planner
