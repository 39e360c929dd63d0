#pragma once
// The cost model of a deployment option, in US dollars per hour. Rental prices (usd_per_hour)
// count as they are; purchase prices (usd, usd_per_gb, usd_per_tb) are spread evenly over an
// amortisation period: usd_per_hour = usd / amortisation_hours (straight-line, no salvage, no
// interest, no power). An option costs
//   gpus x gpu_price + servers x server + servers x network (when the network store is used)
//   + DRAM tier GB x dram + NVMe tier TB x nvme + storage_node (when the network store is used)
// and serves tokens at output_tokens_per_sec, so
//   $/M output tokens = cost_per_hour / (output_tokens_per_sec x 3600) x 1e6
//   users per $/h     = users carried / cost_per_hour
// Prices and their sources: scenarios/catalog/costs.yaml; docs/planning.md.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/scenario/scenario.hpp"

namespace kvsim::planner {

struct Price {
  double value = 0;    // as the file gives it: $/h for rentals, $ (or $/GB, $/TB) for purchases
  bool capex = false;  // a purchase price, amortised
  std::string source;
};

struct Prices {
  double amortisation_hours = 26280;  // 3 years
  std::map<std::string, Price> gpus;  // by the GPU's catalog name (rtx4090, h100-sxm, ...)
  Price server;                       // per server
  Price dram_per_gb;                  // host DRAM KV tier capacity
  Price nvme_per_tb;                  // NVMe KV tier capacity (local or in the network store)
  Price storage_node;                 // the network store's chassis, without drives
  Price network;                      // per server on the storage network (NIC and switch port)
  std::string source_file;

  // A price in $/h (per unit for dram and nvme): capex / amortisation_hours, rentals as given.
  double per_hour(const Price& p) const;
};

// Reads costs.yaml; throws InputError with file:line:col on a bad or missing entry.
Prices load_prices(const std::string& path);
// The costs.yaml of a catalog folder (scenarios/catalog/costs.yaml).
std::string default_prices_path(const std::string& catalog_dir);
// `KEY=VALUE`: gpus.NAME (rental $/h), server ($/h), dram ($/GB), nvme ($/TB), storage_node ($),
// network ($ per server), amortisation_hours. Throws InputError naming the valid keys.
void apply_price_override(Prices& prices, const std::string& text);

// What an option provisions, read from a resolved scenario.
struct HardwareBill {
  std::vector<std::pair<std::string, int>> gpus;  // GPU catalog name and count, per server group
  int servers = 0;
  double dram_gb = 0;  // host_dram KV tier capacity summed over servers (1e9 bytes)
  double nvme_tb = 0;  // local_nvme tiers summed over servers plus the remote tier (1e12 bytes)
  bool network_store = false;  // a remote KV tier is in use
};
HardwareBill bill_of(const scenario::Scenario& sc);

struct CostBreakdown {
  double usd_per_hour = 0;
  std::vector<std::pair<std::string, double>> items;  // "4 x rtx4090" -> $/h
};
// Throws InputError when a GPU has no price (listing the priced ones).
CostBreakdown hourly_cost(const HardwareBill& bill, const Prices& prices);

// cost_per_hour / (output_tokens_per_sec x 3600) x 1e6; infinity when no tokens flow.
double usd_per_million_tokens(double usd_per_hour, double output_tokens_per_sec);
// users / usd_per_hour; 0 when the cost is 0.
double users_per_usd_hour(double users, double usd_per_hour);

}  // namespace kvsim::planner
