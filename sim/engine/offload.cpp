#include "kvsim/engine/offload.hpp"

#include <algorithm>
#include <unordered_set>

#include "kvsim/core/error.hpp"

namespace kvsim::engine {

class OffloadSystem::EngineConnector : public ConnectorHooks {
 public:
  EngineConnector(OffloadSystem& sys, Engine& engine, std::vector<TierPath> paths,
                  std::vector<CascadePath> cascades)
      : sys_(sys), engine_(engine), paths_(std::move(paths)), cascades_(std::move(cascades)) {}

  // Where block hash `h` can be read: the first tier of the stack that holds it ready.
  int find(std::uint64_t h) const {
    for (std::size_t p = 0; p < paths_.size(); ++p) {
      if (sys_.tiers_[static_cast<std::size_t>(paths_[p].tier)]->is_ready(h)) return static_cast<int>(p);
    }
    return -1;
  }

  std::optional<std::int64_t> match(const Request& r, std::int64_t local_hit_tokens) override {
    const std::int64_t bs = sys_.block_size_;
    const std::int64_t last = std::min<std::int64_t>(r.num_tokens() / bs, static_cast<std::int64_t>(r.block_hashes.size()));
    std::int64_t n = 0;
    for (std::int64_t b = local_hit_tokens / bs; b < last; ++b) {
      const std::uint64_t h = r.block_hashes[static_cast<std::size_t>(b)];
      const int p = find(h);
      if (p < 0) break;
      // OffloadingConnectorScheduler: blocks being loaded for another request -> ask later.
      if (sys_.tiers_[static_cast<std::size_t>(paths_[static_cast<std::size_t>(p)].tier)]->pins(h) > 0) return std::nullopt;
      ++n;
    }
    return n * bs;
  }

  void start_load(const Request& r, std::int64_t first_token, std::int64_t tokens, SimTime now) override {
    const std::int64_t bs = sys_.block_size_;
    std::int64_t b = first_token / bs;
    const std::int64_t end = b + tokens / bs;
    while (b < end) {
      const int p = find(r.block_hashes[static_cast<std::size_t>(b)]);
      KVSIM_ASSERT(p >= 0, "a matched block vanished before its load started");
      Op op{Op::Kind::kLoad, this, r.id, p, {}};
      while (b < end && find(r.block_hashes[static_cast<std::size_t>(b)]) == p) {
        op.hashes.push_back(r.block_hashes[static_cast<std::size_t>(b)]);
        ++b;
      }
      const TierPath& path = paths_[static_cast<std::size_t>(p)];
      KvTier& tier = *sys_.tiers_[static_cast<std::size_t>(path.tier)];
      for (const auto h : op.hashes) tier.pin(h);
      tier.touch(op.hashes);
      const auto n = static_cast<std::int64_t>(op.hashes.size());
      TierReport& rep = sys_.reports_[static_cast<std::size_t>(path.tier)];
      rep.hit_tokens += n * bs;
      rep.bytes_read += sys_.block_bytes_ * n;
      ++loads_left_[r.id];
      sys_.start(std::move(op), now, path.to_gpu, sys_.block_bytes_ * n, path.read_latency, path.read_resources);
    }
  }

  void store(const Request& r, std::int64_t first_block, std::int64_t end_block, SimTime now) override {
    if (paths_.empty()) return;
    Op op{Op::Kind::kStore, this, r.id, 0, {}};
    KvTier& tier = *sys_.tiers_[static_cast<std::size_t>(paths_[0].tier)];
    for (std::int64_t b = first_block; b < end_block; ++b) {
      const std::uint64_t h = r.block_hashes[static_cast<std::size_t>(b)];
      if (tier.begin_store(h)) op.hashes.push_back(h);
    }
    if (op.hashes.empty()) return;
    const auto n = static_cast<std::int64_t>(op.hashes.size());
    sys_.reports_[static_cast<std::size_t>(paths_[0].tier)].bytes_written += sys_.block_bytes_ * n;
    ++stores_left_[r.id];
    sys_.start(std::move(op), now, paths_[0].from_gpu, sys_.block_bytes_ * n, paths_[0].write_latency,
               paths_[0].write_resources);
  }

  bool request_finished(const Request& r) override {
    if (stores_left_.count(r.id) == 0) return false;
    awaiting_free_.insert(r.id);
    return true;
  }

  bool prompt_only() const override { return sys_.prompt_only_; }

  Engine* done(Op& op, SimTime now) {
    const TierPath& path = paths_[static_cast<std::size_t>(op.stack_pos)];
    KvTier& tier = *sys_.tiers_[static_cast<std::size_t>(path.tier)];
    switch (op.kind) {
      case Op::Kind::kLoad: {
        for (const auto h : op.hashes) tier.unpin(h);
        auto it = loads_left_.find(op.request);
        if (--it->second == 0) {
          loads_left_.erase(it);
          engine_.load_finished(op.request);
          return &engine_;
        }
        return nullptr;
      }
      case Op::Kind::kStore:
      case Op::Kind::kCascade: {
        for (const auto h : op.hashes) tier.finish_store(h);
        cascade(op, now);
        if (op.kind == Op::Kind::kCascade) return nullptr;
        auto it = stores_left_.find(op.request);
        if (--it->second > 0) return nullptr;
        stores_left_.erase(it);
        if (awaiting_free_.erase(op.request) != 0) {
          engine_.stores_finished(op.request);
          return &engine_;
        }
        return nullptr;
      }
    }
    return nullptr;
  }

 private:
  // Write-through to the next tier of the stack, from the tier that just received the data.
  void cascade(const Op& op, SimTime now) {
    const auto next = static_cast<std::size_t>(op.stack_pos) + 1;
    if (next >= paths_.size()) return;
    KvTier& lower = *sys_.tiers_[static_cast<std::size_t>(paths_[next].tier)];
    Op c{Op::Kind::kCascade, this, op.request, static_cast<int>(next), {}};
    for (const auto h : op.hashes) {
      if (lower.begin_store(h)) c.hashes.push_back(h);
    }
    if (c.hashes.empty()) return;
    const auto n = static_cast<std::int64_t>(c.hashes.size());
    sys_.reports_[static_cast<std::size_t>(paths_[next].tier)].bytes_written += sys_.block_bytes_ * n;
    const CascadePath& cp = cascades_[next - 1];
    sys_.start(std::move(c), now, cp.route, sys_.block_bytes_ * n, cp.latency, cp.resources);
  }

  OffloadSystem& sys_;
  Engine& engine_;
  std::vector<TierPath> paths_;
  std::vector<CascadePath> cascades_;
  std::unordered_map<std::uint64_t, int> loads_left_;
  std::unordered_map<std::uint64_t, int> stores_left_;
  std::unordered_set<std::uint64_t> awaiting_free_;
};

OffloadSystem::OffloadSystem(hw::FlowNetwork& network, Bytes block_bytes, int block_size, bool prompt_only)
    : net_(network), block_bytes_(block_bytes), block_size_(block_size), prompt_only_(prompt_only) {}

OffloadSystem::~OffloadSystem() = default;

int OffloadSystem::add_tier(std::string name, std::int64_t capacity_blocks, EvictionPolicy policy) {
  TierReport rep;
  rep.name = name;
  rep.capacity_blocks = capacity_blocks;
  reports_.push_back(rep);
  tiers_.push_back(std::make_unique<KvTier>(std::move(name), capacity_blocks, policy));
  return static_cast<int>(tiers_.size()) - 1;
}

ConnectorHooks& OffloadSystem::attach(Engine& engine, std::vector<TierPath> paths, std::vector<CascadePath> cascades) {
  KVSIM_ASSERT(cascades.size() + 1 >= paths.size(), "one cascade path per pair of adjacent tiers");
  connectors_.push_back(std::make_unique<EngineConnector>(*this, engine, std::move(paths), std::move(cascades)));
  engine.set_connector(connectors_.back().get());
  return *connectors_.back();
}

std::uint64_t OffloadSystem::start(Op op, SimTime now, const hw::Route& route, Bytes bytes, SimTime latency,
                                   const std::vector<hw::ResourceId>& resources) {
  const std::uint64_t tag = next_tag_++;
  hw::TransferOptions opts;
  opts.extra_latency = latency;
  opts.resources = resources;
  opts.tag = tag;
  net_.start(now, route, bytes, opts);
  ops_.emplace(tag, std::move(op));
  return tag;
}

Engine* OffloadSystem::on_transfer_done(std::uint64_t tag, SimTime now) {
  auto it = ops_.find(tag);
  KVSIM_ASSERT(it != ops_.end(), "a transfer finished that no offload operation started");
  Op op = std::move(it->second);
  ops_.erase(it);
  return op.conn->done(op, now);
}

std::vector<TierReport> OffloadSystem::report() const {
  std::vector<TierReport> out = reports_;
  for (std::size_t i = 0; i < out.size(); ++i) out[i].stats = tiers_[i]->stats();
  return out;
}

}  // namespace kvsim::engine
