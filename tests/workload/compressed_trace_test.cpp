// Traces read through sim/core/input_file.hpp: a gzip-compressed trace gives the same requests
// as the plain file, whatever its name; a damaged one is an InputError naming the file.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "sim/core/error.hpp"
#include "sim/core/input_file.hpp"
#include "sim/workload/trace.hpp"

namespace kvsim::workload {
namespace {

namespace fs = std::filesystem;

const std::string kMooncake =
    std::string(KVSIM_SOURCE_DIR) + "/scenarios/traces/mooncake_conversation_head250.jsonl";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Writes `bytes` gzip-compressed with zlib (an independent writer: the reader uses gzread).
void write_gzip(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb9");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())),
            static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
}

class CompressedTrace : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kvsim-gz-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(CompressedTrace, GzipGivesTheSameRequestsAsThePlainFile) {
  const std::string text = slurp(kMooncake);
  ASSERT_GT(text.size(), 1000u);
  write_gzip(path("t.jsonl.gz"), text);
  // Smaller on disk, so it really is compressed.
  EXPECT_LT(fs::file_size(path("t.jsonl.gz")), text.size());
  EXPECT_EQ(read_input(path("t.jsonl.gz"), "the trace file"), text);

  const Trace plain = read_trace(kMooncake, {});
  const Trace packed = read_trace(path("t.jsonl.gz"), {});
  EXPECT_EQ(packed.format, "mooncake");
  ASSERT_EQ(packed.requests.size(), plain.requests.size());
  ASSERT_EQ(plain.requests.size(), 250u);
  for (std::size_t i = 0; i < plain.requests.size(); ++i) {
    EXPECT_EQ(packed.requests[i].timestamp_ms, plain.requests[i].timestamp_ms) << i;
    EXPECT_EQ(packed.requests[i].input_length, plain.requests[i].input_length) << i;
    EXPECT_EQ(packed.requests[i].output_length, plain.requests[i].output_length) << i;
    EXPECT_EQ(packed.requests[i].hash_ids, plain.requests[i].hash_ids) << i;
  }
}

TEST_F(CompressedTrace, RecognisedByItsBytesNotItsName) {
  write_gzip(path("no-suffix.jsonl"), slurp(kMooncake));
  EXPECT_EQ(read_trace(path("no-suffix.jsonl"), {}).requests.size(), 250u);
}

TEST_F(CompressedTrace, TruncatedGzipIsAnInputErrorNamingTheFile) {
  write_gzip(path("whole.gz"), slurp(kMooncake));
  const std::string bytes = slurp(path("whole.gz"));
  {
    std::ofstream out(path("cut.jsonl.gz"), std::ios::binary);
    out << bytes.substr(0, bytes.size() / 2);
  }
  try {
    (void)read_trace(path("cut.jsonl.gz"), {});
    FAIL() << "a truncated gzip file was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cut.jsonl.gz"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("gzip"), std::string::npos) << e.what();
  }
}

TEST_F(CompressedTrace, CorruptGzipBodyIsAnInputError) {
  std::string bytes;
  write_gzip(path("whole.gz"), slurp(kMooncake));
  bytes = slurp(path("whole.gz"));
  for (std::size_t i = 20; i < bytes.size() - 20; i += 7)
    bytes[i] = static_cast<char>(bytes[i] ^ 0x5a);
  {
    std::ofstream out(path("bad.gz"), std::ios::binary);
    out << bytes;
  }
  EXPECT_THROW((void)read_trace(path("bad.gz"), {}), InputError);
}

TEST(InputFile, StdinIsNamedAndExists) {
  EXPECT_TRUE(is_stdin_path("-"));
  EXPECT_FALSE(is_stdin_path("./-"));
  EXPECT_EQ(input_display_name("-"), "<stdin>");
  EXPECT_EQ(input_display_name("a.jsonl"), "a.jsonl");
  EXPECT_TRUE(input_exists("-"));
  EXPECT_FALSE(input_exists("/nonexistent/kvsim/trace.jsonl"));
  EXPECT_THROW((void)open_input("/nonexistent/kvsim/trace.jsonl", "the trace file"), InputError);
}

}  // namespace
}  // namespace kvsim::workload
