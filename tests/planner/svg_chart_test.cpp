// The SVG chart writer: nice ticks, labels, escaping, and well-formed output with every part.
#include "sim/io/svg_chart.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace kvsim::io {
namespace {

// Counts of '<tag' openings and '</tag>' closings plus self-closed elements must balance: a
// minimal well-formedness check (a stack of open element names).
bool balanced(const std::string& xml) {
  std::vector<std::string> stack;
  std::size_t i = 0;
  while ((i = xml.find('<', i)) != std::string::npos) {
    const auto end = xml.find('>', i);
    if (end == std::string::npos) return false;
    std::string tag = xml.substr(i + 1, end - i - 1);
    i = end + 1;
    if (tag.empty() || tag[0] == '?' || tag[0] == '!') continue;
    if (tag[0] == '/') {
      if (stack.empty() || stack.back() != tag.substr(1)) return false;
      stack.pop_back();
      continue;
    }
    if (tag.back() == '/') continue;
    stack.push_back(tag.substr(0, tag.find(' ')));
  }
  return stack.empty();
}

TEST(SvgChart, NiceTicksUseOneTwoFiveSteps) {
  EXPECT_EQ(nice_ticks(0, 37, 5), (std::vector<double>{0, 10, 20, 30, 40}));
  EXPECT_EQ(nice_ticks(0, 1, 5), (std::vector<double>{0, 0.2, 0.4, 0.6000000000000001, 0.8, 1}));
  // Range 860 over 4 intervals is 215 each: the smallest 1-2-5 step not below it is 500.
  EXPECT_EQ(nice_ticks(120, 980, 4), (std::vector<double>{0, 500, 1000}));
  // Over 8 intervals 107.5 each: step 200, from 0 (the multiple of 200 at or below 120).
  EXPECT_EQ(nice_ticks(120, 980, 8), (std::vector<double>{0, 200, 400, 600, 800, 1000}));
  EXPECT_EQ(nice_ticks(5, 5, 2), (std::vector<double>{4, 5, 6}));
  EXPECT_EQ(tick_label(0.6000000000000001, 0.2), "0.6");
  EXPECT_EQ(tick_label(1200, 200), "1200");
  EXPECT_EQ(tick_label(2.25, 0.25), "2.25");
}

TEST(SvgChart, EscapesText) {
  EXPECT_EQ(xml_escape("a<=b & \"c\""), "a&lt;=b &amp; &quot;c&quot;");
}

TEST(SvgChart, LineChartHasAxesSeriesThresholdAndLegend) {
  LineChart c;
  c.title = "TTFT p90 against clients";
  c.x_label = "clients";
  c.y_label = "ttft_ms_p90 (ms)";
  c.series = {{"vram-only", {{8, 300}, {16, 900}, {32, 4000}}},
              {"dram", {{8, 250}, {16, 500}, {32, 1800}}}};
  c.threshold = ChartLine{2000, "SLO ttft_p90<=2s"};
  const std::string svg = render_line_chart(c);
  EXPECT_TRUE(balanced(svg)) << svg;
  EXPECT_EQ(svg.rfind("<svg", 0), 0U);
  EXPECT_NE(svg.find(">clients<"), std::string::npos);
  EXPECT_NE(svg.find(">ttft_ms_p90 (ms)<"), std::string::npos);
  EXPECT_NE(svg.find(">vram-only<"), std::string::npos);
  EXPECT_NE(svg.find(">dram<"), std::string::npos);
  EXPECT_NE(svg.find("SLO ttft_p90&lt;=2s"), std::string::npos);
  EXPECT_NE(svg.find(">4000<"), std::string::npos);  // the y axis reaches the data's maximum
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  // Two series, one path each, one circle per point.
  std::size_t paths = 0;
  std::size_t circles = 0;
  for (std::size_t i = 0; (i = svg.find("<path", i)) != std::string::npos; ++i) ++paths;
  for (std::size_t i = 0; (i = svg.find("<circle", i)) != std::string::npos; ++i) ++circles;
  EXPECT_EQ(paths, 2U);
  EXPECT_EQ(circles, 6U);
  EXPECT_EQ(svg, render_line_chart(c));  // deterministic
}

TEST(SvgChart, BarChartDrawsOneBarPerFiniteValue) {
  BarChart b;
  b.title = "Cost per million output tokens";
  b.y_label = "$ per M tokens";
  b.bars = {{"vram-only", 1.25}, {"dram", 0.5}, {"none", std::nan("")}};
  const std::string svg = render_bar_chart(b);
  EXPECT_TRUE(balanced(svg)) << svg;
  std::size_t rects = 0;
  for (std::size_t i = 0; (i = svg.find("<rect", i)) != std::string::npos; ++i) ++rects;
  EXPECT_EQ(rects, 3U);  // the background and two bars
  EXPECT_NE(svg.find(">n/a<"), std::string::npos);
  EXPECT_NE(svg.find(">1.25<"), std::string::npos);
}

}  // namespace
}  // namespace kvsim::io
