#include "validation/src/chat_stream.hpp"

#include <nlohmann/json.hpp>

namespace kvsim::validation {
namespace {

using nlohmann::json;

std::int64_t int_field(const json& obj, const char* key) {
  if (!obj.is_object()) return -1;
  const auto it = obj.find(key);
  if (it == obj.end() || !it->is_number_integer()) return -1;
  return it->get<std::int64_t>();
}

std::string cut(std::string_view s, std::size_t n) {
  std::string out(s.substr(0, n));
  if (s.size() > n) out += "...";
  return out;
}

}  // namespace

ChatStreamReader::ChatStreamReader() : parser_([this](const SseEvent& e) { on_event(e); }) {}

void ChatStreamReader::feed(std::string_view bytes, SimTime now) {
  now_ = now;
  parser_.feed(bytes);
}

void ChatStreamReader::on_event(const SseEvent& e) {
  if (!result_.error.empty()) return;
  if (result_.done) {
    result_.error = "data after [DONE]";
    return;
  }
  if (e.data == "[DONE]") {
    result_.done = true;
    return;
  }
  json chunk = json::parse(e.data, nullptr, /*allow_exceptions=*/false);
  if (chunk.is_discarded() || !chunk.is_object()) {
    result_.error = "malformed event: " + cut(e.data, 120);
    return;
  }
  if (const auto err = chunk.find("error"); err != chunk.end() && !err->is_null()) {
    result_.error = "server error in stream: " + error_message_of(e.data);
    return;
  }
  if (const auto choices = chunk.find("choices"); choices != chunk.end()) {
    if (!choices->is_array()) {
      result_.error = "malformed event: choices is not a list";
      return;
    }
    if (!choices->empty()) {
      const json& choice = choices->front();
      if (!choice.is_object()) {
        result_.error = "malformed event: a choice is not an object";
        return;
      }
      const auto delta = choice.find("delta");
      if (delta != choice.end() && delta->is_object()) {
        const auto content = delta->find("content");
        if (content != delta->end() && content->is_string()) {
          const auto& text = content->get_ref<const std::string&>();
          if (!text.empty()) {
            if (result_.first_token < 0) result_.first_token = now_;
            result_.last_token = now_;
            result_.chunk_times.push_back(now_);
            ++result_.content_chunks;
            result_.content += text;
          }
        }
      }
      const auto finish = choice.find("finish_reason");
      if (finish != choice.end() && finish->is_string())
        result_.finish_reason = finish->get<std::string>();
    }
  }
  if (const auto usage = chunk.find("usage"); usage != chunk.end() && usage->is_object()) {
    result_.usage_reported = true;
    result_.prompt_tokens = int_field(*usage, "prompt_tokens");
    result_.completion_tokens = int_field(*usage, "completion_tokens");
    if (const auto details = usage->find("prompt_tokens_details"); details != usage->end()) {
      result_.cached_tokens = int_field(*details, "cached_tokens");
    }
  }
}

std::string error_message_of(std::string_view body) {
  const json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_object()) {
    const json* msg = nullptr;
    if (const auto err = j.find("error"); err != j.end()) {
      if (err->is_object() && err->contains("message")) msg = &(*err)["message"];
      if (err->is_string()) msg = &*err;
    } else if (const auto m = j.find("message"); m != j.end()) {
      msg = &*m;
    }
    if (msg != nullptr && msg->is_string()) return cut(msg->get<std::string>(), 200);
  }
  return cut(body, 200);
}

}  // namespace kvsim::validation
