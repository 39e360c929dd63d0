// kvsim catalog: list the catalog's GPUs, models, drives and storage nodes.
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "hw/pcie.hpp"
#include "sim/cli/command.hpp"
#include "sim/core/error.hpp"
#include "sim/io/json_writer.hpp"

namespace kvsim::cli {
namespace {

std::string human(double v, const char* unit, double scale) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(1) << v / scale << ' ' << unit;
  return os.str();
}

// The catalog as data, in SI units (bytes, bytes/s, FLOP/s, nanoseconds).
void write_catalog_json(std::ostream& out, const scenario::Catalog& cat) {
  io::Json doc = io::json_document("catalog");
  doc["catalog_dir"] = cat.dir;
  io::Json gpus = io::Json::array();
  for (const auto& [name, g] : cat.gpus) {
    gpus.push_back(io::Json{{"name", name},
                            {"memory_bytes", g.memory.value},
                            {"memory_bandwidth_bytes_per_s", io::json_number_or_null(g.memory_bandwidth.value)},
                            {"bf16_dense_flops", io::json_number_or_null(g.bf16_dense.value)},
                            {"fp8_dense_flops", io::json_number_or_null(g.fp8_dense.value)},
                            {"host_link_pcie_gen", hw::pcie_generation(g.host_link.gen)},
                            {"host_link_lanes", g.host_link.lanes}});
  }
  doc["gpus"] = std::move(gpus);
  io::Json models = io::Json::array();
  for (const auto& [name, m] : cat.models) {
    models.push_back(io::Json{{"name", name},
                              {"num_params", m.num_params},
                              {"num_layers", m.num_layers},
                              {"hidden_size", m.hidden_size},
                              {"num_attention_heads", m.num_attention_heads},
                              {"num_kv_heads", m.num_kv_heads},
                              {"head_dim", m.head_dim},
                              {"kv_bytes_per_token", m.kv_bytes_per_token().value},
                              {"weight_bytes", m.weight_bytes().value}});
  }
  doc["models"] = std::move(models);
  io::Json drives = io::Json::array();
  for (const auto& [name, d] : cat.drives) {
    drives.push_back(io::Json{{"name", name},
                              {"read_bytes_per_s", io::json_number_or_null(d.read.value)},
                              {"write_bytes_per_s", io::json_number_or_null(d.write.value)},
                              {"read_latency_ns", d.read_latency}});
  }
  doc["drives"] = std::move(drives);
  io::Json storage = io::Json::array();
  for (const auto& [name, n] : cat.storage) {
    storage.push_back(io::Json{{"name", name},
                               {"nic_bytes_per_s", io::json_number_or_null(n.nic.value)},
                               {"controller_bytes_per_s", io::json_number_or_null(n.controller.value)},
                               {"num_drives", n.num_drives}});
  }
  doc["storage_nodes"] = std::move(storage);
  io::write_json(out, doc, 2);
}

int cmd_catalog(const CommonOptions& co, const std::string& format) {
  const auto cat = load_catalog(co);
  if (format == "json") {
    write_catalog_json(std::cout, cat);
    return 0;
  }
  std::cout << "GPUs (" << cat.dir << "/gpus.yaml)\n";
  std::cout << std::left << std::setw(16) << "name" << std::right << std::setw(12) << "memory" << std::setw(14)
            << "mem BW" << std::setw(14) << "BF16 dense" << std::setw(14) << "FP8 dense" << std::setw(10)
            << "host" << '\n';
  for (const auto& [name, g] : cat.gpus) {
    std::ostringstream host;
    host << "Gen" << hw::pcie_generation(g.host_link.gen) << " x" << g.host_link.lanes;
    std::cout << std::left << std::setw(16) << name << std::right << std::setw(12)
              << human(g.memory.as_double(), "GiB", 1073741824.0) << std::setw(14)
              << human(g.memory_bandwidth.value, "GB/s", 1e9) << std::setw(14)
              << human(g.bf16_dense.value, "TF", 1e12) << std::setw(14)
              << (g.fp8_dense.value > 0 ? human(g.fp8_dense.value, "TF", 1e12) : std::string("-")) << std::setw(10)
              << host.str() << '\n';
  }
  std::cout << "\nModels (" << cat.dir << "/models.yaml)\n";
  std::cout << std::left << std::setw(16) << "name" << std::right << std::setw(10) << "params" << std::setw(8)
            << "layers" << std::setw(8) << "hidden" << std::setw(7) << "heads" << std::setw(9) << "kv_heads"
            << std::setw(10) << "head_dim" << std::setw(14) << "KV/token" << std::setw(12) << "weights" << '\n';
  for (const auto& [name, m] : cat.models) {
    std::cout << std::left << std::setw(16) << name << std::right << std::setw(10)
              << human(static_cast<double>(m.num_params), "B", 1e9) << std::setw(8) << m.num_layers << std::setw(8)
              << m.hidden_size << std::setw(7) << m.num_attention_heads << std::setw(9) << m.num_kv_heads
              << std::setw(10) << m.head_dim << std::setw(14) << human(m.kv_bytes_per_token().as_double(), "KiB", 1024.0)
              << std::setw(12) << human(m.weight_bytes().as_double(), "GiB", 1073741824.0) << '\n';
  }
  std::cout << "\nNVMe drives (" << cat.dir << "/drives.yaml)\n";
  std::cout << std::left << std::setw(18) << "name" << std::right << std::setw(12) << "read" << std::setw(12)
            << "write" << std::setw(14) << "read lat" << '\n';
  for (const auto& [name, d] : cat.drives) {
    std::cout << std::left << std::setw(18) << name << std::right << std::setw(12)
              << human(d.read.value, "GB/s", 1e9) << std::setw(12) << human(d.write.value, "GB/s", 1e9)
              << std::setw(14) << human(static_cast<double>(d.read_latency), "us", 1e3) << '\n';
  }
  std::cout << "\nStorage nodes (" << cat.dir << "/storage.yaml)\n";
  std::cout << std::left << std::setw(26) << "name" << std::right << std::setw(12) << "NIC" << std::setw(14)
            << "controller" << std::setw(8) << "drives" << '\n';
  for (const auto& [name, n] : cat.storage) {
    std::cout << std::left << std::setw(26) << name << std::right << std::setw(12) << human(n.nic.value, "GB/s", 1e9)
              << std::setw(14) << human(n.controller.value, "GB/s", 1e9) << std::setw(8) << n.num_drives << '\n';
  }
  return 0;
}

Command add_catalog(CLI::App& app, CommonOptions& common) {
  auto format = std::make_shared<std::string>("table");
  auto* catalog = app.add_subcommand("catalog", "List the catalog's GPUs, models, drives and storage nodes");
  catalog->add_option("--format", *format, "Output format")->check(CLI::IsMember({"table", "json"}));
  add_catalog_option(catalog, common);
  return {catalog, [format, &common] { return cmd_catalog(common, *format); }};
}

const CommandRegistrar catalog_registrar(90, add_catalog);

}  // namespace
}  // namespace kvsim::cli
