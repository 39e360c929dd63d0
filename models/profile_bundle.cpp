#include "models/profile_bundle.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>
#include <tuple>
#include <utility>

#include "sim/core/error.hpp"

namespace kvsim::models {

namespace {

// One CSV field with its 1-based column in the line.
struct Field {
  std::string text;
  int column = 1;
};

std::vector<Field> split_csv(const std::string& line) {
  std::vector<Field> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    const std::size_t end = comma == std::string::npos ? line.size() : comma;
    out.push_back(Field{line.substr(start, end - start), static_cast<int>(start) + 1});
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string strip(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

double parse_signed(const std::string& file, int line, const Field& f) {
  const std::string t = strip(f.text);
  double v = 0;
  const char* first = t.data();
  const char* last = t.data() + t.size();
  const auto res = std::from_chars(first, last, v);
  if (t.empty() || res.ec != std::errc{} || res.ptr != last || !std::isfinite(v)) {
    throw InputError(file, line, f.column, "expected a number, got '" + t + "'");
  }
  return v;
}

double parse_number(const std::string& file, int line, const Field& f) {
  const double v = parse_signed(file, line, f);
  if (!(v >= 0)) throw InputError(file, line, f.column, "expected a non-negative number");
  return v;
}

std::int64_t parse_count(const std::string& file, int line, const Field& f) {
  const double v = parse_number(file, line, f);
  const auto i = static_cast<std::int64_t>(v);
  if (static_cast<double>(i) != v) {
    throw InputError(file, line, f.column, "expected a whole number, got '" + strip(f.text) + "'");
  }
  return i;
}

// Reads a CSV file: checks the header, hands each non-empty data row to `row` with its line.
template <typename RowFn>
void read_csv(const std::string& path, const std::vector<std::string>& header, RowFn row) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, 0, "cannot open profile file");
  std::string line;
  int n = 0;
  bool seen_header = false;
  while (std::getline(in, line)) {
    ++n;
    if (strip(line).empty()) continue;
    auto fields = split_csv(line);
    if (!seen_header) {
      seen_header = true;
      std::vector<std::string> names;
      names.reserve(fields.size());
      for (const auto& f : fields) names.push_back(strip(f.text));
      if (names.size() < header.size() ||
          !std::equal(header.begin(), header.end(), names.begin())) {
        std::string want;
        for (const auto& h : header) want += (want.empty() ? "" : ",") + h;
        throw InputError(path, n, 1, "expected header '" + want + "'");
      }
      continue;
    }
    row(n, fields);
  }
  if (!seen_header) throw InputError(path, 0, 0, "empty profile file");
}

// Reads a layer,<x>,time_us file into one curve per op.
void read_curves(const std::string& path, const char* x_name,
                 std::map<std::string, ProfileCurve>& out) {
  std::map<std::string, std::map<double, std::pair<double, int>>> points;
  read_csv(path, {"layer", x_name, "time_us"}, [&](int line, const std::vector<Field>& f) {
    if (f.size() != 3) {
      throw InputError(path, line, 1, "expected 3 fields, got " + std::to_string(f.size()));
    }
    const std::string op = strip(f[0].text);
    if (op.empty()) throw InputError(path, line, 1, "empty op name");
    const double x = parse_number(path, line, f[1]);
    if (x <= 0) throw InputError(path, line, f[1].column, "expected a positive count");
    const double t = parse_number(path, line, f[2]);
    auto [it, fresh] = points[op].emplace(x, std::make_pair(t, line));
    if (!fresh) {
      throw InputError(path, line, f[1].column,
                       "duplicate point for " + op + " (first at line " +
                           std::to_string(it->second.second) + ")");
    }
  });
  for (const auto& [op, pts] : points) {
    ProfileCurve c;
    for (const auto& [x, tl] : pts) {
      c.x.push_back(x);
      c.y.push_back(tl.first);
    }
    out[op] = std::move(c);
  }
}

std::string unquote(std::string v) {
  v = strip(v);
  if (v.size() >= 2 && (v.front() == '\'' || v.front() == '"') && v.back() == v.front()) {
    v = v.substr(1, v.size() - 2);
  }
  return v;
}

// meta.yaml: top-level "key: value" lines and one level of indented children, read as
// "parent.child". Lists, anchors and multi-line values are not needed and are skipped.
std::map<std::string, std::string> read_meta(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, 0, "cannot open profile meta file");
  std::map<std::string, std::string> out;
  std::string parent;
  std::string line;
  while (std::getline(in, line)) {
    const std::string s = strip(line);
    if (s.empty() || s[0] == '#') continue;
    const auto colon = s.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = strip(s.substr(0, colon));
    const std::string value = unquote(s.substr(colon + 1));
    const bool indented = line[0] == ' ' || line[0] == '\t';
    if (!indented) {
      parent = key;
      out[key] = value;
    } else if (!parent.empty()) {
      std::string full = parent;
      full += '.';
      full += key;
      out[full] = value;
    }
  }
  return out;
}

}  // namespace

double ProfileCurve::at(double xv) const {
  KVSIM_ASSERT(!x.empty() && x.size() == y.size(), "empty profile curve");
  const std::size_t n = x.size();
  if (n == 1 || xv <= x.front()) return y.front();
  if (xv >= x.back()) {
    // Slope over the last doubling of x.
    std::size_t k = n - 2;
    while (k > 0 && x[k] > x.back() / 2) --k;
    const double slope = (y.back() - y[k]) / (x.back() - x[k]);
    return y.back() + slope * (xv - x.back());
  }
  const auto it = std::upper_bound(x.begin(), x.end(), xv);
  const auto i = static_cast<std::size_t>(it - x.begin());  // x[i-1] <= xv < x[i]
  const double t = (xv - x[i - 1]) / (x[i] - x[i - 1]);
  return y[i - 1] + t * (y[i] - y[i - 1]);
}

double ProfileBundle::skew_alpha() const {
  if (skew_alphas.empty()) return 0;
  std::vector<double> a = skew_alphas;
  std::sort(a.begin(), a.end());
  const std::size_t m = a.size() / 2;
  return a.size() % 2 == 1 ? a[m] : 0.5 * (a[m - 1] + a[m]);
}

const ProfileCurve& ProfileBundle::dense_op(const std::string& op) const {
  const auto it = dense.find(op);
  if (it == dense.end()) throw InputError(tables_dir + "/dense.csv", 0, 0, "missing op '" + op + "'");
  return it->second;
}

const ProfileCurve& ProfileBundle::per_sequence_op(const std::string& op) const {
  const auto it = per_sequence.find(op);
  if (it == per_sequence.end()) {
    throw InputError(tables_dir + "/per_sequence.csv", 0, 0, "missing op '" + op + "'");
  }
  return it->second;
}

int ProfileBundle::layer_kernels() const {
  int n = 0;
  for (const auto& op : layer_ops) n += op.count;
  return n;
}

const std::vector<std::string>& dense_step_ops() {
  static const std::vector<std::string> ops = {"embedding", "final_layernorm"};
  return ops;
}

std::vector<int> profile_bundle_degrees(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(fs::path(dir) / "dense.csv", ec)) return {1};
  std::vector<int> out;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() < 3 || name.compare(0, 2, "tp") != 0) continue;
    int tp = 0;
    const auto res = std::from_chars(name.data() + 2, name.data() + name.size(), tp);
    if (res.ec != std::errc{} || res.ptr != name.data() + name.size() || tp < 1) continue;
    if (fs::exists(entry.path() / "dense.csv", ec)) out.push_back(tp);
  }
  std::sort(out.begin(), out.end());
  return out;
}

ProfileBundle load_profile_bundle(const std::string& folder, int tensor_parallel_size) {
  namespace fs = std::filesystem;
  ProfileBundle b;
  std::string dir = folder;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  // A tpN folder named directly: its parent is the bundle.
  const std::string leaf = fs::path(dir).filename().string();
  int named_tp = 0;
  if (leaf.size() > 2 && leaf.compare(0, 2, "tp") == 0) {
    const auto res = std::from_chars(leaf.data() + 2, leaf.data() + leaf.size(), named_tp);
    if (res.ec != std::errc{} || res.ptr != leaf.data() + leaf.size()) named_tp = 0;
  }
  std::error_code ec;
  if (named_tp > 0 && !fs::exists(fs::path(dir) / "meta.yaml", ec)) {
    if (tensor_parallel_size > 0 && tensor_parallel_size != named_tp) {
      throw InputError(dir, 0, 0,
                       "holds the tables of tensor-parallel degree " + std::to_string(named_tp) +
                           ", not " + std::to_string(tensor_parallel_size));
    }
    b.dir = fs::path(dir).parent_path().string();
    b.tables_dir = dir;
    b.tensor_parallel_size = named_tp;
  } else {
    b.dir = dir;
    const auto degrees = profile_bundle_degrees(dir);
    if (!fs::exists(fs::path(dir) / "meta.yaml", ec) && degrees.empty()) {
      throw InputError(dir, 0, 0, "not a profile bundle: no meta.yaml and no dense.csv (nor tpN/ folders)");
    }
    std::string list;
    for (const int d : degrees) list += (list.empty() ? "" : ", ") + std::to_string(d);
    const bool flat = fs::exists(fs::path(dir) / "dense.csv", ec);
    int tp = tensor_parallel_size;
    if (tp == 0) {
      if (degrees.size() > 1) {
        throw InputError(dir, 0, 0, "holds tables for tensor-parallel degrees " + list + "; say which one");
      }
      tp = degrees.empty() ? 1 : degrees.front();
    }
    if (!degrees.empty() && std::find(degrees.begin(), degrees.end(), tp) == degrees.end()) {
      throw InputError(dir, 0, 0, "has no tables for tensor-parallel degree " + std::to_string(tp) +
                                      " (it holds " + list + ")");
    }
    b.tensor_parallel_size = tp;
    b.tables_dir = flat ? dir : dir + "/tp" + std::to_string(tp);
  }
  const std::string tables = b.tables_dir;

  const auto meta = read_meta(b.dir + "/meta.yaml");
  auto get = [&](const std::string& k) {
    const auto it = meta.find(k);
    return it == meta.end() ? std::string() : it->second;
  };
  b.meta.vllm_version = get("vllm_version");
  b.meta.gpu = get("gpu");
  b.meta.hardware = get("hardware");
  b.meta.profiled_at = get("profiled_at");
  b.meta.model = get("model");
  b.meta.variant = get("variant");
  b.meta.architecture = get("architecture");
  b.meta.enforce_eager = get("engine_effective.enforce_eager") != "false";

  read_curves(tables + "/dense.csv", "tokens", b.dense);
  read_curves(tables + "/per_sequence.csv", "sequences", b.per_sequence);
  for (const auto& op : dense_step_ops()) b.dense_op(op);
  b.per_sequence_op("lm_head");
  b.per_sequence_op("sampler");
  const auto& steps = dense_step_ops();
  for (const auto& [name, curve] : b.dense) {
    if (std::find(steps.begin(), steps.end(), name) != steps.end()) continue;
    b.layer_ops.push_back(DenseLayerOp{name, name == "layernorm" ? 2 : 1});
  }
  for (const char* op : {"layernorm", "qkv_proj", "o_proj"}) b.dense_op(op);
  // The token grid of every op is the same (the fit and the kernel count rely on it).
  for (const auto& op : b.layer_ops) {
    if (b.dense.at(op.name).x != b.dense.at("qkv_proj").x) {
      throw InputError(tables + "/dense.csv", 0, 0, "op '" + op.name + "' is measured at other token counts than qkv_proj");
    }
  }

  const std::string moe_path = tables + "/moe.csv";
  if (fs::exists(moe_path, ec)) {
    std::set<std::pair<std::int64_t, std::int64_t>> seen_moe;
    read_csv(moe_path, {"tokens", "activated_experts", "time_us"}, [&](int line, const std::vector<Field>& f) {
      if (f.size() != 3) throw InputError(moe_path, line, 1, "expected 3 fields, got " + std::to_string(f.size()));
      MoePoint p;
      p.tokens = parse_count(moe_path, line, f[0]);
      p.activated_experts = parse_count(moe_path, line, f[1]);
      p.time_us = parse_number(moe_path, line, f[2]);
      p.line = line;
      if (p.tokens < 1) throw InputError(moe_path, line, f[0].column, "expected at least one token");
      if (p.activated_experts < 1) throw InputError(moe_path, line, f[1].column, "expected at least one expert");
      if (!(p.time_us > 0)) throw InputError(moe_path, line, f[2].column, "expected a positive time");
      if (!seen_moe.emplace(p.tokens, p.activated_experts).second) {
        throw InputError(moe_path, line, 1, "duplicate grid point");
      }
      b.moe.push_back(p);
    });
    if (b.moe.empty()) throw InputError(moe_path, 0, 0, "no MoE points");
  } else if (b.meta.architecture.find("moe") == std::string::npos &&
             b.meta.architecture.find("mixtral") == std::string::npos) {
    // A dense model needs its MLP ops; an MoE model's tables may lack the MoE block (profiled
    // at one degree only): its fit then has none.
    for (const char* op : {"gate_up_proj", "act_fn", "down_proj"}) {
      if (!b.dense.count(op)) {
        throw InputError(tables + "/dense.csv", 0, 0,
                         std::string("missing op '") + op + "' (a dense MLP), and there is no moe.csv");
      }
    }
  }

  const std::string attn_path = tables + "/attention.csv";
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>> seen;
  read_csv(attn_path, {"prefill_chunk", "kv_prefill", "n_decode", "kv_decode", "time_us"},
           [&](int line, const std::vector<Field>& f) {
             if (f.size() != 5) {
               throw InputError(attn_path, line, 1,
                                "expected 5 fields, got " + std::to_string(f.size()));
             }
             AttentionPoint p;
             p.prefill_chunk = parse_count(attn_path, line, f[0]);
             p.kv_prefill = parse_count(attn_path, line, f[1]);
             p.n_decode = parse_count(attn_path, line, f[2]);
             p.kv_decode = parse_count(attn_path, line, f[3]);
             p.time_us = parse_number(attn_path, line, f[4]);
             p.line = line;
             if (p.prefill_chunk == 0 && p.n_decode == 0) {
               throw InputError(attn_path, line, 1, "a point needs a prefill chunk or decodes");
             }
             if (!seen.emplace(p.prefill_chunk, p.kv_prefill, p.n_decode, p.kv_decode).second) {
               throw InputError(attn_path, line, 1, "duplicate grid point");
             }
             b.attention.push_back(p);
           });
  if (b.attention.empty()) throw InputError(attn_path, 0, 0, "no attention points");

  // skew_fit.csv is optional; its alpha column is found by name.
  const std::string skew_path = tables + "/skew_fit.csv";
  std::ifstream skew(skew_path);
  if (skew) {
    std::string line;
    int n = 0;
    std::size_t alpha_col = 0;
    bool header = false;
    while (std::getline(skew, line)) {
      ++n;
      if (strip(line).empty()) continue;
      const auto f = split_csv(line);
      if (!header) {
        header = true;
        const auto it = std::find_if(f.begin(), f.end(),
                                     [](const Field& x) { return strip(x.text) == "alpha"; });
        if (it == f.end()) throw InputError(skew_path, n, 1, "no 'alpha' column");
        alpha_col = static_cast<std::size_t>(it - f.begin());
        continue;
      }
      if (f.size() <= alpha_col) throw InputError(skew_path, n, 1, "too few fields");
      b.skew_alphas.push_back(parse_signed(skew_path, n, f[alpha_col]));
    }
  }

  b.attribution =
      "Kernel profile: LLMServingSim (github.com/casys-kaist/LLMServingSim), MIT licence";
  std::ifstream lic(b.dir + "/LICENSE.txt");
  std::string line;
  while (lic && std::getline(lic, line)) {
    if (strip(line).rfind("Copyright", 0) == 0) {
      b.attribution += ", " + strip(line);
      break;
    }
  }
  return b;
}

}  // namespace kvsim::models
