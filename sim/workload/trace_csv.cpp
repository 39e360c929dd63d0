#include "sim/workload/trace_csv.hpp"

#include <charconv>
#include <cmath>

#include "sim/core/error.hpp"

namespace kvsim::workload::detail {
namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

}  // namespace

std::vector<CsvField> split_csv(const std::string& line, const std::string& file, int line_no) {
  std::vector<CsvField> out;
  std::size_t i = 0;
  while (true) {
    CsvField f;
    f.column = static_cast<int>(i) + 1;
    if (i < line.size() && line[i] == '"') {
      ++i;
      bool closed = false;
      while (i < line.size()) {
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            f.text += '"';
            i += 2;
            continue;
          }
          closed = true;
          ++i;
          break;
        }
        f.text += line[i++];
      }
      if (!closed)
        throw InputError(Diagnostic{file, line_no, f.column, "", "unterminated quoted field"});
      while (i < line.size() && line[i] != ',') ++i;  // text after the closing quote is ignored
    } else {
      const auto comma = line.find(',', i);
      const std::size_t end = comma == std::string::npos ? line.size() : comma;
      f.text = line.substr(i, end - i);
      i = end;
    }
    out.push_back(std::move(f));
    if (i >= line.size()) break;
    ++i;  // the comma
    if (i == line.size()) {
      out.push_back(CsvField{"", static_cast<int>(i) + 1});
      break;
    }
  }
  return out;
}

CsvTable::CsvTable(std::istream& in, std::string file, const std::vector<std::string>& columns)
    : in_(in), file_(std::move(file)), names_(columns) {
  std::string text;
  while (std::getline(in_, text)) {
    ++line_;
    if (line_ == 1 && text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (text.find_first_not_of(" \t") != std::string::npos) break;
    text.clear();
  }
  if (text.empty())
    throw InputError(Diagnostic{file_, line_, 0, "", "empty file: expected a CSV header"});
  const auto header = split_csv(text, file_, line_);
  header_size_ = header.size();
  std::string missing;
  for (const std::string& name : columns) {
    std::size_t found = header.size();
    for (std::size_t k = 0; k < header.size(); ++k) {
      if (trim(header[k].text) == name) {
        found = k;
        break;
      }
    }
    if (found == header.size()) missing += (missing.empty() ? "" : ", ") + name;
    index_.push_back(found);
  }
  if (!missing.empty()) {
    throw InputError(
        Diagnostic{file_, line_, 1, "",
                   "the CSV header lacks column(s) " + missing + " (header: " + text + ")"});
  }
}

bool CsvTable::next() {
  std::string text;
  while (std::getline(in_, text)) {
    ++line_;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (text.find_first_not_of(" \t") == std::string::npos) continue;
    row_ = split_csv(text, file_, line_);
    if (row_.size() < header_size_) {
      throw InputError(Diagnostic{file_, line_, static_cast<int>(text.size()) + 1, "",
                                  "the row has " + std::to_string(row_.size()) +
                                      " fields; the header has " + std::to_string(header_size_)});
    }
    return true;
  }
  return false;
}

void CsvTable::fail(std::size_t c, const std::string& message) const {
  throw InputError(Diagnostic{file_, line_, field(c).column, names_[c], message});
}

std::int64_t CsvTable::integer(std::size_t c, std::int64_t min) const {
  const std::string t = trim(field(c).text);
  std::int64_t v = 0;
  const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ec != std::errc() || p != t.data() + t.size()) {
    fail(c, "must be an integer, got '" + field(c).text + "'");
  }
  if (v < min) fail(c, "must be >= " + std::to_string(min) + ", got " + std::to_string(v));
  return v;
}

double CsvTable::number(std::size_t c, double min) const {
  const std::string t = trim(field(c).text);
  double v = 0;
  const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ec != std::errc() || p != t.data() + t.size() || !std::isfinite(v)) {
    fail(c, "must be a number, got '" + field(c).text + "'");
  }
  if (v < min) fail(c, "must be >= " + std::to_string(min) + ", got '" + field(c).text + "'");
  return v;
}

}  // namespace kvsim::workload::detail
