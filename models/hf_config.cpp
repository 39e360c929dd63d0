#include "models/hf_config.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <system_error>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/json_error.hpp"

namespace kvsim::models {

namespace {

using nlohmann::json;
using KeyPath = std::vector<std::string>;

constexpr std::array<const char*, 7> kSupportedTypes = {"llama",     "mistral", "qwen2",    "qwen3",
                                                        "qwen3_moe", "mixtral", "qwen2_moe"};
constexpr std::size_t kNpos = std::string::npos;

struct TextPosition {
  int line = 0;
  int column = 0;
};

// 1-based line and column (in bytes) of byte `offset` of `text`.
TextPosition position_of(const std::string& text, std::size_t offset) {
  offset = std::min(offset, text.size());
  const auto end = text.begin() + static_cast<std::ptrdiff_t>(offset);
  const std::size_t newline = offset == 0 ? kNpos : text.rfind('\n', offset - 1);
  TextPosition p;
  p.line = 1 + static_cast<int>(std::count(text.begin(), end, '\n'));
  p.column = static_cast<int>(newline == kNpos ? offset + 1 : offset - newline);
  return p;
}

std::size_t skip_space(const std::string& t, std::size_t i) {
  while (i < t.size() && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r')) ++i;
  return i;
}

// Index just past the string literal that opens at t[i].
std::size_t string_end(const std::string& t, std::size_t i) {
  for (++i; i < t.size(); ++i) {
    if (t[i] == '\\') {
      ++i;
    } else if (t[i] == '"') {
      return i + 1;
    }
  }
  return t.size();
}

// Offset of the value of member `key` of the object that opens at t[open] (the last one when
// the key repeats, as the parser keeps it); npos when absent. `t` is valid JSON.
std::size_t member_value(const std::string& t, std::size_t open, const std::string& key) {
  if (open >= t.size() || t[open] != '{') return kNpos;
  std::size_t found = kNpos;
  int depth = 0;
  std::size_t i = open + 1;
  while (i < t.size()) {
    const char c = t[i];
    if (c == '"') {
      const std::size_t end = string_end(t, i);
      const std::size_t colon = skip_space(t, end);
      if (depth == 0 && end >= i + 2 && colon < t.size() && t[colon] == ':' &&
          t.compare(i + 1, end - i - 2, key) == 0) {
        found = skip_space(t, colon + 1);
      }
      i = end;
      continue;
    }
    if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (depth == 0) break;
      --depth;
    }
    ++i;
  }
  return found;
}

std::string path_string(const KeyPath& keys) {
  std::string out;
  for (const auto& k : keys) out += (out.empty() ? "" : ".") + k;
  return out;
}

// A value for a message: its JSON type and text, e.g. string "32".
std::string describe(const json& v) {
  if (v.is_null()) return "null";
  std::string text = v.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return std::string(v.type_name()) + " " + text;
}

// The parsed config with its text, to read keys and point at them in diagnostics.
class ConfigReader {
 public:
  ConfigReader(const std::string& text, const std::string& file) : text_(text), file_(file) {
    try {
      root_ = json::parse(text);
    } catch (const json::parse_error& e) {
      const TextPosition p = position_of(text, e.byte > 0 ? e.byte - 1 : 0);
      std::string msg = e.what();
      if (const auto c = msg.find("column"); c != kNpos) {
        if (const auto colon = msg.find(": ", c); colon != kNpos) msg = msg.substr(colon + 2);
      }
      throw InputError(Diagnostic{file, p.line, p.column, "", "invalid JSON: " + msg});
    } catch (const json::exception& e) {
      // A number past a double (1e400) is out_of_range 406, not a parse_error.
      throw InputError(Diagnostic{file, 0, 0, "", "invalid JSON: " + json_error_text(e)});
    }
    if (!root_.is_object()) {
      const TextPosition p = position_of(text, skip_space(text, 0));
      throw InputError(
          Diagnostic{file, p.line, p.column, "", "a config.json must be a JSON object"});
    }
  }

  // Throws an InputError at the value of `keys` (0:0 when the text does not have it); `suffix`
  // extends the path, e.g. "[2]" for an array entry.
  [[noreturn]] void fail(const KeyPath& keys, const std::string& message,
                         const std::string& suffix = "") const {
    std::size_t at = skip_space(text_, 0);
    for (const auto& k : keys) {
      at = member_value(text_, at, k);
      if (at == kNpos) break;
    }
    const TextPosition p = at == kNpos ? TextPosition{} : position_of(text_, at);
    throw InputError(Diagnostic{file_, p.line, p.column, path_string(keys) + suffix, message});
  }

  // The value of `keys`; nullptr when absent or null.
  const json* find(const KeyPath& keys) const {
    const json* node = &root_;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (!node->is_object()) {
        fail(KeyPath(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(i)),
             "must be a JSON object, got " + describe(*node));
      }
      const auto it = node->find(keys[i]);
      if (it == node->end() || it->is_null()) return nullptr;
      node = &*it;
    }
    return node;
  }

  const json& require(const KeyPath& keys) const {
    const json* v = find(keys);
    if (v == nullptr) fail(keys, "missing required key");
    return *v;
  }

  int as_int(const KeyPath& keys, const json& v, int min,
             int max = std::numeric_limits<int>::max()) const {
    if (!v.is_number_integer()) fail(keys, "must be an integer, got " + describe(v));
    const bool too_big =
        v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(max);
    const std::int64_t x = too_big ? std::int64_t{max} + 1 : v.get<std::int64_t>();
    if (x < min) fail(keys, "must be >= " + std::to_string(min) + ", got " + v.dump());
    if (x > max) fail(keys, "must be <= " + std::to_string(max) + ", got " + v.dump());
    return static_cast<int>(x);
  }

  int integer(const KeyPath& keys, int min) const { return as_int(keys, require(keys), min); }

  int integer_or(const KeyPath& keys, int min, int fallback) const {
    const json* v = find(keys);
    return v == nullptr ? fallback : as_int(keys, *v, min);
  }

  bool boolean_or(const KeyPath& keys, bool fallback) const {
    const json* v = find(keys);
    if (v == nullptr) return fallback;
    if (!v->is_boolean()) fail(keys, "must be true or false, got " + describe(*v));
    return v->get<bool>();
  }

  std::string string(const KeyPath& keys) const {
    const json& v = require(keys);
    if (!v.is_string()) fail(keys, "must be a string, got " + describe(v));
    return v.get<std::string>();
  }

  // A list of integers in [min, max]; empty when absent.
  std::vector<int> integer_list(const KeyPath& keys, int min, int max) const {
    const json* v = find(keys);
    if (v == nullptr) return {};
    if (!v->is_array()) fail(keys, "must be a list of integers, got " + describe(*v));
    std::vector<int> out;
    for (std::size_t i = 0; i < v->size(); ++i) {
      const json& e = (*v)[i];
      const std::string at = "[" + std::to_string(i) + "]";
      if (!e.is_number_integer()) fail(keys, "must be an integer, got " + describe(e), at);
      if (e.is_number_unsigned() ? e.get<std::uint64_t>() > static_cast<std::uint64_t>(max)
                                 : (e.get<std::int64_t>() < min || e.get<std::int64_t>() > max)) {
        fail(keys,
             "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got " +
                 e.dump(),
             at);
      }
      out.push_back(e.get<int>());
    }
    return out;
  }

 private:
  const std::string& text_;
  const std::string& file_;
  json root_;
};

// Layers whose MLP is dense: layer l (0-based) when it is in mlp_only_layers, when there are no
// experts, or when (l + 1) % decoder_sparse_step != 0 (vLLM qwen3_moe.py / qwen2_moe.py).
int dense_layer_count(int layers, int experts, int sparse_step, const std::vector<int>& mlp_only) {
  const std::set<int> only(mlp_only.begin(), mlp_only.end());
  int n = 0;
  for (int l = 0; l < layers; ++l) {
    if (only.count(l) > 0 || experts == 0 || (l + 1) % sparse_step != 0) ++n;
  }
  return n;
}

// The 16-bit activation dtype from torch_dtype (or dtype); bf16 when absent.
DType activation_dtype(const ConfigReader& r) {
  const KeyPath key =
      r.find({"torch_dtype"}) != nullptr ? KeyPath{"torch_dtype"} : KeyPath{"dtype"};
  if (r.find(key) == nullptr) return DType::kBf16;
  const std::string d = r.string(key);
  if (d == "bfloat16" || d == "float32") return DType::kBf16;
  if (d == "float16") return DType::kFp16;
  r.fail(key, "unsupported dtype '" + d + "'; supported: bfloat16, float16, float32");
}

// Weight dtype and group size from quantization_config.
void read_quantization(const ConfigReader& r, ModelSpec& m) {
  const std::string qc = "quantization_config";
  if (r.find({qc}) == nullptr) return;
  if (!r.find({qc})->is_object()) {
    r.fail({qc}, "must be a JSON object, got " + describe(*r.find({qc})));
  }
  const std::string method = r.string({qc, "quant_method"});
  if (method == "fp8") {
    m.dtype = DType::kFp8;
  } else if (method == "awq" || method == "gptq") {
    const int bits = r.integer({qc, "bits"}, 1);
    if (bits != 4 && bits != 8) {
      r.fail({qc, "bits"}, method + " quantization needs 4 or 8 bits, got " + std::to_string(bits));
    }
    m.dtype = bits == 4 ? DType::kInt4 : DType::kInt8;
    m.quant_group_size = r.integer_or({qc, "group_size"}, 1, 128);
  } else {
    r.fail({qc, "quant_method"},
           "unsupported quant_method '" + method + "'; supported: fp8, awq, gptq");
  }
}

// Experts, top-k and dense layers of a mixture-of-experts config.
void read_experts(const ConfigReader& r, const std::string& type, ModelSpec& m) {
  if (type == "mixtral") {
    m.num_experts = r.integer({"num_local_experts"}, 1);
    m.moe_intermediate_size = m.intermediate_size;
  } else {
    m.num_experts = r.integer({"num_experts"}, 1);
    m.moe_intermediate_size = r.integer({"moe_intermediate_size"}, 1);
  }
  m.num_experts_per_tok = r.integer({"num_experts_per_tok"}, 1);
  if (m.num_experts_per_tok > m.num_experts) {
    r.fail({"num_experts_per_tok"}, "must be <= the number of experts (" +
                                        std::to_string(m.num_experts) + "), got " +
                                        std::to_string(m.num_experts_per_tok));
  }
  if (type == "mixtral") return;
  if (type == "qwen2_moe") {
    m.shared_expert_intermediate_size = r.integer_or({"shared_expert_intermediate_size"}, 0, 0);
  }
  const int step = r.integer_or({"decoder_sparse_step"}, 1, 1);
  const std::vector<int> mlp_only = r.integer_list({"mlp_only_layers"}, 0, m.num_layers - 1);
  m.num_dense_layers = dense_layer_count(m.num_layers, m.num_experts, step, mlp_only);
  if (m.num_dense_layers >= m.num_layers) {
    r.fail({mlp_only.empty() ? "decoder_sparse_step" : "mlp_only_layers"},
           "leaves no layer with experts (mlp_only_layers and decoder_sparse_step make all " +
               std::to_string(m.num_layers) + " layers dense)");
  }
}

}  // namespace

ModelSpec model_from_hf_config(const std::string& json_text, const std::string& file) {
  const ConfigReader r(json_text, file);
  const std::string type = r.string({"model_type"});
  if (std::find(kSupportedTypes.begin(), kSupportedTypes.end(), type) == kSupportedTypes.end()) {
    std::string names;
    for (const char* t : kSupportedTypes) names += (names.empty() ? "" : ", ") + std::string(t);
    r.fail({"model_type"}, "unsupported model_type '" + type + "'; supported: " + names);
  }

  ModelSpec m;
  const json* name_or_path = r.find({"_name_or_path"});
  if (name_or_path != nullptr) m.hf_id = r.string({"_name_or_path"});
  m.name = m.hf_id.empty() ? std::filesystem::path(file).stem().string() : m.hf_id;
  m.source = "config.json: " + file;

  m.num_layers = r.integer({"num_hidden_layers"}, 1);
  m.hidden_size = r.integer({"hidden_size"}, 1);
  m.num_attention_heads = r.integer({"num_attention_heads"}, 1);
  m.num_kv_heads = r.integer_or({"num_key_value_heads"}, 1, m.num_attention_heads);
  if (m.num_attention_heads % m.num_kv_heads != 0) {
    r.fail({"num_key_value_heads"}, "num_attention_heads (" +
                                        std::to_string(m.num_attention_heads) +
                                        ") must be a multiple of num_key_value_heads (" +
                                        std::to_string(m.num_kv_heads) + ")");
  }
  if (r.find({"head_dim"}) != nullptr) {
    m.head_dim = r.integer({"head_dim"}, 1);
  } else if (m.hidden_size % m.num_attention_heads != 0) {
    r.fail({"hidden_size"}, "without head_dim, hidden_size (" + std::to_string(m.hidden_size) +
                                ") must be a multiple of num_attention_heads (" +
                                std::to_string(m.num_attention_heads) + ")");
  } else {
    m.head_dim = m.hidden_size / m.num_attention_heads;
  }
  m.intermediate_size = r.integer({"intermediate_size"}, 1);
  m.vocab_size = r.integer({"vocab_size"}, 1);
  m.max_position_embeddings = r.integer({"max_position_embeddings"}, 1);
  m.tie_word_embeddings = r.boolean_or({"tie_word_embeddings"}, false);

  m.dtype = activation_dtype(r);
  m.kv_dtype = m.dtype;
  read_quantization(r, m);

  if (type == "qwen2" || type == "qwen2_moe") {
    m.qkv_bias = true;
  } else if (type != "mixtral") {
    m.qkv_bias = r.boolean_or({"attention_bias"}, false);
  }
  m.qk_norm = type == "qwen3" || type == "qwen3_moe";
  if (type == "mixtral" || type == "qwen3_moe" || type == "qwen2_moe") read_experts(r, type, m);

  m.num_params = params_from_shape(m);
  return m;
}

ModelSpec load_hf_config(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw InputError(path, 0, 0, "is a directory, not a config.json file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, 0, "cannot read config file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(path, 0, 0, "cannot read config file");
  return model_from_hf_config(text.str(), path);
}

}  // namespace kvsim::models
