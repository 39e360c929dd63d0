#pragma once
// CSV rows for the CSV trace readers (Azure, BurstGPT): fields split at commas, double-quoted
// fields with "" escapes (RFC 4180, one record a line), columns found by header name, and typed
// values with diagnostics `file:LINE:COL: error: <column>: <reason>` (COL = the field's first
// byte, 1-based).
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

namespace kvsim::workload::detail {

struct CsvField {
  std::string text;
  int column = 1;  // 1-based byte column of the field's first character
};

// Splits one line; throws InputError for an unterminated quote.
std::vector<CsvField> split_csv(const std::string& line, const std::string& file, int line_no);

class CsvTable {
 public:
  // Reads the header (the first non-blank line; a UTF-8 byte-order mark is dropped) and finds
  // `columns`; throws InputError naming the missing ones.
  CsvTable(std::istream& in, std::string file, const std::vector<std::string>& columns);

  // Next data row (blank lines skipped); false at the end. Throws InputError for a row with
  // fewer fields than the header.
  bool next();
  int line() const { return line_; }
  // Field of column `c` (an index into the `columns` given to the constructor).
  const CsvField& field(std::size_t c) const { return row_[index_[c]]; }
  [[noreturn]] void fail(std::size_t c, const std::string& message) const;
  std::int64_t integer(std::size_t c, std::int64_t min) const;
  double number(std::size_t c, double min) const;

 private:
  std::istream& in_;
  std::string file_;
  std::vector<std::string> names_;
  std::vector<std::size_t> index_;
  std::size_t header_size_ = 0;
  std::vector<CsvField> row_;
  int line_ = 0;
};

}  // namespace kvsim::workload::detail
