#include "hw/topology.hpp"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/visitors.hpp>
#include <cmath>
#include <limits>
#include <utility>

#include "sim/core/error.hpp"

namespace kvsim::hw {

namespace {

// Vertices are NodeIds in insertion order; each edge carries its LinkId.
using Graph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, boost::no_property, LinkId>;

struct Link {
  NodeId a = kNoNode;
  NodeId b = kNoNode;
  LinkSpec spec;
};

void check_rate(const std::string& link_name, const char* field, BytesPerSec rate,
                bool allow_zero) {
  const bool ok = std::isfinite(rate.value) && (allow_zero ? rate.value >= 0 : rate.value > 0);
  if (!ok) {
    throw InputError(
        Diagnostic{"", 0, 0, link_name + "." + field,
                   allow_zero ? "must be a finite rate >= 0" : "must be a finite rate > 0"});
  }
}

}  // namespace

const char* to_string(NodeKind kind) {
  switch (kind) {
    case NodeKind::kGpu:
      return "gpu";
    case NodeKind::kHost:
      return "host";
    case NodeKind::kPcieSwitch:
      return "pcie_switch";
    case NodeKind::kNic:
      return "nic";
    case NodeKind::kNetworkSwitch:
      return "network_switch";
    case NodeKind::kStorageNode:
      return "storage_node";
    case NodeKind::kNvmeDrive:
      return "nvme_drive";
  }
  KVSIM_ASSERT(false, "unknown NodeKind");
  return "";
}

struct Topology::Impl {
  Graph graph;
  std::vector<NodeKind> kinds;
  std::vector<std::string> names;
  std::vector<Link> links;
  bool sealed = false;
  // dist[to * n + from]: hops from `from` to `to`, -1 when unreachable.
  std::vector<std::int32_t> dist;
  // next[to * n + from]: first hop of the chosen route from -> to (link -1 when none).
  std::vector<Hop> next;

  std::size_t n() const { return kinds.size(); }
  std::size_t at(NodeId from, NodeId to) const {
    return static_cast<std::size_t>(to) * n() + static_cast<std::size_t>(from);
  }
  void check_node(NodeId node) const {
    KVSIM_ASSERT(node >= 0 && static_cast<std::size_t>(node) < n(), "unknown NodeId");
  }
  void check_link(LinkId link) const {
    KVSIM_ASSERT(link >= 0 && static_cast<std::size_t>(link) < links.size(), "unknown LinkId");
  }
};

Topology::Topology() : impl_(std::make_unique<Impl>()) {}
Topology::~Topology() = default;
Topology::Topology(Topology&&) noexcept = default;
Topology& Topology::operator=(Topology&&) noexcept = default;

NodeId Topology::add_node(NodeKind kind, std::string name) {
  KVSIM_ASSERT(!impl_->sealed, "add_node after seal()");
  const auto v = boost::add_vertex(impl_->graph);
  KVSIM_ASSERT(v == impl_->n(), "vertex ids follow node ids");
  impl_->kinds.push_back(kind);
  impl_->names.push_back(std::move(name));
  return static_cast<NodeId>(v);
}

LinkId Topology::add_link(NodeId a, NodeId b, LinkSpec spec) {
  KVSIM_ASSERT(!impl_->sealed, "add_link after seal()");
  impl_->check_node(a);
  impl_->check_node(b);
  KVSIM_ASSERT(a != b, "a link joins two distinct nodes");
  check_rate(spec.name, "forward", spec.forward, false);
  check_rate(spec.name, "backward", spec.backward, false);
  check_rate(spec.name, "both_busy_each", spec.both_busy_each, true);
  if (spec.latency < 0) {
    throw InputError(Diagnostic{"", 0, 0, spec.name + ".latency", "must be >= 0"});
  }
  const auto id = static_cast<LinkId>(impl_->links.size());
  boost::add_edge(static_cast<std::size_t>(a), static_cast<std::size_t>(b), id, impl_->graph);
  impl_->links.push_back(Link{a, b, std::move(spec)});
  return id;
}

// Fewest hops by breadth-first search from every destination (links are full duplex, so the
// graph is undirected and distances are symmetric). The first hop from `from` towards `to` is
// the smallest link id whose far end is one hop closer to `to`; applying that rule at every node
// yields, among all fewest-hop routes, the one with the lexicographically smallest link-id
// sequence.
void Topology::seal() {
  Impl& m = *impl_;
  if (m.sealed) return;
  const std::size_t n = m.n();
  m.dist.assign(n * n, -1);
  m.next.assign(n * n, Hop{});
  std::vector<std::int32_t> d(n);
  for (std::size_t to = 0; to < n; ++to) {
    std::fill(d.begin(), d.end(), -1);
    d[to] = 0;
    boost::breadth_first_search(m.graph, to,
                                boost::visitor(boost::make_bfs_visitor(
                                    boost::record_distances(d.data(), boost::on_tree_edge()))));
    // record_distances sets d[child] = d[parent] + 1 on tree edges; vertices the search never
    // reaches keep -1, the "unreachable" mark.
    for (std::size_t from = 0; from < n; ++from) {
      m.dist[to * n + from] = d[from];
      if (from == to || d[from] < 0) continue;
      Hop best{};
      for (const auto e : boost::make_iterator_range(boost::out_edges(from, m.graph))) {
        const LinkId id = m.graph[e];
        const std::size_t other = boost::target(e, m.graph);
        if (d[other] != d[from] - 1) continue;
        if (best.link < 0 || id < best.link) {
          best.link = id;
          best.forward = static_cast<std::size_t>(m.links[static_cast<std::size_t>(id)].a) == from;
        }
      }
      KVSIM_ASSERT(best.link >= 0, "a reachable node has a neighbour one hop closer");
      m.next[to * n + from] = best;
    }
  }
  m.sealed = true;
}

bool Topology::sealed() const { return impl_->sealed; }
std::size_t Topology::num_nodes() const { return impl_->n(); }
std::size_t Topology::num_links() const { return impl_->links.size(); }

NodeKind Topology::kind(NodeId node) const {
  impl_->check_node(node);
  return impl_->kinds[static_cast<std::size_t>(node)];
}

const std::string& Topology::name(NodeId node) const {
  impl_->check_node(node);
  return impl_->names[static_cast<std::size_t>(node)];
}

NodeId Topology::find_node(std::string_view name) const {
  for (std::size_t i = 0; i < impl_->names.size(); ++i) {
    if (impl_->names[i] == name) return static_cast<NodeId>(i);
  }
  return kNoNode;
}

const LinkSpec& Topology::link(LinkId link) const {
  impl_->check_link(link);
  return impl_->links[static_cast<std::size_t>(link)].spec;
}

NodeId Topology::link_a(LinkId link) const {
  impl_->check_link(link);
  return impl_->links[static_cast<std::size_t>(link)].a;
}

NodeId Topology::link_b(LinkId link) const {
  impl_->check_link(link);
  return impl_->links[static_cast<std::size_t>(link)].b;
}

int Topology::hop_count(NodeId from, NodeId to) const {
  KVSIM_ASSERT(impl_->sealed, "route queries need seal()");
  impl_->check_node(from);
  impl_->check_node(to);
  return impl_->dist[impl_->at(from, to)];
}

bool Topology::reachable(NodeId from, NodeId to) const { return hop_count(from, to) >= 0; }

void Topology::route_into(NodeId from, NodeId to, Route& out) const {
  out.clear();
  const int hops = hop_count(from, to);
  if (hops <= 0) return;
  const Impl& m = *impl_;
  NodeId at = from;
  while (at != to) {
    const Hop h = m.next[m.at(at, to)];
    out.push_back(h);
    const Link& l = m.links[static_cast<std::size_t>(h.link)];
    at = h.forward ? l.b : l.a;
  }
  KVSIM_ASSERT(out.size() == static_cast<std::size_t>(hops), "route length equals the distance");
}

Route Topology::route(NodeId from, NodeId to) const {
  Route r;
  route_into(from, to, r);
  return r;
}

SimTime Topology::route_latency(const Route& route) const {
  SimTime sum = 0;
  for (const Hop& h : route) sum += link(h.link).latency;
  return sum;
}

BytesPerSec Topology::route_bottleneck(const Route& route) const {
  double best = std::numeric_limits<double>::infinity();
  for (const Hop& h : route) {
    const LinkSpec& s = link(h.link);
    best = std::min(best, h.forward ? s.forward.value : s.backward.value);
  }
  return BytesPerSec{best};
}

LinkSpec gpu_host_link(const HostLinkSpec& host_link, std::string name, SimTime latency) {
  LinkSpec s;
  s.name = std::move(name);
  s.forward = host_link.h2d;
  s.backward = host_link.d2h;
  s.both_busy_each = host_link.bidirectional_each;
  s.latency = latency;
  return s;
}

}  // namespace kvsim::hw
