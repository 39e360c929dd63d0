#pragma once
// What the engine asks of a KV connector: the scheduler side of vLLM's KVConnectorBase_V1
// (vllm/distributed/kv_transfer/kv_connector/v1/base.py) as the native OffloadingConnector uses
// it. Token counts are integers; times SimTime nanoseconds.
// Contract:
//  - match() is called for a waiting request with no computed tokens, after the GPU prefix-cache
//    lookup: it returns how many more tokens, block-aligned and starting at `local_hit_tokens`,
//    the connector can load (get_num_new_matched_tokens), or nullopt to be asked again in a
//    later step (its blocks are being loaded for another request).
//  - start_load() follows a successful allocation: the connector loads the tokens asynchronously
//    and calls Engine::load_finished(id) when they are in the request's GPU blocks.
//  - store() hands over full blocks [first_block, end_block) computed in the step that just
//    ended (write-through offload); the connector copies them out of the GPU asynchronously.
//  - request_finished() returns true when the request's GPU blocks must stay allocated until
//    its stores finish; the connector then calls Engine::stores_finished(id).
//  - A synchronous connector (LMCache) loads in the step that computes the request, before its
//    forward pass, and stores after it: start_load() and store() return how many transfers the
//    step must wait for, and the connector calls Engine::sync_transfer_done() as each ends.
#include <cstdint>
#include <optional>

#include "sim/core/units.hpp"
#include "sim/engine/request.hpp"

namespace kvsim::engine {

class ConnectorHooks {
 public:
  virtual ~ConnectorHooks() = default;
  virtual std::optional<std::int64_t> match(const Request& r, std::int64_t local_hit_tokens) = 0;
  virtual int start_load(const Request& r, std::int64_t first_token, std::int64_t tokens, SimTime now) = 0;
  virtual int store(const Request& r, std::int64_t first_block, std::int64_t end_block, SimTime now) = 0;
  // Loads and stores on the step's critical path (LMCache) rather than between steps (native).
  virtual bool synchronous() const { return false; }
  // A match() that found tokens was not followed by start_load() (no blocks for the request):
  // the connector drops what it held for it (LMCache's lookup pins its chunks).
  virtual void release_match(const Request& r) { (void)r; }
  // The request left the waiting queue (or the engine): what match() memoized for it goes.
  virtual void forget(const Request& r) { (void)r; }
  virtual bool request_finished(const Request& r) = 0;
  // Whether stores cover prompt blocks only (vLLM offload_prompt_only, default true).
  virtual bool prompt_only() const = 0;
  // Whether match() could answer nullopt now (some chunk it reads is pinned by a load in
  // flight). false lets the engine skip a match() whose answer cannot change its decision.
  virtual bool may_defer() const { return true; }
};

}  // namespace kvsim::engine
