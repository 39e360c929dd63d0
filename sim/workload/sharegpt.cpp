#include "sim/workload/sharegpt.hpp"

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "sim/core/error.hpp"
#include "sim/core/input_file.hpp"
#include "sim/core/json_error.hpp"
#include "sim/core/json_string.hpp"
#include "sim/workload/json_locator.hpp"
#include "sim/workload/prompt.hpp"
#include "sim/workload/token_count.hpp"
#include "sim/workload/trace_jsonl.hpp"

namespace kvsim::workload {
namespace {

using nlohmann::json;

[[noreturn]] void fail_at(const std::string& text, const std::string& file, const JsonPath& path,
                          const std::string& message) {
  const TextPosition p = text_position(text, locate_json_value(text, path));
  throw InputError(Diagnostic{file, p.line, p.column, json_path_string(path), message});
}

std::int64_t code_points(const std::string& s) {
  std::int64_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0U) != 0x80U ? 1 : 0;
  return n;
}

bool is_ascii(const std::string& s) {
  for (const char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80U) return false;
  }
  return true;
}

struct Turn {
  std::string from;
  std::string value;
  JsonPath path;  // of the turn's object
};

}  // namespace

PyRandom::PyRandom(std::int64_t seed) {
  // init_genrand(19650218) then init_by_array(key), key = 32-bit words of |seed|, least
  // significant first; [0] for 0.
  std::uint64_t n =
      seed < 0 ? static_cast<std::uint64_t>(-(seed + 1)) + 1 : static_cast<std::uint64_t>(seed);
  std::vector<std::uint32_t> key;
  do {
    key.push_back(static_cast<std::uint32_t>(n & 0xFFFFFFFFULL));
    n >>= 32U;
  } while (n != 0);
  mt_[0] = 19650218U;
  for (std::uint32_t i = 1; i < 624; ++i) {
    mt_[i] = 1812433253U * (mt_[i - 1] ^ (mt_[i - 1] >> 30U)) + i;
  }
  std::uint32_t i = 1, j = 0;
  const auto key_length = static_cast<std::uint32_t>(key.size());
  for (std::uint32_t k = std::max<std::uint32_t>(624, key_length); k > 0; --k) {
    mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30U)) * 1664525U)) + key[j] + j;
    ++i;
    ++j;
    if (i >= 624) {
      mt_[0] = mt_[623];
      i = 1;
    }
    if (j >= key_length) j = 0;
  }
  for (std::uint32_t k = 623; k > 0; --k) {
    mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30U)) * 1566083941U)) - i;
    ++i;
    if (i >= 624) {
      mt_[0] = mt_[623];
      i = 1;
    }
  }
  mt_[0] = 0x80000000U;
  index_ = 624;
}

std::uint32_t PyRandom::next_u32() {
  if (index_ >= 624) {
    for (int k = 0; k < 624; ++k) {
      const std::uint32_t y = (mt_[k] & 0x80000000U) | (mt_[(k + 1) % 624] & 0x7FFFFFFFU);
      mt_[k] = mt_[(k + 397) % 624] ^ (y >> 1U) ^ ((y & 1U) != 0 ? 0x9908B0DFU : 0U);
    }
    index_ = 0;
  }
  std::uint32_t y = mt_[index_++];
  y ^= y >> 11U;
  y ^= (y << 7U) & 0x9D2C5680U;
  y ^= (y << 15U) & 0xEFC60000U;
  y ^= y >> 18U;
  return y;
}

std::uint64_t PyRandom::getrandbits(int k) {
  if (k <= 32) return next_u32() >> static_cast<unsigned>(32 - k);
  const std::uint64_t lo = next_u32();
  const std::uint64_t hi = next_u32() >> static_cast<unsigned>(64 - k);
  return lo | (hi << 32U);
}

std::uint64_t PyRandom::randbelow(std::uint64_t n) {
  int k = 0;
  for (std::uint64_t v = n; v != 0; v >>= 1U) ++k;  // n.bit_length()
  std::uint64_t r = getrandbits(k);
  while (r >= n) r = getrandbits(k);
  return r;
}

std::vector<std::size_t> PyRandom::shuffle(std::size_t n) {
  std::vector<std::size_t> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = i;
  for (std::size_t i = n; i-- > 1;) {
    const auto j = static_cast<std::size_t>(randbelow(i + 1));
    std::swap(x[i], x[j]);
  }
  return x;
}

std::vector<std::size_t> PyRandom::sample(std::size_t n, std::size_t k) {
  std::vector<std::size_t> result(k);
  std::size_t setsize = 21;
  if (k > 5) {
    setsize += static_cast<std::size_t>(
        std::pow(4.0, std::ceil(std::log(static_cast<double>(k) * 3.0) / std::log(4.0))));
  }
  if (n <= setsize) {
    std::vector<std::size_t> pool(n);
    for (std::size_t i = 0; i < n; ++i) pool[i] = i;
    for (std::size_t i = 0; i < k; ++i) {
      const auto j = static_cast<std::size_t>(randbelow(n - i));
      result[i] = pool[j];
      pool[j] = pool[n - i - 1];
    }
  } else {
    std::set<std::size_t> selected;
    for (std::size_t i = 0; i < k; ++i) {
      auto j = static_cast<std::size_t>(randbelow(n));
      while (selected.count(j) != 0) j = static_cast<std::size_t>(randbelow(n));
      selected.insert(j);
      result[i] = j;
    }
  }
  return result;
}

std::vector<OpenAiConversation> convert_sharegpt(const std::string& text, const std::string& file,
                                                 const ShareGptFilter& f) {
  if (f.min_turns > 0 && f.max_turns > 0 && f.min_turns > f.max_turns) {
    throw InputError(Diagnostic{"", 0, 0, "sharegpt.min_turns", "must be <= max_turns"});
  }
  if (f.min_content_len > 0 && f.max_content_len > 0 && f.min_content_len > f.max_content_len) {
    throw InputError(
        Diagnostic{"", 0, 0, "sharegpt.min_content_len", "must be <= max_content_len"});
  }
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    const TextPosition p = text_position(text, e.byte > 0 ? e.byte - 1 : 0);
    std::string msg = e.what();
    if (const auto c = msg.find("column"); c != std::string::npos) {
      if (const auto colon = msg.find(": ", c); colon != std::string::npos)
        msg = msg.substr(colon + 2);
    }
    throw InputError(Diagnostic{file, p.line, p.column, "", "invalid JSON: " + msg});
  } catch (const json::exception& e) {
    // A number past a double (1e400) is out_of_range 406, not a parse_error.
    throw InputError(Diagnostic{file, 0, 0, "", std::string("invalid JSON: ") + json_error_text(e)});
  }
  if (!doc.is_array()) fail_at(text, file, {}, "Input file should contain a list of dicts");

  PyRandom rng(f.seed);
  const std::vector<std::size_t> order = rng.shuffle(doc.size());
  std::vector<std::pair<std::string, std::vector<std::vector<Turn>>>> parts;
  std::map<std::string, std::size_t> part_index;
  for (const std::size_t idx : order) {
    const JsonPath path{JsonPathItem::at(idx)};
    const json& item = doc[idx];
    if (!item.is_object())
      fail_at(text, file, path, "an item must be an object {\"id\", \"conversations\"}");
    if (!item.contains("id")) fail_at(text, file, path, "Missing key 'id'");
    if (!item.contains("conversations")) fail_at(text, file, path, "Missing key 'conversations'");
    JsonPath id_path = path;
    id_path.push_back(JsonPathItem::member("id"));
    if (!item.at("id").is_string()) fail_at(text, file, id_path, "must be a string");
    const std::string id = item.at("id").get<std::string>();
    const auto us = id.find('_');
    if (us == std::string::npos || id.find('_', us + 1) != std::string::npos) {
      fail_at(
          text, file, id_path,
          "'" + id + "' must be <conversation>_<part> with exactly one '_' (vLLM splits it there)");
    }
    const std::string conv_id = id.substr(0, us);
    JsonPath conv_path = path;
    conv_path.push_back(JsonPathItem::member("conversations"));
    const json& turns_json = item.at("conversations");
    if (!turns_json.is_array())
      fail_at(text, file, conv_path, "must be a list of {\"from\", \"value\"}");
    std::vector<Turn> new_turns;
    for (std::size_t t = 0; t < turns_json.size(); ++t) {
      JsonPath tp = conv_path;
      tp.push_back(JsonPathItem::at(t));
      const json& turn = turns_json[t];
      if (!turn.is_object() || !turn.contains("from") || !turn.contains("value")) {
        fail_at(text, file, tp,
                "Invalid conversation ID " + conv_id + " - missing 'from' or 'value'");
      }
      for (const char* key : {"from", "value"}) {
        if (!turn.at(key).is_string()) {
          JsonPath kp = tp;
          kp.push_back(JsonPathItem::member(key));
          fail_at(text, file, kp, "must be a string");
        }
      }
      new_turns.push_back(
          Turn{turn.at("from").get<std::string>(), turn.at("value").get<std::string>(), tp});
    }
    const auto [it, inserted] = part_index.emplace(conv_id, parts.size());
    if (inserted) {
      parts.emplace_back(conv_id, std::vector<std::vector<Turn>>{});
    } else if (!parts[it->second].second.empty() && !new_turns.empty()) {
      if (parts[it->second].second.back().back().from == new_turns.front().from)
        new_turns.erase(new_turns.begin());
    }
    if (!new_turns.empty()) parts[it->second].second.push_back(std::move(new_turns));
  }

  std::vector<OpenAiConversation> kept;
  for (auto& [conv_id, conv_parts] : parts) {
    std::vector<Turn> turns;
    for (auto& p : conv_parts) {
      for (auto& t : p) turns.push_back(std::move(t));
    }
    if (turns.empty()) continue;
    if (f.min_turns > 0 && turns.size() < static_cast<std::size_t>(f.min_turns)) continue;
    OpenAiConversation conv;
    conv.id = conv_id;
    for (std::size_t i = 0; i < turns.size(); ++i) {
      const std::string& from = turns[i].from;
      std::string role;
      if (from == "human" || from == "user") {
        role = "user";
      } else if (from == "gpt" || from == "bing" || from == "chatgpt" || from == "bard") {
        role = "assistant";
      } else if (from == "system") {
        role = "system";
      } else {
        JsonPath fp = turns[i].path;
        fp.push_back(JsonPathItem::member("from"));
        std::string message = "Invalid conversation ID " + conv_id;
        message += " - 'from'='" + from + "' is invalid";
        fail_at(text, file, fp, message);
      }
      if (i == 0 && role != "user") continue;
      if (f.max_turns > 0 && i >= static_cast<std::size_t>(f.max_turns)) break;
      conv.messages.push_back(OpenAiMessage{role, std::move(turns[i].value)});
    }
    if (conv.messages.empty()) continue;
    bool valid = true;
    bool user_turn = true;
    for (const OpenAiMessage& m : conv.messages) {
      if (m.role != (user_turn ? "user" : "assistant")) {
        valid = false;
        break;
      }
      user_turn = !user_turn;
      const std::int64_t len = code_points(m.content);
      valid = !(f.min_content_len > 0 && len < f.min_content_len) &&
              !(f.max_content_len > 0 && len > f.max_content_len) &&
              (!f.exclude_non_english || is_ascii(m.content));
      if (!valid) break;
    }
    if (valid) kept.push_back(std::move(conv));
  }
  if (kept.empty())
    throw InputError(Diagnostic{file, 0, 0, "", "Final number of conversations is zero"});
  if (f.max_items > 0 && kept.size() > static_cast<std::size_t>(f.max_items)) {
    std::vector<OpenAiConversation> sampled;
    for (const std::size_t i : rng.sample(kept.size(), static_cast<std::size_t>(f.max_items))) {
      sampled.push_back(std::move(kept[i]));
    }
    kept = std::move(sampled);
  }
  return kept;
}

std::vector<OpenAiConversation> read_sharegpt(const std::string& path,
                                              const ShareGptFilter& filter) {
  return convert_sharegpt(read_input(path, "the ShareGPT file"), input_display_name(path), filter);
}

std::string openai_conversations_json(const std::vector<OpenAiConversation>& conversations) {
  if (conversations.empty()) return "[]";
  std::string out = "[";
  for (std::size_t c = 0; c < conversations.size(); ++c) {
    out += c == 0 ? "\n  {\n    \"id\": " : ",\n  {\n    \"id\": ";
    append_json_string(out, conversations[c].id);
    out += ",\n    \"messages\": ";
    const auto& msgs = conversations[c].messages;
    if (msgs.empty()) {
      out += "[]";
    } else {
      out += "[";
      for (std::size_t m = 0; m < msgs.size(); ++m) {
        out += m == 0 ? "\n      {\n        \"role\": " : ",\n      {\n        \"role\": ";
        append_json_string(out, msgs[m].role);
        out += ",\n        \"content\": ";
        append_json_string(out, msgs[m].content);
        out += "\n      }";
      }
      out += "\n    ]";
    }
    out += "\n  }";
  }
  out += "\n]";
  return out;
}

std::vector<Conversation> to_conversations(const std::vector<OpenAiConversation>& conversations) {
  std::vector<Conversation> out;
  for (const OpenAiConversation& oc : conversations) {
    Conversation conv;
    conv.id = oc.id;
    const std::uint64_t key = conversation_key(conv.id);
    const std::size_t n = oc.messages.size() - oc.messages.size() % 2;
    for (std::size_t i = 0; i < n; ++i) {
      const auto role = i % 2 == 0 ? Message::Role::kUser : Message::Role::kAssistant;
      conv.messages.push_back(make_message(role, key, i, estimate_tokens(oc.messages[i].content)));
    }
    if (!conv.messages.empty()) out.push_back(std::move(conv));
  }
  return out;
}

Trace conversations_to_trace(const std::vector<Conversation>& conversations,
                             const ChatTemplate& chat_template, int hash_block_tokens,
                             const std::string& format, const std::string& source) {
  Trace trace = detail::hashed_trace(format, source, hash_block_tokens);
  std::map<std::uint64_t, std::int64_t> ids;
  std::int64_t next_id = 0;
  std::vector<std::int64_t> parents;
  for (std::size_t c = 0; c < conversations.size(); ++c) {
    const Conversation& conv = conversations[c];
    std::int64_t previous = -1;
    for (std::size_t m = 0; m + 1 < conv.messages.size(); m += 2) {
      const RequestSpec spec = build_turn_request(conv, m + 1, chat_template);
      TraceRequest r;
      r.input_length = total_tokens(spec.prompt);
      r.output_length = spec.output_tokens;
      for (const std::uint64_t h : block_hashes(spec.prompt, hash_block_tokens)) {
        const auto [it, inserted] = ids.emplace(h, next_id);
        if (inserted) ++next_id;
        r.hash_ids.push_back(it->second);
      }
      if (r.input_length % hash_block_tokens != 0) r.hash_ids.push_back(next_id++);
      r.conversation = static_cast<std::int64_t>(c);
      r.turn = static_cast<int>(m / 2 + 1);
      parents.push_back(previous);
      previous = static_cast<std::int64_t>(trace.requests.size());
      trace.requests.push_back(std::move(r));
    }
  }
  sort_trace(trace, std::move(parents));
  return trace;
}

}  // namespace kvsim::workload
