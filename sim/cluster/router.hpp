#pragma once
// Routing: which engine replica serves a request (the scenario's `routing:` section), as the
// serving front end in front of several vLLM instances would.
//
// A policy picks a unit: one engine, or with data_parallel_size d > 1 one deployment of d
// engines whose API server then picks the rank as vLLM's data-parallel load balancer does
// (vllm/v1/engine/core_client.py DPLBAsyncMPClient.get_core_engine_for_request: the rank with the
// lowest waiting x 4 + running, the first scanned on ties).
//   session_affinity  a conversation stays on the unit of its first turn (its KV is there); new
//                     conversations and requests without one go round robin
//   round_robin       every request to the next unit
//   least_loaded      the unit with the fewest running and waiting requests (first on ties)
//   prefix_aware      the unit whose GPU prefix caches hold the longest prefix of the request,
//                     the least loaded among equals
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "sim/engine/engine.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/workload/driver.hpp"

namespace kvsim::cluster {

class Router {
 public:
  // `engines` in the order of the scenario's servers, d consecutive engines per unit.
  Router(const scenario::RouterSpec& spec, int data_parallel_size,
         const std::vector<std::unique_ptr<engine::Engine>>& engines);

  // The engine that serves the request (its hashes are in r.block_hashes).
  int route(const workload::RequestSpec& spec, const engine::Request& r);

 private:
  int load(int u) const;  // requests running and waiting on unit u
  int least_loaded(const std::vector<int>& candidates) const;
  int rank_in_group(int u) const;
  int rank(int u) const { return dp_ == 1 ? u : rank_in_group(u); }
  int round_robin();

  scenario::RoutingPolicy policy_;
  int dp_;
  const std::vector<std::unique_ptr<engine::Engine>>& engines_;
  int next_unit_ = 0;
  std::unordered_map<std::int64_t, int> conversation_unit_;
  std::vector<int> scratch_;  // the units route() chooses among (no allocation per request)
};

}  // namespace kvsim::cluster
