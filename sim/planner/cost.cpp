#include "sim/planner/cost.hpp"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "sim/core/error.hpp"
#include "sim/planner/yaml_fail.hpp"
#include "sim/scenario/suggest.hpp"

namespace kvsim::planner {
namespace {

double number_at(const std::string& file, const YAML::Node& node, const std::string& path) {
  try {
    const double v = node.as<double>();
    if (!std::isfinite(v) || v < 0) fail_at(file, node, path, "expected a price >= 0");
    return v;
  } catch (const YAML::Exception&) {
    fail_at(file, node, path, "expected a number");
  }
}

// {usd_per_hour: X} (rental) or {<capex_key>: X} (purchase), with an optional source.
Price read_price(const std::string& file, const YAML::Node& node, const std::string& path,
                 const std::string& capex_key) {
  if (!node.IsMap())
    fail_at(file, node, path, "expected a map with usd_per_hour or " + capex_key + " and source");
  Price p;
  bool found = false;
  for (const auto& kv : node) {
    const auto key = kv.first.as<std::string>();
    std::string key_path = path;
    key_path += "." + key;
    if (key == "source") {
      p.source = kv.second.as<std::string>();
    } else if (key == "usd_per_hour" || key == capex_key) {
      if (found)
        fail_at(file, kv.first, path, "give either usd_per_hour or " + capex_key + ", not both");
      p.value = number_at(file, kv.second, key_path);
      p.capex = key != "usd_per_hour";
      found = true;
    } else {
      fail_at(file, kv.first, key_path,
              "unknown key; valid keys: usd_per_hour, " + capex_key + ", source");
    }
  }
  if (!found) fail_at(file, node, path, "missing usd_per_hour or " + capex_key);
  return p;
}

const std::vector<std::string>& price_keys() {
  static const std::vector<std::string> keys = {
      "amortisation_hours", "gpus", "server", "dram", "nvme", "storage_node", "network"};
  return keys;
}

}  // namespace

double Prices::per_hour(const Price& p) const {
  return p.capex ? p.value / amortisation_hours : p.value;
}

std::string default_prices_path(const std::string& catalog_dir) {
  return (std::filesystem::path(catalog_dir) / "costs.yaml").string();
}

Prices load_prices(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw InputError(path, 0, 0, "cannot read the price file");
  } catch (const YAML::ParserException& e) {
    throw InputError(path, e.mark.line + 1, e.mark.column + 1, e.msg);
  }
  if (!root.IsMap()) fail_at(path, root, "", "expected a map of prices");
  Prices p;
  p.source_file = path;
  bool have[6] = {};
  for (const auto& kv : root) {
    const auto key = kv.first.as<std::string>();
    if (key == "amortisation_hours") {
      p.amortisation_hours = number_at(path, kv.second, key);
      if (p.amortisation_hours <= 0) fail_at(path, kv.second, key, "must be > 0");
    } else if (key == "gpus") {
      if (!kv.second.IsMap()) fail_at(path, kv.second, key, "expected a map of GPU name to price");
      for (const auto& g : kv.second) {
        const auto name = g.first.as<std::string>();
        p.gpus[name] = read_price(path, g.second, "gpus." + name, "usd");
      }
      have[0] = true;
    } else if (key == "server") {
      p.server = read_price(path, kv.second, key, "usd");
      have[1] = true;
    } else if (key == "dram") {
      p.dram_per_gb = read_price(path, kv.second, key, "usd_per_gb");
      have[2] = true;
    } else if (key == "nvme") {
      p.nvme_per_tb = read_price(path, kv.second, key, "usd_per_tb");
      have[3] = true;
    } else if (key == "storage_node") {
      p.storage_node = read_price(path, kv.second, key, "usd");
      have[4] = true;
    } else if (key == "network") {
      p.network = read_price(path, kv.second, key, "usd");
      have[5] = true;
    } else {
      const std::string near = scenario::closest_name(key, price_keys());
      fail_at(path, kv.first, key,
              "unknown key" + (near.empty() ? "" : " (did you mean '" + near + "'?)") +
                  "; valid keys: " + scenario::join_names(price_keys()));
    }
  }
  for (std::size_t i = 0; i < 6; ++i) {
    if (!have[i]) fail_at(path, root, price_keys()[i + 1], "missing");
  }
  return p;
}

void apply_price_override(Prices& prices, const std::string& text) {
  const auto eq = text.find('=');
  const std::string valid =
      "gpus.NAME ($/h), server ($/h), dram ($/GB), nvme ($/TB), storage_node ($), network ($), "
      "amortisation_hours";
  if (eq == std::string::npos)
    throw InputError("", 0, 0,
                     "--price '" + text + "': expected KEY=VALUE with KEY one of " + valid);
  const std::string key = text.substr(0, eq);
  double v = 0;
  try {
    std::size_t used = 0;
    v = std::stod(text.substr(eq + 1), &used);
    if (used != text.size() - eq - 1 || !std::isfinite(v) || v < 0)
      throw std::invalid_argument("bad");
  } catch (const std::exception&) {
    throw InputError("", 0, 0, "--price '" + text + "': expected a number >= 0 after '='");
  }
  auto set = [&](Price& p, bool capex) {
    p.value = v;
    p.capex = capex;
    p.source = "set on the command line";
  };
  if (key.rfind("gpus.", 0) == 0 && key.size() > 5) {
    set(prices.gpus[key.substr(5)], false);
  } else if (key == "server") {
    set(prices.server, false);
  } else if (key == "dram") {
    set(prices.dram_per_gb, true);
  } else if (key == "nvme") {
    set(prices.nvme_per_tb, true);
  } else if (key == "storage_node") {
    set(prices.storage_node, true);
  } else if (key == "network") {
    set(prices.network, true);
  } else if (key == "amortisation_hours" && v > 0) {
    prices.amortisation_hours = v;
  } else {
    throw InputError("", 0, 0,
                     "--price '" + text + "': unknown key '" + key + "'; valid keys: " + valid);
  }
}

HardwareBill bill_of(const scenario::Scenario& sc) {
  HardwareBill b;
  for (const auto& s : sc.hardware.servers) {
    b.gpus.emplace_back(s.gpu.name.empty() ? std::string("unnamed") : s.gpu.name,
                        s.count * s.gpus_per_server);
    b.servers += s.count;
  }
  if (sc.kv_offload.connector != engine::KvConnector::kNone) {
    for (const auto& t : sc.kv_offload.tiers) {
      const auto bytes = static_cast<double>(t.capacity.value);
      switch (t.kind) {
        case engine::KvTierKind::kHostDram:
          b.dram_gb += bytes / 1e9 * b.servers;
          break;
        case engine::KvTierKind::kLocalNvme:
          b.nvme_tb += bytes / 1e12 * b.servers;
          break;
        case engine::KvTierKind::kRemote:
          b.nvme_tb += bytes / 1e12;
          b.network_store = true;
          break;
      }
    }
  }
  return b;
}

CostBreakdown hourly_cost(const HardwareBill& bill, const Prices& prices) {
  CostBreakdown c;
  auto add = [&c](std::string what, double usd) {
    c.items.emplace_back(std::move(what), usd);
    c.usd_per_hour += usd;
  };
  for (const auto& [name, count] : bill.gpus) {
    const auto it = prices.gpus.find(name);
    if (it == prices.gpus.end()) {
      std::vector<std::string> names;
      for (const auto& [n, p] : prices.gpus) names.push_back(n);
      std::string message =
          "no price for GPU '" + name + "'; priced GPUs: " + scenario::join_names(names);
      message += " (add it under gpus: or pass --price gpus." + name + "=USD_PER_HOUR)";
      throw InputError(prices.source_file, 0, 0, message);
    }
    add(std::to_string(count) + " x " + name, count * prices.per_hour(it->second));
  }
  if (prices.per_hour(prices.server) > 0)
    add(std::to_string(bill.servers) + " x server", bill.servers * prices.per_hour(prices.server));
  if (bill.dram_gb > 0) add("DRAM tier", bill.dram_gb * prices.per_hour(prices.dram_per_gb));
  if (bill.nvme_tb > 0) add("NVMe tier", bill.nvme_tb * prices.per_hour(prices.nvme_per_tb));
  if (bill.network_store) {
    add("storage node", prices.per_hour(prices.storage_node));
    add(std::to_string(bill.servers) + " x network",
        bill.servers * prices.per_hour(prices.network));
  }
  return c;
}

double usd_per_million_tokens(double usd_per_hour, double output_tokens_per_sec) {
  if (!(output_tokens_per_sec > 0)) return std::numeric_limits<double>::infinity();
  return usd_per_hour / (output_tokens_per_sec * 3600.0) * 1e6;
}

double users_per_usd_hour(double users, double usd_per_hour) {
  return usd_per_hour > 0 ? users / usd_per_hour : 0.0;
}

}  // namespace kvsim::planner
