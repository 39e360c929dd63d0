// The cost model by hand: amortised capex, rentals, a scenario's bill of hardware, $/M tokens.
#include "sim/planner/cost.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>

#include "sim/core/error.hpp"
#include "sim/scenario/scenario.hpp"

namespace kvsim::planner {
namespace {

Prices hand_prices() {
  Prices p;
  p.amortisation_hours = 26280;  // 3 years
  p.gpus["rtx4090"] = {0.60, false, ""};
  p.server = {0.0, false, ""};
  p.dram_per_gb = {6.0, true, ""};
  p.nvme_per_tb = {120.0, true, ""};
  p.storage_node = {15000.0, true, ""};
  p.network = {2000.0, true, ""};
  return p;
}

TEST(Cost, AmortisesPurchasesAndAddsRentals) {
  const Prices p = hand_prices();
  EXPECT_DOUBLE_EQ(p.per_hour(p.gpus.at("rtx4090")), 0.60);
  // $15,000 over 26,280 h = $0.570776.../h.
  EXPECT_NEAR(p.per_hour(p.storage_node), 0.5707762557, 1e-9);

  // Four 4090s in one server with a 64 GiB DRAM tier: 64 GiB = 68.719476736 GB x $6 / 26,280 h
  // = $0.0156894/h; total 2.4 + 0.0156894 = $2.4156894/h.
  HardwareBill dram;
  dram.gpus = {{"rtx4090", 4}};
  dram.servers = 1;
  dram.dram_gb = 68.719476736;
  const auto c = hourly_cost(dram, p);
  EXPECT_NEAR(c.usd_per_hour, 2.415689378, 1e-8);
  ASSERT_EQ(c.items.size(), 2U);
  EXPECT_EQ(c.items[0].first, "4 x rtx4090");

  // Two servers of four with an 8 TB network store: 8 x 2.4/... = 8 x 0.6 = 4.8 GPUs,
  // 8 TB x $120 / 26,280 = 0.0365297, storage node 0.5707763, 2 NICs x 2000 / 26,280 = 0.1522070.
  HardwareBill net;
  net.gpus = {{"rtx4090", 8}};
  net.servers = 2;
  net.nvme_tb = 8;
  net.network_store = true;
  EXPECT_NEAR(hourly_cost(net, p).usd_per_hour, 4.8 + 0.0365296804 + 0.5707762557 + 0.1522070015,
              1e-8);
}

TEST(Cost, PerMillionTokensAndUsersPerDollar) {
  // $2.40/h at 1,000 output tokens/s: 3.6 M tokens/h, so $0.6667 per M; 48 users / $2.40 = 20.
  EXPECT_NEAR(usd_per_million_tokens(2.4, 1000), 2.4 / 3.6, 1e-12);
  EXPECT_TRUE(std::isinf(usd_per_million_tokens(2.4, 0)));
  EXPECT_DOUBLE_EQ(users_per_usd_hour(48, 2.4), 20.0);
  EXPECT_DOUBLE_EQ(users_per_usd_hour(48, 0), 0.0);
}

TEST(Cost, UnpricedGpuIsAnInputError) {
  HardwareBill b;
  b.gpus = {{"h100-sxm", 1}};
  b.servers = 1;
  try {
    hourly_cost(b, hand_prices());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no price for GPU 'h100-sxm'"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("rtx4090"), std::string::npos);
  }
}

TEST(Cost, OverridesFromTheCommandLine) {
  Prices p = hand_prices();
  apply_price_override(p, "gpus.rtx4090=0.34");
  apply_price_override(p, "dram=3");
  apply_price_override(p, "amortisation_hours=8760");
  EXPECT_DOUBLE_EQ(p.per_hour(p.gpus.at("rtx4090")), 0.34);
  EXPECT_DOUBLE_EQ(p.per_hour(p.dram_per_gb), 3.0 / 8760);
  EXPECT_THROW(apply_price_override(p, "gpu.rtx4090=1"), InputError);
  EXPECT_THROW(apply_price_override(p, "dram=-1"), InputError);
  EXPECT_THROW(apply_price_override(p, "dram"), InputError);
}

TEST(Cost, ShippedPriceFileLoadsWithSources) {
  const Prices p = load_prices(std::string(KVSIM_SOURCE_DIR) + "/scenarios/catalog/costs.yaml");
  EXPECT_DOUBLE_EQ(p.amortisation_hours, 26280.0);
  ASSERT_EQ(p.gpus.count("rtx4090"), 1U);
  ASSERT_EQ(p.gpus.count("h100-sxm"), 1U);
  for (const auto& [name, price] : p.gpus) EXPECT_FALSE(price.source.empty()) << name;
  EXPECT_FALSE(p.dram_per_gb.source.empty());
  EXPECT_TRUE(p.dram_per_gb.capex);
  EXPECT_FALSE(p.gpus.at("rtx4090").capex);
}

TEST(Cost, BadPriceFileNamesLineAndKey) {
  const std::string path = testing::TempDir() + "/bad_costs.yaml";
  {
    std::ofstream f(path);
    f << "amortisation_hours: 26280\ngpus:\n  rtx4090: {usd_per_hour: 0.6}\nserver: {usd_per_hour: "
         "0}\n"
         "dram: {usd_per_gb: 6}\nnvme: {usd_per_tb: 120}\nstorage_node: {usd: 1}\nnetwork: {usd: "
         "1}\nnetwrok: 3\n";
  }
  try {
    load_prices(path);
    FAIL();
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("bad_costs.yaml:9:1"), std::string::npos) << m;
    EXPECT_NE(m.find("did you mean 'network'"), std::string::npos) << m;
  }
}

TEST(Cost, BillOfTheSeedScenarios) {
  const std::string seed = std::string(KVSIM_SOURCE_DIR) + "/scenarios/seed/";
  // One box of 4 RTX 4090s; the DRAM variant provisions 128 GiB = 137.438953472 GB of host DRAM.
  const auto dram = bill_of(scenario::load_scenario(seed + "4x4090-dram.yaml"));
  ASSERT_EQ(dram.gpus.size(), 1U);
  EXPECT_EQ(dram.gpus[0].first, "rtx4090");
  EXPECT_EQ(dram.gpus[0].second, 4);
  EXPECT_EQ(dram.servers, 1);
  EXPECT_NEAR(dram.dram_gb, 137.438953472, 1e-9);
  EXPECT_FALSE(dram.network_store);
  // The network store variant: an 8 TB remote tier, the store and the box's NIC.
  const auto net = bill_of(scenario::load_scenario(seed + "4x4090-nvme-net.yaml"));
  EXPECT_DOUBLE_EQ(net.nvme_tb, 8.0);
  EXPECT_DOUBLE_EQ(net.dram_gb, 0.0);
  EXPECT_TRUE(net.network_store);
  const auto vram = bill_of(scenario::load_scenario(seed + "4x4090-vram-only.yaml"));
  EXPECT_DOUBLE_EQ(vram.dram_gb + vram.nvme_tb, 0.0);
}

}  // namespace
}  // namespace kvsim::planner
