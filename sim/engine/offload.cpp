#include "sim/engine/offload.hpp"

#include <algorithm>
#include <unordered_set>

#include "sim/core/error.hpp"

namespace kvsim::engine {

class OffloadSystem::EngineConnector : public ConnectorHooks {
 public:
  EngineConnector(OffloadSystem& sys, Engine& engine, std::vector<TierPath> paths,
                  std::vector<CascadePath> cascades)
      : sys_(sys), engine_(engine), paths_(std::move(paths)), cascades_(std::move(cascades)) {
    first_tier_is_host_ = !paths_.empty() && paths_[0].host_memory;
    for (const TierPath& path : paths_) stack_.push_back(sys_.tiers_[static_cast<std::size_t>(path.tier)].get());
  }

  bool synchronous() const override { return sys_.kind_ == Kind::kLmcache; }
  Engine& engine() const { return engine_; }
  // The OffloadSystem index of the tier at stack position `pos`.
  int tier_index(int pos) const { return paths_[static_cast<std::size_t>(pos)].tier; }
  // In OffloadSystem::deferred_: a match answered "ask again later" since the last wake.
  bool deferred_wake_ = false;

  // A chunk's key: the chained hash of its last block, which covers the whole prefix.
  std::uint64_t key(const Request& r, std::int64_t chunk) const {
    return r.block_hashes[static_cast<std::size_t>((chunk + 1) * sys_.chunk_blocks_ - 1)];
  }
  std::int64_t chunk_tokens() const { return static_cast<std::int64_t>(sys_.chunk_blocks_) * sys_.block_size_; }
  KvTier& tier_at(std::size_t pos) const { return *stack_[pos]; }

  // Where chunk key `h` can be read: the first tier of the stack that holds it ready.
  int find(std::uint64_t h) const {
    for (std::size_t p = 0; p < stack_.size(); ++p) {
      if (tier_at(p).is_ready(h)) return static_cast<int>(p);
    }
    return -1;
  }
  // find(), whether the found tier's copy is pinned by a load, and its entry slot, from the
  // tiers' indexes.
  int find_pinned(std::uint64_t h, bool& pinned, std::int32_t& entry) const {
    for (std::size_t p = 0; p < stack_.size(); ++p) {
      const int st = tier_at(p).state(h, entry);
      if (st >= 0) {
        pinned = st > 0;
        return static_cast<int>(p);
      }
    }
    return -1;
  }
  // find(), pinning the chunk in the tier it is read from (one lookup per tier): its stack
  // position, with its entry slot there in `entry`; -1 when no tier holds it ready.
  int pin_where_ready(std::uint64_t h, std::int32_t& entry) {
    for (std::size_t p = 0; p < stack_.size(); ++p) {
      entry = tier_at(p).pin_if_ready(h);
      if (entry >= 0) return static_cast<int>(p);
    }
    return -1;
  }
  // Walks over a request's chunks look ahead this far, so the index lookups overlap.
  static constexpr std::int64_t kLookahead = 16;
  void prefetch(const Request& r, std::int64_t chunk, std::int64_t last) const {
    if (chunk >= last) return;
    const std::uint64_t h = key(r, chunk);
    for (std::size_t p = 0; p < stack_.size(); ++p) tier_at(p).prefetch(h);
  }

  std::optional<std::int64_t> match(const Request& r, std::int64_t local_hit_tokens) override {
    const std::int64_t ct = chunk_tokens();
    const std::int64_t last = std::min<std::int64_t>(
        r.num_tokens() / ct, static_cast<std::int64_t>(r.block_hashes.size()) / sys_.chunk_blocks_);
    // Native: blocks after the GPU hit (OffloadingConnectorScheduler); LMCache: chunks from the
    // start of the prompt, the part vLLM already holds counted then subtracted.
    const std::int64_t first = synchronous() ? 0 : local_hit_tokens / ct;
    std::int64_t end = first;
    bool deferred = false;
    // Exact fast path (native only; LMCache's match pins): a request blocked at the head of the
    // queue is matched again every step. With no tier change that could shorten the run of
    // ready, unpinned chunks since the last match, that run still holds, and only changes that
    // lengthen it happened: resume the walk where it stopped, or reuse the answer outright.
    // Most requests are matched once (admitted, or parked for a load): watching the entries
    // costs a second visit to each, so only a request matched again (blocked at the head of the
    // queue) memoizes its walk.
    auto& m = r.match_memo;
    const bool memo = !synchronous() && engine_.fast_paths() && m.matches++ > 0;
    std::uint64_t grow = 0;
    std::uint64_t shrink = 0;
    bool reuse = false;
    if (memo) {
      for (std::size_t p = 0; p < paths_.size(); ++p) {
        grow += tier_at(p).grow_version();
        shrink += tier_at(p).shrink_version();
      }
      if (m.valid && m.shrink == shrink && m.local_hit_tokens == local_hit_tokens && m.num_tokens == r.num_tokens()) {
        end = m.end;
        deferred = m.deferred;
        reuse = m.grow == grow;
      } else {
        forget(r);
      }
    }
    if (!reuse) {
      deferred = false;
      for (std::int64_t c = end; c < std::min(end + kLookahead, last); ++c) prefetch(r, c, last);
      for (std::int64_t c = end; c < last; ++c) {
        prefetch(r, c + kLookahead, last);
        bool pinned = false;
        std::int32_t entry = 0;
        const int p = find_pinned(key(r, c), pinned, entry);
        if (p < 0) break;
        // Blocks being loaded for another request: ask again later (native connector).
        if (!synchronous() && pinned) {
          deferred = true;
          break;
        }
        // The entries the answer relies on: evicting one of them changes it.
        if (memo) {
          tier_at(static_cast<std::size_t>(p)).watch(entry);
          m.found.emplace_back(p, entry);
        }
        end = c + 1;
      }
      if (memo) {
        m.valid = true;
        m.deferred = deferred;
        m.local_hit_tokens = local_hit_tokens;
        m.num_tokens = r.num_tokens();
        m.grow = grow;
        m.shrink = shrink;
        m.end = end;
      }
    }
    if (deferred) {
      // Nothing else may step this engine again (it may run nothing): the load holding the
      // chunk wakes it when it unpins (OffloadSystem::on_transfer_done).
      if (!deferred_wake_) {
        deferred_wake_ = true;
        sys_.deferred_.push_back(this);
      }
      return std::nullopt;
    }
    std::int64_t hit = end * ct;
    if (hit <= local_hit_tokens) return 0;
    if (synchronous()) {
      // LMCache's lookup pins the chunks it found until they are loaded (or the match is
      // dropped), so they survive until the step that loads them starts.
      auto& pinned = lookup_pins_[r.id];
      for (std::int64_t c = local_hit_tokens / ct; c < end; ++c) {
        const std::uint64_t h = key(r, c);
        const int p = find(h);
        tier_at(static_cast<std::size_t>(p)).pin(h);
        pinned.emplace_back(p, h);
      }
    }
    // LMCache: a hit covering the whole prompt leaves its last token to compute.
    if (synchronous() && hit == r.num_tokens()) --hit;
    return hit - local_hit_tokens;
  }

  void release_match(const Request& r) override { drop_lookup_pins(r.id); }

  void forget(const Request& r) override {
    auto& m = r.match_memo;
    if (!m.valid) return;
    for (const auto& [p, e] : m.found) tier_at(static_cast<std::size_t>(p)).unwatch(e);
    m.found.clear();
    m.valid = false;
  }

  int start_load(const Request& r, std::int64_t first_token, std::int64_t tokens, SimTime now) override {
    const std::int64_t ct = chunk_tokens();
    const std::int64_t c0 = first_token / ct;
    const std::int64_t end = (first_token + tokens + ct - 1) / ct;
    // Where each chunk is read from: one lookup pass (looking ahead) that also pins each chunk
    // in the tier it is read from, used for the loads and the per-tier hit counts.
    found_.clear();
    found_entries_.clear();
    for (std::int64_t c = c0; c < std::min(c0 + kLookahead, end); ++c) prefetch(r, c, end);
    for (std::int64_t c = c0; c < end; ++c) {
      prefetch(r, c + kLookahead, end);
      std::int32_t e = -1;
      const int p = pin_where_ready(key(r, c), e);
      KVSIM_ASSERT(p >= 0, "a matched chunk vanished before its load started");
      found_.push_back(p);
      found_entries_.push_back(e);
    }
    hit_tokens_by_tier(first_token, tokens);
    int started = 0;
    std::int64_t c = c0;
    while (c < end) {
      const int p = found_[static_cast<std::size_t>(c - c0)];
      Op op{Op::Kind::kLoad, this, r.id, p, {}};
      const std::int64_t group = c;
      while (c < end && found_[static_cast<std::size_t>(c - c0)] == p) {
        op.hashes.push_back(key(r, c));
        ++c;
      }
      const TierPath& path = paths_[static_cast<std::size_t>(p)];
      KvTier& tier = tier_at(static_cast<std::size_t>(p));
      tier.touch_entries(std::span<const std::int32_t>(found_entries_).subspan(
          static_cast<std::size_t>(group - c0), static_cast<std::size_t>(c - group)));
      const auto n = static_cast<std::int64_t>(op.hashes.size());
      const Bytes bytes = sys_.block_bytes_ * (n * sys_.chunk_blocks_);
      TierReport& rep = sys_.reports_[static_cast<std::size_t>(path.tier)];
      rep.bytes_read += bytes;
      if (!synchronous()) ++loads_left_[r.id];
      sys_.start(std::move(op), now, path.to_gpu, bytes, path.read_latency, path.read_rate_cap,
                 path.read_resources);
      ++started;
    }
    drop_lookup_pins(r.id);  // the loads hold their own pins now
    return started;
  }

  int store(const Request& r, std::int64_t first_block, std::int64_t end_block, SimTime now) override {
    if (paths_.empty()) return 0;
    Op op{Op::Kind::kStore, this, r.id, 0, {}};
    KvTier& tier = tier_at(0);
    // Whole chunks only: those completed since the last store.
    const std::int64_t c1 = end_block / sys_.chunk_blocks_;
    for (std::int64_t c = first_block / sys_.chunk_blocks_; c < c1; ++c) {
      if (c + kLookahead < c1) tier.prefetch(key(r, c + kLookahead));
      const std::uint64_t h = key(r, c);
      if (tier.begin_store(h)) op.hashes.push_back(h);
    }
    if (op.hashes.empty()) return 0;
    const auto n = static_cast<std::int64_t>(op.hashes.size());
    const Bytes bytes = sys_.block_bytes_ * (n * sys_.chunk_blocks_);
    sys_.reports_[static_cast<std::size_t>(paths_[0].tier)].bytes_written += bytes;
    if (!synchronous()) ++stores_left_[r.id];
    sys_.start(std::move(op), now, paths_[0].from_gpu, bytes, paths_[0].write_latency,
               paths_[0].write_rate_cap, paths_[0].write_resources);
    return 1;
  }

  bool request_finished(const Request& r) override {
    if (stores_left_.count(r.id) == 0) return false;
    awaiting_free_.insert(r.id);
    return true;
  }

  bool prompt_only() const override { return sys_.prompt_only_; }

  bool may_defer() const override {
    if (synchronous()) return true;
    for (std::size_t p = 0; p < paths_.size(); ++p) {
      if (tier_at(p).pinned_count() > 0) return true;
    }
    return false;
  }

  Engine* done(Op& op, SimTime now) {
    KvTier& tier = tier_at(static_cast<std::size_t>(op.stack_pos));
    switch (op.kind) {
      case Op::Kind::kLoad: {
        for_each_prefetched(tier, op.hashes, [&tier](std::uint64_t h) { tier.unpin(h); });
        sys_.unpinned_ = true;
        promote(op, now);
        engine_.note(op.request, RequestEventKind::kLoadDone, now);
        if (synchronous()) {
          engine_.sync_transfer_done();
          return &engine_;
        }
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
        for_each_prefetched(tier, op.hashes, [&tier](std::uint64_t h) { tier.finish_store(h); });
        cascade(op, now);
        if (op.kind == Op::Kind::kCascade) return nullptr;
        if (synchronous()) {
          engine_.sync_transfer_done();
          return &engine_;
        }
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
  // A load from a lower tier streamed through host memory; where the stack's first tier is that
  // host's DRAM, the chunks stay there (vLLM stages lower tiers through its CPU tier; LMCache
  // writes remote hits to its local CPU backend), so the next request finds them one tier up.
  void promote(const Op& op, SimTime now) {
    if (op.stack_pos == 0 || !first_tier_is_host_) return;
    KvTier& top = tier_at(0);
    std::int64_t n = 0;
    for_each_prefetched(top, op.hashes, [&top, &n](std::uint64_t h) {
      if (!top.begin_store(h)) return;
      top.finish_store(h);
      ++n;
    });
    sys_.reports_[static_cast<std::size_t>(paths_[0].tier)].bytes_written +=
        sys_.block_bytes_ * (n * sys_.chunk_blocks_);
    sys_.reports_[static_cast<std::size_t>(paths_[0].tier)].promoted_chunks += n;
    if (sys_.observer_ && n > 0) {
      TransferRecord t;
      t.kind = TransferRecord::Kind::kPromote;
      t.engine = &engine_;
      t.request = op.request;
      t.tier = paths_[0].tier;
      t.bytes = sys_.block_bytes_ * (n * sys_.chunk_blocks_);
      t.start = now;
      t.end = now;
      sys_.observer_(t);
    }
  }

  void drop_lookup_pins(std::uint64_t id) {
    auto it = lookup_pins_.find(id);
    if (it == lookup_pins_.end()) return;
    for (const auto& [p, h] : it->second) tier_at(static_cast<std::size_t>(p)).unpin(h);
    lookup_pins_.erase(it);
  }

  // Tokens loaded per tier: each loaded chunk's tokens counted for the tier it came from
  // (found_, from chunk first_token / chunk_tokens on), clipped to the tokens the engine asked for.
  void hit_tokens_by_tier(std::int64_t first_token, std::int64_t tokens) {
    const std::int64_t ct = chunk_tokens();
    const std::int64_t c0 = first_token / ct;
    for (std::int64_t c = c0; c * ct < first_token + tokens; ++c) {
      const int p = found_[static_cast<std::size_t>(c - c0)];
      const std::int64_t lo = std::max(c * ct, first_token);
      const std::int64_t hi = std::min((c + 1) * ct, first_token + tokens);
      sys_.reports_[static_cast<std::size_t>(paths_[static_cast<std::size_t>(p)].tier)].hit_tokens += hi - lo;
    }
  }

  // Write-through to the next tier of the stack, from the tier that just received the data.
  void cascade(const Op& op, SimTime now) {
    const auto next = static_cast<std::size_t>(op.stack_pos) + 1;
    if (next >= paths_.size()) return;
    KvTier& lower = tier_at(next);
    Op c{Op::Kind::kCascade, this, op.request, static_cast<int>(next), {}};
    for_each_prefetched(lower, op.hashes, [&lower, &c](std::uint64_t h) {
      if (lower.begin_store(h)) c.hashes.push_back(h);
    });
    if (c.hashes.empty()) return;
    const auto n = static_cast<std::int64_t>(c.hashes.size());
    const Bytes bytes = sys_.block_bytes_ * (n * sys_.chunk_blocks_);
    sys_.reports_[static_cast<std::size_t>(paths_[next].tier)].bytes_written += bytes;
    const CascadePath& cp = cascades_[next - 1];
    sys_.start(std::move(c), now, cp.route, bytes, cp.latency, BytesPerSec{0}, cp.resources);
  }

  OffloadSystem& sys_;
  Engine& engine_;
  std::vector<TierPath> paths_;
  std::vector<KvTier*> stack_;  // paths_[i]'s tier
  std::vector<CascadePath> cascades_;
  bool first_tier_is_host_ = false;
  std::unordered_map<std::uint64_t, int> loads_left_;
  std::unordered_map<std::uint64_t, int> stores_left_;
  std::unordered_set<std::uint64_t> awaiting_free_;
  // LMCache lookups: (stack position, chunk key) pinned per request until its load starts.
  std::unordered_map<std::uint64_t, std::vector<std::pair<int, std::uint64_t>>> lookup_pins_;
  std::vector<int> found_;  // start_load: stack position of each chunk loaded
  std::vector<std::int32_t> found_entries_;  // start_load: its entry slot there (pinned)
};

OffloadSystem::OffloadSystem(hw::FlowNetwork& network, Bytes block_bytes, int block_size, bool prompt_only,
                             Kind kind, int chunk_blocks)
    : net_(network),
      block_bytes_(block_bytes),
      block_size_(block_size),
      prompt_only_(prompt_only),
      kind_(kind),
      chunk_blocks_(chunk_blocks) {
  KVSIM_ASSERT(chunk_blocks_ >= 1, "a chunk holds at least one block");
}

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
  // A tier that some engine looks up alone needs only watched pins to invalidate memoized
  // matches; one that any engine looks up with others needs every first pin (KvTier).
  multi_tier_.resize(tiers_.size(), false);
  for (const TierPath& p : paths) {
    const auto t = static_cast<std::size_t>(p.tier);
    if (paths.size() > 1) multi_tier_[t] = true;
    tiers_[t]->set_pins_shrink_all(multi_tier_[t]);
  }
  connectors_.push_back(std::make_unique<EngineConnector>(*this, engine, std::move(paths), std::move(cascades)));
  engine.set_connector(connectors_.back().get());
  return *connectors_.back();
}

std::uint64_t OffloadSystem::start(Op op, SimTime now, const hw::Route& route, Bytes bytes,
                                   SimTime latency, BytesPerSec rate_cap,
                                   const std::vector<hw::ResourceId>& resources) {
  const std::uint64_t tag = next_tag_++;
  op.started = now;
  op.bytes = bytes;
  op.route = &route;
  hw::TransferOptions opts;
  opts.extra_latency = latency;
  opts.rate_cap = rate_cap;
  opts.resources = resources;
  opts.tag = tag;
  net_.start(now, route, bytes, opts);
  ops_.emplace(tag, std::move(op));
  return tag;
}

Engine* OffloadSystem::on_transfer_done(std::uint64_t tag, SimTime now, std::vector<Engine*>& retry) {
  auto it = ops_.find(tag);
  KVSIM_ASSERT(it != ops_.end(), "a transfer finished that no offload operation started");
  Op op = std::move(it->second);
  ops_.erase(it);
  unpinned_ = false;
  if (observer_) observe(op, now);
  Engine* woken = op.conn->done(op, now);
  // A load unpinned chunks: every engine whose match was deferred on a pinned chunk asks again
  // (an idle engine would otherwise wait for an event that never comes).
  if (unpinned_ && !deferred_.empty()) {
    for (EngineConnector* c : deferred_) {
      c->deferred_wake_ = false;
      retry.push_back(&c->engine());
    }
    deferred_.clear();
  }
  return woken;
}

void OffloadSystem::observe(const Op& op, SimTime now) const {
  TransferRecord t;
  t.engine = &op.conn->engine();
  t.request = op.request;
  t.bytes = op.bytes;
  t.start = op.started;
  t.end = now;
  t.route = op.route;
  // The tier the bytes count against, as start_load(), store() and cascade() count them.
  t.tier = op.conn->tier_index(op.stack_pos);
  switch (op.kind) {
    case Op::Kind::kLoad: t.kind = TransferRecord::Kind::kLoad; break;
    case Op::Kind::kStore: t.kind = TransferRecord::Kind::kStore; break;
    case Op::Kind::kCascade: t.kind = TransferRecord::Kind::kCascade; break;
  }
  observer_(t);
}

std::vector<TierReport> OffloadSystem::report() const {
  std::vector<TierReport> out = reports_;
  for (std::size_t i = 0; i < out.size(); ++i) out[i].stats = tiers_[i]->stats();
  return out;
}

}  // namespace kvsim::engine
