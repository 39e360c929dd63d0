// Timing-free prefix-cache curves: checked by hand on small traces, against a plain LRU list
// simulation written here, against the LRU curve published with the Mooncake FAST'25
// conversation trace, and for ARC and tier stacks against properties they must have.
#include "sim/analysis/cache_curve.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <list>
#include <map>
#include <string>

#include "sim/core/error.hpp"
#include "sim/core/rng.hpp"

namespace kvsim::analysis {
namespace {

TraceRequest req(std::vector<std::int64_t> ids, std::int64_t tokens) {
  TraceRequest r;
  r.hash_ids = std::move(ids);
  r.input_length = tokens;
  return r;
}

CurveOptions opts(int block_tokens, CurveRules rules, engine::EvictionPolicy policy = engine::EvictionPolicy::kLru) {
  CurveOptions o;
  o.block_tokens = block_tokens;
  o.rules = rules;
  o.policy = policy;
  return o;
}

// Blocks of 10 tokens. Request 1 uses A B, request 2 uses C, request 3 asks for A B D.
// Published rules touch first to last: before request 3 the stack (most recent first) is
// [C, B, A], so A has distance 2 and B distance 1: the prefix A B needs 3 blocks of cache.
// vLLM rules touch last to first: the stack is [C, A, B]: A (distance 1) hits in 2 blocks.
TEST(CacheCurve, StackDistancesByHand) {
  const std::vector<TraceRequest> t = {req({1, 2}, 20), req({3}, 10), req({1, 2, 4}, 30)};
  const auto p = cache_curve(t, {1, 2, 3, 100}, opts(10, CurveRules::kPublished));
  ASSERT_EQ(p.points.size(), 4u);
  EXPECT_EQ(p.points[0].hit_tokens, 0);
  EXPECT_EQ(p.points[1].hit_tokens, 0);
  EXPECT_EQ(p.points[2].hit_tokens, 20);
  EXPECT_DOUBLE_EQ(p.points[3].token_hit_rate, 20.0 / 60.0);
  // Request-weighted: (0 + 0 + 20/30) / 3.
  EXPECT_DOUBLE_EQ(p.points[3].request_hit_rate, (20.0 / 30.0) / 3.0);
  EXPECT_DOUBLE_EQ(p.infinite_token_hit_rate, 20.0 / 60.0);
  EXPECT_EQ(p.distinct_blocks, 4);

  const auto v = cache_curve(t, {1, 2, 3}, opts(10, CurveRules::kVllm));
  EXPECT_EQ(v.points[0].hit_tokens, 0);
  EXPECT_EQ(v.points[1].hit_tokens, 10);
  EXPECT_EQ(v.points[2].hit_tokens, 20);
}

// 25 tokens in blocks of 10: published rules count the partial third block (hit tokens capped
// at the input length, 25); vLLM caches only the two full blocks (20).
TEST(CacheCurve, PartialLastBlock) {
  const std::vector<TraceRequest> t = {req({1, 2, 3}, 25), req({1, 2, 3}, 25)};
  EXPECT_EQ(cache_curve(t, {100}, opts(10, CurveRules::kPublished)).points[0].hit_tokens, 25);
  EXPECT_EQ(cache_curve(t, {100}, opts(10, CurveRules::kVllm)).points[0].hit_tokens, 20);
}

// A plain LRU cache (a list, most recent at the front) applying the rules literally.
std::int64_t reference_lru(const std::vector<TraceRequest>& trace, std::size_t capacity, int bt, CurveRules rules) {
  std::list<std::int64_t> order;
  std::map<std::int64_t, std::list<std::int64_t>::iterator> where;
  std::int64_t hits = 0;
  for (const auto& r : trace) {
    std::size_t n = r.hash_ids.size();
    if (rules == CurveRules::kVllm) n = std::min<std::size_t>(n, static_cast<std::size_t>(r.input_length / bt));
    std::size_t h = 0;
    while (h < n && where.count(r.hash_ids[h])) ++h;
    hits += std::min<std::int64_t>(static_cast<std::int64_t>(h) * bt, r.input_length);
    auto use = [&](std::int64_t id) {
      if (auto it = where.find(id); it != where.end()) order.erase(it->second);
      order.push_front(id);
      where[id] = order.begin();
      if (order.size() > capacity) {
        where.erase(order.back());
        order.pop_back();
      }
    };
    if (rules == CurveRules::kPublished) {
      for (std::size_t k = 0; k < n; ++k) use(r.hash_ids[k]);
    } else {
      for (std::size_t k = n; k-- > 0;) use(r.hash_ids[k]);
    }
  }
  return hits;
}

// Conversations that grow turn by turn (each turn's ids extend the previous turn's), a shared
// system-prompt block, and one-off requests, interleaved at random.
std::vector<TraceRequest> synthetic_trace(std::uint64_t seed, int requests, int bt) {
  Rng rng(seed);
  std::vector<std::vector<std::int64_t>> conversations(12);
  std::int64_t next_id = 1000;
  std::vector<TraceRequest> out;
  for (int i = 0; i < requests; ++i) {
    auto& c = conversations[static_cast<std::size_t>(rng.uniform_int(0, 11))];
    if (c.empty() || rng.uniform_int(0, 9) == 0) c = {0};  // a new conversation
    const auto grow = rng.uniform_int(1, 4);
    for (std::int64_t g = 0; g < grow; ++g) c.push_back(next_id++);
    const std::int64_t partial = rng.uniform_int(1, bt);
    out.push_back(req(c, static_cast<std::int64_t>(c.size() - 1) * bt + partial));
  }
  return out;
}

TEST(CacheCurve, OnePassEqualsAPlainLruListAtEveryCapacity) {
  for (const auto rules : {CurveRules::kPublished, CurveRules::kVllm}) {
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      const auto trace = synthetic_trace(seed, 400, 16);
      const std::vector<std::int64_t> caps = {1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 400, 5000};
      const auto curve = cache_curve(trace, caps, opts(16, rules));
      for (std::size_t i = 0; i < caps.size(); ++i) {
        EXPECT_EQ(curve.points[i].hit_tokens, reference_lru(trace, static_cast<std::size_t>(caps[i]), 16, rules))
            << "seed " << seed << " capacity " << caps[i];
      }
    }
  }
}

// The simulator's tier (one LRU level of a stack) and the one-pass curve are independent
// implementations of the same cache.
TEST(CacheCurve, SimulatedLruTierEqualsTheOnePassCurve) {
  const auto trace = synthetic_trace(7, 500, 16);
  for (const std::int64_t cap : {4, 30, 120}) {
    const auto o = opts(16, CurveRules::kVllm);
    const auto stack = tier_stack_hits(trace, {{"dram", cap, engine::EvictionPolicy::kLru}}, o);
    EXPECT_EQ(stack.total.hit_tokens, cache_curve(trace, {cap}, o).points[0].hit_tokens) << cap;
  }
}

// ARC keeps blocks used twice while cached (its frequency list T2) when one-off scans pass
// through its recency list T1; in LRU a scan longer than the cache flushes everything. Each round:
// a hot prefix of 3 blocks asked twice in a row, then a scan of 20 new blocks, in a cache of 10
// blocks. LRU: the second ask always hits (3 x 16 tokens), the first never (the scan flushed it):
// 50 x 48 tokens. ARC: T1 stays above its target while the scan passes (the scan's ghosts never
// come back), so the scan evicts only from T1 and the first ask hits too from round 2 on.
TEST(CacheCurve, ArcResistsScansThatDefeatLru) {
  std::vector<TraceRequest> t;
  std::int64_t next = 100;
  for (int i = 0; i < 50; ++i) {
    t.push_back(req({1, 2, 3}, 48));
    t.push_back(req({1, 2, 3}, 48));
    std::vector<std::int64_t> scan;
    for (int k = 0; k < 20; ++k) scan.push_back(next++);
    t.push_back(req(scan, 320));
  }
  const auto lru = cache_curve(t, {10}, opts(16, CurveRules::kVllm, engine::EvictionPolicy::kLru));
  const auto arc = cache_curve(t, {10}, opts(16, CurveRules::kVllm, engine::EvictionPolicy::kArc));
  EXPECT_EQ(lru.points[0].hit_tokens, 50 * 48);
  EXPECT_EQ(arc.points[0].hit_tokens, 50 * 48 + 49 * 48);
}

// With room for every block, no policy evicts: ARC gives the infinite-cache rate.
TEST(CacheCurve, ArcWithRoomForEverythingIsTheInfiniteCache) {
  const auto trace = synthetic_trace(3, 300, 16);
  const auto c = cache_curve(trace, {100000}, opts(16, CurveRules::kPublished, engine::EvictionPolicy::kArc));
  EXPECT_DOUBLE_EQ(c.points[0].token_hit_rate, c.infinite_token_hit_rate);
}

// Two LRU tiers fed the same blocks: the larger holds everything the smaller does, so the stack
// serves what a single cache of the larger size serves; the first tier serves at least what a
// cache of its own size would.
TEST(TierStack, InclusiveLruTiersAddUpToTheLargerCache) {
  const auto trace = synthetic_trace(11, 600, 16);
  const auto o = opts(16, CurveRules::kVllm);
  const auto stack = tier_stack_hits(
      trace, {{"dram", 20, engine::EvictionPolicy::kLru}, {"nvme", 200, engine::EvictionPolicy::kLru}}, o);
  const auto curve = cache_curve(trace, {20, 200}, o);
  EXPECT_EQ(stack.total.hit_tokens, curve.points[1].hit_tokens);
  EXPECT_EQ(stack.tiers[0].hit_tokens + stack.tiers[1].hit_tokens, stack.total.hit_tokens);
  EXPECT_GE(stack.tiers[0].hit_tokens, curve.points[0].hit_tokens);
  EXPECT_GT(stack.tiers[1].hit_tokens, 0);
}

TEST(CacheCurve, RejectsNonPositiveCapacities) {
  const std::vector<TraceRequest> t = {req({1}, 10)};
  EXPECT_THROW(cache_curve(t, {0}, opts(10, CurveRules::kPublished)), InputError);
  EXPECT_THROW(tier_stack_hits(t, {{"dram", 0, engine::EvictionPolicy::kLru}}, opts(10, CurveRules::kPublished)),
               InputError);
}

// The table published with the trace (scenarios/traces/README.md): LRU token hit ratio of the
// Mooncake conversation trace at 1,000, 4,000, 16,000, 64,000 and 256,000 blocks of 512 tokens:
// 4.5, 8.7, 26.8, 36.6, 37.4 % (one decimal), under the published rules. Within 0.1 point.
TEST(CacheCurve, ReproducesThePublishedMooncakeTable) {
  const std::string file = std::string(KVSIM_SOURCE_DIR) + "/scenarios/traces/mooncake_fast25_conversation_trace.jsonl";
  const auto trace = workload::read_mooncake_trace(file, 512);
  const auto c = cache_curve(trace, {1000, 4000, 16000, 64000, 256000}, opts(512, CurveRules::kPublished));
  const double published[] = {4.5, 8.7, 26.8, 36.6, 37.4};
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_NEAR(100.0 * c.points[i].token_hit_rate, published[i], 0.1) << c.points[i].capacity_blocks;
  }
  EXPECT_NEAR(100.0 * c.infinite_token_hit_rate, 37.4, 0.1);
}

}  // namespace
}  // namespace kvsim::analysis
