#include "models/profile_model.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "models/profile_bundle.hpp"
#include "models/step_overheads.hpp"
#include "sim/core/error.hpp"
#include "tests/models/model_shapes.hpp"

namespace kvsim::models {
namespace {

const std::string kBundle =
    std::string(KVSIM_SOURCE_DIR) + "/models/profiles/rtx4090-llama-3.1-8b-vllm0.19";

// The bundle's CSVs read here with a reader of the test's own, so expected values do not go
// through the code under test.
std::vector<std::vector<std::string>> read_rows(const std::string& file) {
  std::ifstream in(kBundle + "/" + file);
  std::vector<std::vector<std::string>> rows;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string x;
    while (std::getline(ss, x, ',')) f.push_back(x);
    rows.push_back(f);
  }
  return rows;
}

// op -> tokens -> us
std::map<std::string, std::map<long, double>> read_op_table(const std::string& file) {
  std::map<std::string, std::map<long, double>> t;
  for (const auto& r : read_rows(file)) t[r[0]][std::stol(r[1])] = std::stod(r[2]);
  return t;
}

using AttnKey = std::tuple<long, long, long, long>;
std::map<AttnKey, double> read_attention() {
  std::map<AttnKey, double> t;
  for (const auto& r : read_rows("attention.csv")) {
    t[{std::stol(r[0]), std::stol(r[1]), std::stol(r[2]), std::stol(r[3])}] = std::stod(r[4]);
  }
  return t;
}

const ProfileBundle& bundle() {
  static const ProfileBundle b = load_profile_bundle(kBundle);
  return b;
}

ProfileParams eager() { return ProfileParams{}; }

BatchShape decodes(int n, std::int64_t context) {
  BatchShape b;
  b.decode_contexts.assign(static_cast<std::size_t>(n), context);
  return b;
}

// Smallest dense op time at 1 token: the eager per-kernel floor (by hand from dense.csv:
// layernorm 1.85083 us).
double floor_us() {
  double m = 1e9;
  for (const auto& [op, pts] : read_op_table("dense.csv")) m = std::min(m, pts.at(1));
  return m;
}

TEST(ProfileBundle, ReadsMetaAndTables) {
  const auto& b = bundle();
  EXPECT_EQ(b.meta.vllm_version, "0.19.0");
  EXPECT_EQ(b.meta.gpu, "NVIDIA GeForce RTX 4090");
  EXPECT_EQ(b.meta.profiled_at, "2026-08-17T19:43:32+00:00");
  EXPECT_TRUE(b.meta.enforce_eager);
  EXPECT_EQ(b.dense.size(), 9u);
  EXPECT_EQ(b.attention.size(), read_rows("attention.csv").size());
  EXPECT_NE(b.attribution.find("MIT"), std::string::npos);
  EXPECT_NE(b.attribution.find("LLMServingSim"), std::string::npos);
  EXPECT_FALSE(b.skew_alphas.empty());
}

// A step of 2,048 prefill tokens: dense time is exactly embedding + final_layernorm + 32 x
// (2 x layernorm + qkv_proj + rotary_emb + o_proj + gate_up_proj + act_fn + down_proj) at 2,048
// tokens, summed here from dense.csv.
TEST(ProfileModel, DenseAtGridPointIsTheCsvSum) {
  const auto t = read_op_table("dense.csv");
  double layer = 2 * t.at("layernorm").at(2048);
  for (const char* op :
       {"qkv_proj", "rotary_emb", "o_proj", "gate_up_proj", "act_fn", "down_proj"}) {
    layer += t.at(op).at(2048);
  }
  const double expected_us =
      32 * layer + t.at("embedding").at(2048) + t.at("final_layernorm").at(2048);
  const ProfileModel m(bundle(), testing::llama_31_8b());
  BatchShape b;
  b.prefills.push_back({2048, 0});
  const auto s = m.step_time(b);
  EXPECT_NEAR(s.dense_s * 1e6, expected_us, expected_us * 1e-12);
  // The attention of that chunk is 32 x the row (2048, 0, 0, 0).
  const double attn_us = 32 * read_attention().at({2048, 0, 0, 0});
  EXPECT_NEAR(s.attention_s * 1e6, attn_us, attn_us * 1e-12);
  // lm_head + sampler for one sequence, once per step.
  const auto ps = read_op_table("per_sequence.csv");
  const double lm_us = ps.at("lm_head").at(1) + ps.at("sampler").at(1);
  EXPECT_NEAR(s.lm_head_s * 1e6, lm_us, lm_us * 1e-12);
  // Kernels only: the overheads are models/step_overheads.hpp's, which counts the launches:
  // 8 layer ops (layernorm twice) per layer, embedding and final norm, one attention per layer.
  EXPECT_EQ(s.gpu_overhead_s, 0.0);
  EXPECT_EQ(s.overhead_s, 0.0);
  EXPECT_EQ(s.forward_kernels, 32.0 * 8 + 2);
  EXPECT_EQ(s.attention_kernels, 32.0);
  EXPECT_EQ(s.logits_kernels, kLogitsKernels);
}

// A mixed batch on the grid: one 512-token chunk over 1,024 cached tokens with 8 decodes at
// 2,048 is 32 x that row of attention.csv; lm_head at 9 sequences is the two rows at 9.
TEST(ProfileModel, MixedAttentionAtGridPoint) {
  const ProfileModel m(bundle(), testing::llama_31_8b());
  BatchShape b = decodes(8, 2048);
  b.prefills.push_back({512, 1024});
  const auto s = m.step_time(b);
  const double attn_us = 32 * read_attention().at({512, 1024, 8, 2048});
  EXPECT_NEAR(s.attention_s * 1e6, attn_us, attn_us * 1e-12);
  const auto ps = read_op_table("per_sequence.csv");
  const double lm_us = ps.at("lm_head").at(9) + ps.at("sampler").at(9);
  EXPECT_NEAR(s.lm_head_s * 1e6, lm_us, lm_us * 1e-12);
}

// Pure decode of 32 requests at 4,096 reproduces the rows: the tables hold kernel durations, which
// a CUDA graph does not shorten (it removes launch gaps, models/step_overheads.hpp).
TEST(ProfileModel, PureDecodeReproducesTheRows) {
  const auto t = read_op_table("dense.csv");
  double layer = 2 * t.at("layernorm").at(32);
  for (const char* op :
       {"qkv_proj", "rotary_emb", "o_proj", "gate_up_proj", "act_fn", "down_proj"}) {
    layer += t.at(op).at(32);
  }
  const double dense_us = 32 * layer + t.at("embedding").at(32) + t.at("final_layernorm").at(32);
  const double attn_us = 32 * read_attention().at({0, 0, 32, 4096});

  const ProfileModel eager_model(bundle(), testing::llama_31_8b(), eager());
  const auto e = eager_model.step_time(decodes(32, 4096));
  EXPECT_NEAR(e.dense_s * 1e6, dense_us, dense_us * 1e-12);
  EXPECT_NEAR(e.attention_s * 1e6, attn_us, attn_us * 1e-12);
  EXPECT_DOUBLE_EQ(eager_model.launch_floor_us(), floor_us());
}

// Between grid points the value lies between its neighbours; in a kv axis the interpolation is
// linear in log2, so at the geometric mean of two grid points it is their arithmetic mean.
TEST(ProfileModel, InterpolationBetweenNeighbours) {
  const auto t = read_op_table("dense.csv");
  const ProfileModel m(bundle(), testing::llama_31_8b(), eager());
  // Dense curves are linear in tokens between grid points: 2,040 is halfway from 2,032 to 2,048.
  EXPECT_NEAR(bundle().dense_op("qkv_proj").at(2040),
              0.5 * (t.at("qkv_proj").at(2032) + t.at("qkv_proj").at(2048)), 1e-9);
  auto chunk = [](std::int64_t n) {
    BatchShape x;
    x.prefills.push_back({n, 0});
    return x;
  };
  const double d2032 = m.step_time(chunk(2032)).dense_s;
  const double d2048 = m.step_time(chunk(2048)).dense_s;
  const double d2040 = m.step_time(chunk(2040)).dense_s;
  EXPECT_GT(d2040, std::min(d2032, d2048));
  EXPECT_LT(d2040, std::max(d2032, d2048));

  const auto a = read_attention();
  const double lo = a.at({0, 0, 8, 2048});
  const double hi = a.at({0, 0, 8, 4096});
  EXPECT_NEAR(m.attention_layer_us(0, 0, 8, 2048 * std::sqrt(2.0)), 0.5 * (lo + hi), 1e-9);
  const double mid = m.attention_layer_us(0, 0, 8, 3000);
  EXPECT_GT(mid, lo);
  EXPECT_LT(mid, hi);

  // A mixed point inside a cell of all four axes lies within the range of its 16 corners.
  double cmin = 1e300, cmax = 0;
  for (long c : {512L, 1024L})
    for (long k : {2048L, 4096L})
      for (long n : {4L, 8L})
        for (long d : {1024L, 2048L}) {
          cmin = std::min(cmin, a.at({c, k, n, d}));
          cmax = std::max(cmax, a.at({c, k, n, d}));
        }
  const double v = m.attention_layer_us(700, 3000, 6, 1500);
  EXPECT_GE(v, cmin);
  EXPECT_LE(v, cmax);
}

// Two prefill chunks: the larger (1,024 new, 0 cached: 524,800 pairs against 163,968) is timed
// as the grid row, the other adds its prefill-only row minus the smallest prefill row (16, 0).
TEST(ProfileModel, SeveralChunksShareOneLaunch) {
  const auto a = read_attention();
  const double expected_layer =
      a.at({1024, 0, 0, 0}) + a.at({256, 512, 0, 0}) - a.at({16, 0, 0, 0});
  const ProfileModel m(bundle(), testing::llama_31_8b());
  BatchShape b;
  b.prefills.push_back({256, 512});
  b.prefills.push_back({1024, 0});
  EXPECT_NEAR(m.step_time(b).attention_s * 1e6, 32 * expected_layer, 1e-6);
}

// Decodes at 1,024 and 3,072: timed at mean 2,048 + alpha x 1,024, alpha the median of the
// alpha column of skew_fit.csv (computed here); with skew_blend off, at 2,048 exactly.
TEST(ProfileModel, UnequalDecodeContexts) {
  std::vector<double> alphas;
  std::ifstream in(kBundle + "/skew_fit.csv");
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string field;
    for (int i = 0; i < 6; ++i) std::getline(ss, field, ',');  // alpha is the sixth column
    alphas.push_back(std::stod(field));
  }
  std::sort(alphas.begin(), alphas.end());
  const std::size_t h = alphas.size() / 2;
  const double alpha = alphas.size() % 2 ? alphas[h] : 0.5 * (alphas[h - 1] + alphas[h]);
  EXPECT_GT(alpha, 0.0);
  EXPECT_LT(alpha, 1.0);

  BatchShape b;
  b.decode_contexts = {1024, 3072};
  const ProfileModel m(bundle(), testing::llama_31_8b(), eager());
  EXPECT_DOUBLE_EQ(m.skew_alpha(), alpha);
  EXPECT_NEAR(m.step_time(b).attention_s * 1e6,
              32 * m.attention_layer_us(0, 0, 2, 2048 + alpha * 1024), 1e-9);
  ProfileParams p = eager();
  p.skew_blend = false;
  const ProfileModel plain(bundle(), testing::llama_31_8b(), p);
  EXPECT_NEAR(plain.step_time(b).attention_s * 1e6, 32 * read_attention().at({0, 0, 2, 2048}),
              1e-9);
}

// One request decoding alone on a 4090 runs at ~55-57 tok/s by the roofline of docs/sources.md
// A3 (derived, not measured); served (kernels, launch gaps, step gap), with the host time hidden
// (async scheduling) or not, it must lie within 55-62 tok/s.
TEST(ProfileModel, Batch1DecodeOn4090) {
  GraphPolicy sync;
  sync.async_scheduling = false;
  const ServedStepModel m(std::make_unique<ProfileModel>(bundle(), testing::llama_31_8b()), {}, sync);
  for (std::int64_t ctx : {128, 1024, 4096}) {
    const auto s = m.step_time(decodes(1, ctx));
    const double sync_tok_s = 1.0 / s.total_s();
    const double async_tok_s = 1.0 / (s.total_s() - s.overhead_s);
    EXPECT_GE(sync_tok_s, 55.0) << ctx;
    EXPECT_LE(sync_tok_s, 62.0) << ctx;
    EXPECT_GE(async_tok_s, 55.0) << ctx;
    EXPECT_LE(async_tok_s, 62.0) << ctx;
  }
}

TEST(ProfileModel, EmptyBatchTakesZeroAndBeyondGridGrows) {
  const ProfileModel m(bundle(), testing::llama_31_8b());
  EXPECT_EQ(m.step_time(BatchShape{}).total_s(), 0.0);
  // Beyond the grid (32k context, 512 decodes) time keeps growing.
  EXPECT_GT(m.step_time(decodes(1, 32768)).attention_s, m.step_time(decodes(1, 16384)).attention_s);
  EXPECT_GT(m.step_time(decodes(512, 1024)).total_s(), m.step_time(decodes(256, 1024)).total_s());
  EXPECT_NE(m.describe().find("profile("), std::string::npos);
}

// A copy of the bundle with one file changed, in a fresh folder.
std::string bundle_copy(const std::string& name, const std::string& file,
                        const std::function<std::string(const std::string&)>& edit) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(kBundle)) {
    const fs::path dst = dir / e.path().filename();
    if (e.path().filename() == file) {
      std::ifstream in(e.path());
      std::stringstream ss;
      ss << in.rdbuf();
      std::ofstream(dst) << edit(ss.str());
    } else {
      fs::copy_file(e.path(), dst);
    }
  }
  return dir.string();
}

std::string replace_line(const std::string& text, int line_no, const std::string& with) {
  std::stringstream in(text);
  std::string out, line;
  int n = 0;
  while (std::getline(in, line)) out += (++n == line_no ? with : line) + "\n";
  return out;
}

TEST(ProfileBundle, MalformedRowNamesFileAndLine) {
  const auto dir = bundle_copy("kvsim_profile_bad_dense", "dense.csv", [](const std::string& s) {
    return replace_line(s, 3, "act_fn,2,fast");
  });
  try {
    load_profile_bundle(dir);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("dense.csv:3:10: error: expected a number"),
              std::string::npos)
        << e.what();
  }
  const auto dir2 = bundle_copy("kvsim_profile_bad_attn", "attention.csv",
                                [](const std::string& s) { return replace_line(s, 5, "0,0,1"); });
  try {
    load_profile_bundle(dir2);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("attention.csv:5:1: error: expected 5 fields"),
              std::string::npos)
        << e.what();
  }
}

TEST(ProfileModel, IncompleteGridIsAnInputError) {
  // Line 2 of attention.csv is (0,0,1,16): drop it from the decode-only grid.
  const auto dir = bundle_copy("kvsim_profile_hole", "attention.csv", [](const std::string& s) {
    std::stringstream in(s);
    std::string out, line;
    int n = 0;
    while (std::getline(in, line)) {
      if (++n != 2) out += line + "\n";
    }
    return out;
  });
  const auto b = load_profile_bundle(dir);
  EXPECT_THROW(ProfileModel(b, testing::llama_31_8b()), InputError);
}

}  // namespace
}  // namespace kvsim::models
