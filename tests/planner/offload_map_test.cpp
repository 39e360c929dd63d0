// Break-even maps: axis terms, contour lines, and maps run end to end through the results
// database, each cell checked against a direct simulation of its scenario.
#include "sim/planner/offload_map.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <set>
#include <string>

#include "sim/core/error.hpp"
#include "sim/io/summary.hpp"
#include "sim/planner/map_report.hpp"
#include "sim/cluster/simulation.hpp"

namespace kvsim::planner {
namespace {

namespace fs = std::filesystem;

const std::string kSource = KVSIM_SOURCE_DIR;
const std::string kSeed = kSource + "/scenarios/seed/4x4090-vram-only.yaml";

std::string temp_db(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("kvsim_map_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path p = dir / name;
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(p.string() + suffix);
  return p.string();
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(MapAxisTerm, LinearIntegerRange) {
  const auto t = parse_axis_term("users=4:64:5", "--x");
  EXPECT_EQ(t.path, "users");
  EXPECT_EQ(t.values, (std::vector<std::string>{"4", "19", "34", "49", "64"}));
  EXPECT_FALSE(t.log);
}

TEST(MapAxisTerm, LogRangeWithUnitsDoublesEachStep) {
  // 16 GiB to 256 GiB in five log-spaced points is a factor 2 per step.
  const auto t = parse_axis_term("hardware.servers.0.host.dram = 16GiB:256GiB:5:log", "--y");
  EXPECT_EQ(t.path, "hardware.servers.0.host.dram");
  EXPECT_EQ(t.values, (std::vector<std::string>{"16GiB", "32GiB", "64GiB", "128GiB", "256GiB"}));
  EXPECT_TRUE(t.log);
  EXPECT_DOUBLE_EQ(t.numbers[2], 64);
}

TEST(MapAxisTerm, ValuesWithUnitsKeepFourSignificantDigits) {
  // 1 to 50 GB/s in 10 log-spaced points: 50^(1/9) = 1.5445... per step.
  const auto t = parse_axis_term("hardware.servers.0.nic.rate=1GB/s:50GB/s:10:log", "--x");
  ASSERT_EQ(t.values.size(), 10U);
  EXPECT_EQ(t.values[0], "1GB/s");
  EXPECT_EQ(t.values[1], "1.544GB/s");
  EXPECT_EQ(t.values[2], "2.385GB/s");
  EXPECT_EQ(t.values[9], "50GB/s");
}

TEST(MapAxisTerm, FractionalRangeAndList) {
  const auto f = parse_axis_term("a.b=0.5:1:3", "--x");
  EXPECT_EQ(f.values, (std::vector<std::string>{"0.5", "0.75", "1"}));
  const auto l = parse_axis_term("dram:kv_offload.tiers.0.capacity=8GiB, 64GiB,1TB", "--x");
  EXPECT_EQ(l.variant, "dram");
  EXPECT_EQ(l.path, "kv_offload.tiers.0.capacity");
  EXPECT_EQ(l.values, (std::vector<std::string>{"8GiB", "64GiB", "1TB"}));
  EXPECT_DOUBLE_EQ(l.numbers[2], 1);
}

TEST(MapAxisTerm, BadTermsNameTheFlagAndTheProblem) {
  auto err = [](const std::string& text) {
    return error_of([&] { (void)parse_axis_term(text, "--x"); });
  };
  EXPECT_NE(err("users").find("--x 'users': expected PATH=FROM:TO:COUNT"), std::string::npos);
  EXPECT_NE(err("users=1:3:5").find("round to the same value"), std::string::npos);
  EXPECT_NE(err("a=1GiB:2GB:3").find("different units"), std::string::npos);
  EXPECT_NE(err("a=0:10:3:log").find("above 0"), std::string::npos);
  EXPECT_NE(err("a=1:10:0").find("COUNT '0'"), std::string::npos);
  EXPECT_NE(err("a=1:10:3:sqrt").find("'log'"), std::string::npos);
  EXPECT_NE(err("a=x:10:3").find("FROM 'x' is not a number"), std::string::npos);
  EXPECT_NE(err("a=1,,2").find("empty value"), std::string::npos);
  EXPECT_NE(err("=1:2:2").find("no path"), std::string::npos);
}

TEST(MapAxis, TermsOfOneAxisMustHaveEqualLength) {
  LoadKnob knob;
  knob.base = 1;
  knob.overrides = [](std::int64_t) { return std::vector<scenario::Override>{}; };
  const auto err =
      error_of([&] { (void)make_map_axis({"a=1:4:4", "b=1,2,3"}, "--y", knob); });
  EXPECT_NE(err.find("3 values, but 'a=1:4:4' has 4"), std::string::npos) << err;
  const auto users = error_of([&] { (void)make_map_axis({"users=0.5,1"}, "--y", knob); });
  EXPECT_NE(users.find("whole numbers"), std::string::npos) << users;
}

TEST(MapAxis, VariantScopedTermsApplyOnlyToTheirVariant) {
  LoadKnob knob;
  knob.base = 8;
  knob.overrides = [](std::int64_t n) {
    return std::vector<scenario::Override>{{"workload.clients.num_clients", std::to_string(n)}};
  };
  const auto a = make_map_axis({"users=8,16", "dram:kv_offload.tiers.0.capacity=8GiB,16GiB"},
                               "--x", knob);
  ASSERT_EQ(a.size(), 2U);
  EXPECT_EQ(a.name(), "users");
  const auto d = a.at(1, "dram");
  ASSERT_EQ(d.size(), 2U);
  EXPECT_EQ(d[0].path, "workload.clients.num_clients");
  EXPECT_EQ(d[0].value, "16");
  EXPECT_EQ(d[1].value, "16GiB");
  EXPECT_EQ(a.at(1, "vram-only").size(), 1U);
}

// Contours of hand-made grids whose crossings are known exactly.
TEST(MapContours, ARampCrossesHalfWay) {
  // Two columns, 0 on the left and 2 on the right: the level 1 line is x = 0.5 from y 0 to 1.
  const std::vector<double> g = {0, 2, 0, 2};
  const auto s = contour_segments(g, 2, 2, 1.0);
  ASSERT_EQ(s.size(), 1U);
  EXPECT_DOUBLE_EQ(std::min(s[0].x0, s[0].x1), 0.5);
  EXPECT_DOUBLE_EQ(std::max(s[0].x0, s[0].x1), 0.5);
  EXPECT_DOUBLE_EQ(std::min(s[0].y0, s[0].y1), 0.0);
  EXPECT_DOUBLE_EQ(std::max(s[0].y0, s[0].y1), 1.0);
  EXPECT_TRUE(contour_segments(g, 2, 2, 3.0).empty());  // above every value: no line
}

TEST(MapContours, APeakIsEnclosedByADiamond) {
  // 0 around a centre of 4: the level 2 line passes half-way along each of the four arms.
  const std::vector<double> g = {0, 0, 0, 0, 4, 0, 0, 0, 0};
  const auto s = contour_segments(g, 3, 3, 2.0);
  ASSERT_EQ(s.size(), 4U);
  std::set<std::pair<double, double>> ends;
  for (const auto& seg : s) {
    ends.insert({seg.x0, seg.y0});
    ends.insert({seg.x1, seg.y1});
  }
  const std::set<std::pair<double, double>> want = {{1, 0.5}, {0.5, 1}, {1.5, 1}, {1, 1.5}};
  EXPECT_EQ(ends, want);
}

TEST(MapContours, GainsWithinTheToleranceCountAsTheLevel) {
  // A flat field of noise around 1x has lines without a tolerance and none with 2 %; a real step
  // from 0.5 to 1.5 keeps its line, half-way.
  const std::vector<double> noise = {0.99, 1.01, 1.015, 0.985, 1.0, 0.99, 1.01, 0.981, 1.019};
  EXPECT_FALSE(contour_segments(noise, 3, 3, 1.0).empty());
  EXPECT_TRUE(contour_segments(noise, 3, 3, 1.0, 0.02).empty());
  const std::vector<double> step = {0.5, 1.5, 0.5, 1.5};
  const auto s = contour_segments(step, 2, 2, 1.0, 0.02);
  ASSERT_EQ(s.size(), 1U);
  EXPECT_DOUBLE_EQ(s[0].x0, 0.5);
}

TEST(MapContours, SaddlesFollowTheCentreAndNaNHasNoLine) {
  // a = c = 2, b = d = 0: the centre (1) is at the level, so it counts as above: the two lines
  // cut off the low corners b and d.
  const std::vector<double> saddle = {2, 0, 0, 2};  // row-major: (0,0)=2 (1,0)=0 (0,1)=0 (1,1)=2
  const auto s = contour_segments(saddle, 2, 2, 1.0);
  ASSERT_EQ(s.size(), 2U);
  for (const auto& seg : s) {
    const double cx = (seg.x0 + seg.x1) / 2;
    const double cy = (seg.y0 + seg.y1) / 2;
    // Each line's middle is nearer a low corner, (1, 0) or (0, 1), than the centre.
    const bool near_b = std::hypot(cx - 1, cy) < 0.5;
    const bool near_d = std::hypot(cx, cy - 1) < 0.5;
    EXPECT_TRUE(near_b || near_d) << cx << "," << cy;
  }
  const std::vector<double> hole = {0, 2, std::nan(""), 2};
  EXPECT_TRUE(contour_segments(hole, 2, 2, 1.0).empty());
}

// A small map of the seed deployment (fewer conversations, so the debug build is quick).
MapOptions small_map(const std::string& db) {
  MapOptions o;
  o.scenario_path = kSeed;
  o.load.catalog_dir = kSource + "/scenarios/catalog";
  o.load.overrides = {{"workload.generation.num_conversations", "32"},
                      {"workload.clients.num_clients", "8"},
                      {"workload.clients.max_active_conversations", "24"},
                      {"workload.generation.prompt_input.num_turns.max", "8"},
                      {"workload.generation.prompt_input.num_turns.min", "4"}};
  o.x = {"users=4,8"};
  o.y = {"workload.generation.prompt_output.num_tokens.max=250,400"};
  o.variant_names = {"vram-only", "nvme-net"};
  o.sweep.db_path = db;
  o.sweep.jobs = 2;
  return o;
}

// The figures of one cell and variant, simulated directly from its scenario (no database).
MetricValues direct(const MapOptions& o, const MapResult& m, std::size_t v, std::size_t ix,
                    std::size_t iy, std::int64_t users) {
  scenario::LoadOptions lo = o.load;
  for (const auto& ov : m.variants[v].overrides) lo.overrides.push_back(ov);
  for (const auto& ov : m.y.at(iy, m.variants[v].name)) lo.overrides.push_back(ov);
  // users: the knob scales the benchmark's clients, active conversations and dataset together
  // (8 clients, 24 active, 32 conversations in the base): by users / 8.
  lo.overrides.push_back({"workload.clients.num_clients", std::to_string(users)});
  lo.overrides.push_back({"workload.clients.max_active_conversations", std::to_string(users * 3)});
  lo.overrides.push_back({"workload.generation.num_conversations", std::to_string(users * 4)});
  (void)ix;
  const auto sc = scenario::load_scenario(o.scenario_path, lo);
  cluster::Simulation sim(sc);
  const auto run = sim.run();
  const double warm =
      sc.workload.warmup_percentages.empty() ? 0.0 : sc.workload.warmup_percentages.front();
  return metric_values(io::summarize(run.requests, run.info, warm), run.info);
}

TEST(OffloadMap, CellsEqualDirectRunsAndARerunRunsNothing) {
  const auto o = small_map(temp_db("cells.db"));
  const MapResult m = run_map(o);
  ASSERT_EQ(m.cells.size(), 4U);
  EXPECT_EQ(m.missing_cells(), 0);
  EXPECT_EQ(m.report.ran_done, 8);
  EXPECT_EQ(m.metric, "requests_per_sec");
  EXPECT_TRUE(m.higher_is_better);
  // Two cells checked against a direct simulation: the value and the gain.
  for (const auto& [ix, iy] : {std::pair<std::size_t, std::size_t>{0, 1}, {1, 0}}) {
    const std::int64_t users = ix == 0 ? 4 : 8;
    const double a = direct(o, m, 0, ix, iy, users).at("requests_per_sec");
    const double b = direct(o, m, 1, ix, iy, users).at("requests_per_sec");
    const MapCell& c = m.cell(ix, iy);
    EXPECT_DOUBLE_EQ(c.variants[0].value, a);
    EXPECT_DOUBLE_EQ(c.variants[1].value, b);
    EXPECT_DOUBLE_EQ(m.gain(c, 0, 1), b / a);
    EXPECT_DOUBLE_EQ(c.variants[1].mean.at("ttft_ms_p90"),
                     direct(o, m, 1, ix, iy, users).at("ttft_ms_p90"));
  }
  const MapResult again = run_map(o);
  EXPECT_EQ(again.report.ran_done, 0);
  EXPECT_EQ(again.report.already_done, 8);
  for (std::size_t k = 0; k < m.cells.size(); ++k)
    EXPECT_EQ(again.cells[k].variants[1].value, m.cells[k].variants[1].value);
}

TEST(OffloadMap, ShardsFillTheMapBetweenThem) {
  auto o = small_map(temp_db("shards.db"));
  o.sweep.shard = Shard{0, 2, "--shard"};
  const MapResult first = run_map(o);
  EXPECT_EQ(first.report.ran_done, 4);
  // Runs i and i + 4 (the same cell, the other variant) share a shard: cells 0 and 2 are done.
  EXPECT_EQ(first.missing_cells(), 2);
  EXPECT_TRUE(first.cells[0].complete());
  EXPECT_FALSE(first.cells[1].complete());
  EXPECT_TRUE(std::isnan(first.gain(first.cells[1], 0, 1)));
  o.sweep.shard = Shard{1, 2, "--shard"};
  const MapResult second = run_map(o);
  EXPECT_EQ(second.report.ran_done, 4);
  EXPECT_EQ(second.missing_cells(), 0);
  const MapResult whole = run_map(small_map(temp_db("whole.db")));
  for (std::size_t k = 0; k < whole.cells.size(); ++k)
    EXPECT_EQ(second.gain(second.cells[k], 0, 1), whole.gain(whole.cells[k], 0, 1));
}

TEST(OffloadMap, SeedsAreAveragedAndTimesCompareInverted) {
  auto o = small_map(temp_db("seeds.db"));
  o.x = {"users=8"};
  o.y = {"workload.generation.prompt_output.num_tokens.max=400"};
  o.seeds = 2;
  o.metric = "ttft_p90";  // vLLM's name; a time, so lower is better
  const MapResult m = run_map(o);
  EXPECT_EQ(m.metric, "ttft_ms_p90");
  EXPECT_FALSE(m.higher_is_better);
  const MapCell& c = m.cell(0, 0);
  ASSERT_EQ(c.variants[0].seed_values.size(), 2U);
  EXPECT_NE(c.variants[0].seed_values[0], c.variants[0].seed_values[1]);
  EXPECT_DOUBLE_EQ(c.variants[0].value,
                   (c.variants[0].seed_values[0] + c.variants[0].seed_values[1]) / 2);
  EXPECT_DOUBLE_EQ(m.gain(c, 0, 1), c.variants[0].value / c.variants[1].value);
  EXPECT_DOUBLE_EQ(m.seed_gain(c, 0, 1, 1),
                   c.variants[0].seed_values[1] / c.variants[1].seed_values[1]);
}

TEST(OffloadMap, SloModeFindsWhatPlanFinds) {
  auto o = small_map(temp_db("slo.db"));
  o.x = {"workload.generation.prompt_output.num_tokens.max=400"};
  o.y = {"engine.max_num_seqs=256"};
  o.slo = parse_slo("ttft_p90<=1500ms");
  o.max_users = 24;
  const MapResult m = run_map(o);
  EXPECT_EQ(m.metric, "max_users");
  ASSERT_EQ(m.missing_cells(), 0);
  // kvsim plan's search, with its own direct runs, on the same scenario and variants.
  PlanOptions p;
  p.scenario_path = o.scenario_path;
  p.load = o.load;
  p.load.overrides.push_back({"workload.generation.prompt_output.num_tokens.max", "400"});
  p.load.overrides.push_back({"engine.max_num_seqs", "256"});
  p.slo = *o.slo;
  p.seeds = 1;
  p.max_load = 24;
  p.jobs = 2;
  p.prices = load_prices(default_prices_path(o.load.catalog_dir));
  const auto base = scenario::load_scenario(o.scenario_path, o.load);
  for (const auto& v : default_variants(base)) {
    if (v.name == "vram-only" || v.name == "nvme-net") p.variants.push_back(v);
  }
  const PlanResult plan = run_plan(p);
  ASSERT_EQ(plan.options.size(), 2U);
  for (const auto& r : plan.options) {
    const std::size_t v = r.variant == "vram-only" ? 0 : 1;
    EXPECT_EQ(m.cell(0, 0).variants[v].value, static_cast<double>(r.load)) << r.variant;
    // A real boundary inside the searched range, not 0 and not the cap.
    EXPECT_GT(r.load, 0);
    EXPECT_LT(r.load, 24);
  }
  // A rerun reads every probe back from the database.
  const MapResult again = run_map(o);
  EXPECT_EQ(again.report.ran_done, 0);
  EXPECT_EQ(again.cell(0, 0).variants[1].value, m.cell(0, 0).variants[1].value);
}

TEST(OffloadMap, BadRequestsAreInputErrorsBeforeAnythingRuns) {
  const std::string db = temp_db("bad.db");
  auto err = [&](const std::function<void(MapOptions&)>& change) {
    auto o = small_map(db);
    change(o);
    return error_of([&] { (void)run_map(o); });
  };
  EXPECT_NE(err([](MapOptions& o) { o.variant_names = {"vram-only", "tape"}; })
                .find("no variant 'tape'"),
            std::string::npos);
  EXPECT_NE(err([](MapOptions& o) { o.variant_names = {"vram-only"}; }).find("at least two"),
            std::string::npos);
  EXPECT_NE(err([](MapOptions& o) { o.y = {"users=2,4"}; }).find("both set"), std::string::npos);
  EXPECT_NE(err([](MapOptions& o) { o.slo = parse_slo("ttft_p90<=1s"); }).find("cannot set them"),
            std::string::npos);
  EXPECT_NE(err([](MapOptions& o) { o.x = {"tape:a.b=1,2"}; }).find("no variant 'tape'"),
            std::string::npos);
  EXPECT_NE(err([](MapOptions& o) { o.metric = "ttft_p91"; }).find("unknown metric"),
            std::string::npos);
  const std::string bad_value = err([](MapOptions& o) { o.y = {"engine.max_num_seqs=8,lots"}; });
  EXPECT_NE(bad_value.find("max_num_seqs"), std::string::npos) << bad_value;
  EXPECT_FALSE(fs::exists(db));  // nothing ran, no database
}

}  // namespace
}  // namespace kvsim::planner
