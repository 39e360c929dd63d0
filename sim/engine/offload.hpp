#pragma once
// The offload tiers of a simulation and the native connector of each engine (vLLM's
// OffloadingConnector with its CPU tier and, behind it, lower tiers: vllm/v1/offloading/,
// vllm/v1/kv_offload/). KV blocks move as Transfers over the hardware topology
// (hw::FlowNetwork), so loads and stores share PCIe, NIC and drive bandwidth with each other.
// - Granularity: tiers hold chunks of chunk_blocks blocks keyed by the hash of the chunk's last
//   block (native: one block; LMCache: 256 tokens = 16 blocks, whole chunks only).
// - Lookup: after the GPU hit, consecutive blocks found ready in any tier (fastest first).
// - Load: asynchronous; each run of blocks from one tier is one transfer along the route from
//   that tier to the GPU (remote and NVMe data stream through pinned host memory on GPUs
//   without GPUDirect, which the route's links express). Chunks are pinned while read.
// - Store: write-through; full blocks go to the first tier when a step computed them, then
//   from each tier to the next (staged: GPU -> first tier -> lower tiers). A block becomes
//   loadable from a tier only when its store there finished. The GPU blocks of a finished
//   request stay allocated until its first-tier stores finished.
// Units: bytes, SimTime nanoseconds.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "hw/flow_network.hpp"
#include "hw/topology.hpp"
#include "sim/core/flat_hash.hpp"
#include "sim/engine/connector.hpp"
#include "sim/engine/engine.hpp"
#include "sim/engine/kv_tier.hpp"

namespace kvsim::engine {

// How one engine reaches one tier: routes both ways and what the device adds.
struct TierPath {
  int tier = 0;            // index in OffloadSystem
  hw::Route to_gpu;        // load route
  hw::Route from_gpu;      // store route (first tier only)
  SimTime read_latency = 0;
  SimTime write_latency = 0;
  std::vector<hw::ResourceId> read_resources;
  std::vector<hw::ResourceId> write_resources;
  bool host_memory = false;  // the tier lives in the host DRAM that lower tiers stream through
  // The transfer's own ceiling, 0 for none: LMCache moves KV between the paged GPU cache and
  // pinned host memory with a gather/scatter kernel (multi_layer_kv_transfer), below the copy
  // engines' rate (sim/cluster/offload_builder.cpp).
  BytesPerSec read_rate_cap{0};
  BytesPerSec write_rate_cap{0};
};

// How data moves from tier k to tier k+1 behind it, for one engine's stack.
struct CascadePath {
  hw::Route route;
  SimTime latency = 0;
  std::vector<hw::ResourceId> resources;
};

// Per-tier figures of a run.
struct TierReport {
  std::string name;
  std::int64_t capacity_blocks = 0;
  std::int64_t hit_tokens = 0;     // tokens loaded from this tier
  Bytes bytes_read{0};
  Bytes bytes_written{0};
  std::int64_t promoted_chunks = 0;  // chunks copied in from lower tiers on their way to a GPU
  TierStats stats;
};

// One finished KV transfer, for timelines (OffloadSystem::set_transfer_observer). A promotion
// moves no data of its own (the chunks a load streamed through host memory stay there): it has
// no route and takes no time. `tier` is the tier the bytes count against in TierReport: the
// source of a load (bytes_read), the destination of a store, cascade or promotion
// (bytes_written).
struct TransferRecord {
  enum class Kind : std::uint8_t { kLoad, kStore, kCascade, kPromote } kind = Kind::kLoad;
  const Engine* engine = nullptr;  // whose connector moved it
  std::uint64_t request = 0;       // the request whose blocks moved
  int tier = 0;                    // index in OffloadSystem
  Bytes bytes{0};
  SimTime start = 0;
  SimTime end = 0;
  const hw::Route* route = nullptr;  // links crossed (null for a promotion)
};

class OffloadSystem {
 public:
  // How the connector behaves: vLLM's native OffloadingConnector (per block, asynchronous
  // loads, stores between steps) or LMCache's (chunks of chunk_blocks blocks, synchronous loads
  // before and stores after the forward pass, hits counted from the prompt's start).
  enum class Kind { kNative, kLmcache };
  OffloadSystem(hw::FlowNetwork& network, Bytes block_bytes, int block_size, bool prompt_only,
                Kind kind = Kind::kNative, int chunk_blocks = 1);
  ~OffloadSystem();
  OffloadSystem(const OffloadSystem&) = delete;
  OffloadSystem& operator=(const OffloadSystem&) = delete;

  int add_tier(std::string name, std::int64_t capacity_blocks, EvictionPolicy policy);
  // Tier capacities are in chunks of chunk_blocks() blocks.
  int chunk_blocks() const { return chunk_blocks_; }
  // The connector of one engine; `paths` in lookup order; `cascades[k]` moves tier k's data to
  // tier k+1 of this stack.
  ConnectorHooks& attach(Engine& engine, std::vector<TierPath> paths, std::vector<CascadePath> cascades);

  // A transfer started by this system finished at `now`. Returns the engine whose load or
  // store finished, if it must be woken; when a load unpinned chunks, appends to `retry` every
  // engine whose match was deferred because a chunk it needs was pinned by a load (an idle one
  // must schedule again: nothing else would wake it).
  Engine* on_transfer_done(std::uint64_t tag, SimTime now, std::vector<Engine*>& retry);
  bool owns(std::uint64_t tag) const { return ops_.count(tag) != 0; }

  // Sees every transfer as it finishes, and every promotion; unset, nothing is recorded.
  using TransferObserver = std::function<void(const TransferRecord&)>;
  void set_transfer_observer(TransferObserver observer) { observer_ = std::move(observer); }
  const std::string& tier_name(int i) const { return reports_[static_cast<std::size_t>(i)].name; }

  std::vector<TierReport> report() const;
  // Calls f(key) for every chunk key held: in the tiers and in transfers in flight.
  template <class F>
  void for_each_key(F&& f) const {
    for (const auto& t : tiers_) t->for_each_key(f);
    for (const auto& [tag, op] : ops_) {
      for (const std::uint64_t h : op.hashes) f(h);
    }
  }
  const KvTier& tier(int i) const { return *tiers_[static_cast<std::size_t>(i)]; }

 private:
  class EngineConnector;
  struct Op {
    enum class Kind { kLoad, kStore, kCascade } kind;
    EngineConnector* conn;
    std::uint64_t request;
    int stack_pos;                       // position in the engine's tier stack
    std::vector<std::uint64_t> hashes;   // chunks moved
    // For the transfer observer: when it started, what it carries, which way.
    SimTime started = 0;
    Bytes bytes{0};
    const hw::Route* route = nullptr;
  };
  void observe(const Op& op, SimTime now) const;
  std::uint64_t start(Op op, SimTime now, const hw::Route& route, Bytes bytes, SimTime latency,
                      BytesPerSec rate_cap, const std::vector<hw::ResourceId>& resources);

  hw::FlowNetwork& net_;
  Bytes block_bytes_;
  int block_size_;
  bool prompt_only_;
  Kind kind_;
  int chunk_blocks_;
  std::vector<std::unique_ptr<KvTier>> tiers_;
  std::vector<bool> multi_tier_;  // per tier: some engine looks it up together with other tiers
  std::vector<TierReport> reports_;
  std::vector<std::unique_ptr<EngineConnector>> connectors_;
  std::unordered_map<std::uint64_t, Op> ops_;
  std::uint64_t next_tag_ = 1;
  std::vector<EngineConnector*> deferred_;  // matches deferred on a pinned chunk, to wake
  bool unpinned_ = false;                   // the op being finished unpinned chunks
  TransferObserver observer_;
};

}  // namespace kvsim::engine
