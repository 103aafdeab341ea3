// Inline SVG charts for the sweep report: a scatter/line plot with linear or log axes and
// ticks, and a grouped bar chart. Marks carry a `data-tip` (the report's script shows it on
// hover) and an SVG <title> (the browser's own tooltip, also without script).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace vacc::sweep {

// HTML/XML text escaping.
std::string escape_html(const std::string &text);

struct PlotAxis {
  std::string label;
  bool log = false;
  double lo = 0, hi = 1;  // the range shown; widened to include every mark
};

class SvgPlot {
 public:
  SvgPlot(std::string id, std::string title, PlotAxis x, PlotAxis y, int width = 560,
          int height = 380);
  // A dot at (x, y) with a CSS class (e.g. "pt", "front") and a hover text.
  void dot(double x, double y, const std::string &css_class, const std::string &tip,
           double radius = 4.5);
  void line(const std::vector<std::pair<double, double>> &xy, const std::string &css_class,
            const std::string &tip = "");
  std::string render() const;

 private:
  struct Mark {
    enum Kind { kDot, kLine } kind;
    std::vector<std::pair<double, double>> xy;
    std::string css, tip;
    double radius;
  };
  double sx(double x) const;
  double sy(double y) const;
  std::string id_, title_;
  PlotAxis x_, y_;
  int width_, height_;
  std::vector<Mark> marks_;
};

// Bars per category, one per series (e.g. layers x best points), values in [0, y_max].
std::string bar_chart(const std::string &id, const std::string &title,
                      const std::vector<std::string> &categories,
                      const std::vector<std::pair<std::string, std::vector<double>>> &series,
                      const std::string &y_label, double y_max, int width = 760, int height = 400);

}  // namespace vacc::sweep
