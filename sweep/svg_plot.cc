#include "svg_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace vacc::sweep {

std::string escape_html(const std::string &text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

constexpr int kLeft = 64, kRight = 16, kTop = 34, kBottom = 46;

std::string number(double v) {
  if (v == 0) return "0";
  const double a = std::abs(v);
  if (a >= 1e6 || a < 1e-3) return fmt::format("{:.2g}", v);
  if (a >= 100) return fmt::format("{:.0f}", v);
  if (a >= 10) return fmt::format("{:.1f}", v);
  return fmt::format("{:.3g}", v);
}

// Tick positions for [lo, hi]: powers of ten (and 2, 5 between them when few) on a log axis,
// 1-2-5 steps on a linear one.
std::vector<double> ticks(const PlotAxis &a) {
  std::vector<double> out;
  if (a.log) {
    const int e0 = static_cast<int>(std::floor(std::log10(a.lo)));
    const int e1 = static_cast<int>(std::ceil(std::log10(a.hi)));
    const bool fine = e1 - e0 <= 2;
    for (int e = e0; e <= e1; ++e)
      for (double m : fine ? std::vector<double>{1, 2, 5} : std::vector<double>{1}) {
        const double v = m * std::pow(10.0, e);
        if (v >= a.lo * 0.999 && v <= a.hi * 1.001) out.push_back(v);
      }
    return out;
  }
  const double span = a.hi - a.lo;
  if (span <= 0) return {a.lo};
  const double raw = span / 6;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  double step = p;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) {
      step = m * p;
      break;
    }
  for (double v = std::ceil(a.lo / step) * step; v <= a.hi + step * 1e-9; v += step)
    out.push_back(v);
  return out;
}

}  // namespace

SvgPlot::SvgPlot(std::string id, std::string title, PlotAxis x, PlotAxis y, int width, int height)
    : id_(std::move(id)),
      title_(std::move(title)),
      x_(std::move(x)),
      y_(std::move(y)),
      width_(width),
      height_(height) {}

void SvgPlot::dot(double x, double y, const std::string &css, const std::string &tip,
                  double radius) {
  marks_.push_back({Mark::kDot, {{x, y}}, css, tip, radius});
}

void SvgPlot::line(const std::vector<std::pair<double, double>> &xy, const std::string &css,
                   const std::string &tip) {
  marks_.push_back({Mark::kLine, xy, css, tip, 0});
}

double SvgPlot::sx(double x) const {
  const double w = width_ - kLeft - kRight;
  const double t =
      x_.log ? (std::log10(x) - std::log10(x_.lo)) / (std::log10(x_.hi) - std::log10(x_.lo))
             : (x - x_.lo) / (x_.hi - x_.lo);
  return kLeft + t * w;
}

double SvgPlot::sy(double y) const {
  const double h = height_ - kTop - kBottom;
  const double t =
      y_.log ? (std::log10(y) - std::log10(y_.lo)) / (std::log10(y_.hi) - std::log10(y_.lo))
             : (y - y_.lo) / (y_.hi - y_.lo);
  return height_ - kBottom - t * h;
}

std::string SvgPlot::render() const {
  // Widen the ranges to every mark (with a margin), so nothing falls outside.
  SvgPlot p = *this;
  auto widen = [](PlotAxis &a, double v) {
    if (!std::isfinite(v) || (a.log && v <= 0)) return;
    a.lo = std::min(a.lo, v);
    a.hi = std::max(a.hi, v);
  };
  bool first = true;
  for (const Mark &m : marks_)
    for (const auto &[x, y] : m.xy) {
      if (first) {
        p.x_.lo = p.x_.hi = x;
        p.y_.lo = p.y_.hi = y;
        first = false;
      }
      widen(p.x_, x);
      widen(p.y_, y);
    }
  for (PlotAxis *a : {&p.x_, &p.y_}) {
    if (a->log) {
      a->lo = std::max(a->lo, 1e-12);
      if (a->hi <= a->lo) a->hi = a->lo * 10;
      a->lo /= 1.25;
      a->hi *= 1.25;
    } else {
      if (a->hi <= a->lo) a->hi = a->lo + 1;
      const double m = 0.06 * (a->hi - a->lo);
      a->lo = a->lo >= 0 && a->lo - m < 0 ? 0 : a->lo - m;
      a->hi += m;
    }
  }

  std::string s = fmt::format(
      "<svg class=\"plot\" id=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" "
      "height=\"{}\" viewBox=\"0 0 {} {}\">\n",
      escape_html(p.id_), p.width_, p.height_, p.width_, p.height_);
  s += fmt::format("<text class=\"title\" x=\"{}\" y=\"20\">{}</text>\n", kLeft,
                   escape_html(p.title_));
  const int x0 = kLeft, x1 = p.width_ - kRight, y0 = p.height_ - kBottom, y1 = kTop;
  s += fmt::format("<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>\n", x0, y1,
                   x1 - x0, y0 - y1);
  for (double t : ticks(p.x_)) {
    const double x = p.sx(t);
    s += fmt::format(
        "<line class=\"grid\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>"
        "<text class=\"tick\" x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
        x, y1, y0, y0 + 16, number(t));
  }
  for (double t : ticks(p.y_)) {
    const double y = p.sy(t);
    s += fmt::format(
        "<line class=\"grid\" x1=\"{1}\" y1=\"{0:.1f}\" x2=\"{2}\" y2=\"{0:.1f}\"/>"
        "<text class=\"tick\" x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
        y, x0, x1, x0 - 6, y + 4, number(t));
  }
  s += fmt::format("<text class=\"label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                   (x0 + x1) / 2, p.height_ - 8, escape_html(p.x_.label));
  s += fmt::format(
      "<text class=\"label\" x=\"14\" y=\"{0}\" text-anchor=\"middle\" "
      "transform=\"rotate(-90 14 {0})\">{1}</text>\n",
      (y0 + y1) / 2, escape_html(p.y_.label));
  // Lines first, dots on top.
  for (const Mark &m : marks_) {
    if (m.kind != Mark::kLine || m.xy.size() < 2) continue;
    std::string pts;
    for (const auto &[x, y] : m.xy) pts += fmt::format("{:.1f},{:.1f} ", p.sx(x), p.sy(y));
    s += fmt::format("<polyline class=\"{}\" points=\"{}\"{}>", escape_html(m.css), pts,
                     m.tip.empty() ? "" : " data-tip=\"" + escape_html(m.tip) + "\"");
    if (!m.tip.empty()) s += "<title>" + escape_html(m.tip) + "</title>";
    s += "</polyline>\n";
  }
  for (const Mark &m : marks_) {
    if (m.kind != Mark::kDot) continue;
    const auto [x, y] = m.xy[0];
    if (!std::isfinite(x) || !std::isfinite(y)) continue;
    s += fmt::format(
        "<circle class=\"{}\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" "
        "data-tip=\"{}\"><title>{}</title>"
        "</circle>\n",
        escape_html(m.css), p.sx(x), p.sy(y), m.radius, escape_html(m.tip), escape_html(m.tip));
  }
  return s + "</svg>\n";
}

std::string bar_chart(const std::string &id, const std::string &title,
                      const std::vector<std::string> &categories,
                      const std::vector<std::pair<std::string, std::vector<double>>> &series,
                      const std::string &y_label, double y_max, int width, int height) {
  const int x0 = kLeft, x1 = width - kRight, y0 = height - kBottom - 70, y1 = kTop;
  std::string s = fmt::format(
      "<svg class=\"plot bars\" id=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" "
      "height=\"{}\" viewBox=\"0 0 {} {}\">\n",
      escape_html(id), width, height, width, height);
  s += fmt::format("<text class=\"title\" x=\"{}\" y=\"15\">{}</text>\n", x0, escape_html(title));
  s += fmt::format("<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>\n", x0, y1,
                   x1 - x0, y0 - y1);
  auto sy = [&](double v) { return y0 - std::clamp(v / y_max, 0.0, 1.0) * (y0 - y1); };
  for (int i = 0; i <= 4; ++i) {
    const double v = y_max * i / 4;
    s += fmt::format(
        "<line class=\"grid\" x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\"/>"
        "<text class=\"tick\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n",
        x0, sy(v), x1, sy(v), x0 - 6, sy(v) + 4, number(v));
  }
  s += fmt::format(
      "<text class=\"label\" x=\"14\" y=\"{0}\" text-anchor=\"middle\" "
      "transform=\"rotate(-90 14 {0})\">{1}</text>\n",
      (y0 + y1) / 2, escape_html(y_label));
  const double group = categories.empty() ? 1.0 : double(x1 - x0) / categories.size();
  const double bar = series.empty() ? group : group * 0.8 / series.size();
  for (size_t c = 0; c < categories.size(); ++c) {
    const double gx = x0 + c * group;
    for (size_t k = 0; k < series.size(); ++k) {
      const double v = c < series[k].second.size() ? series[k].second[c] : 0;
      const double top = sy(v);
      const std::string tip = fmt::format("{}: {} {}", categories[c], series[k].first, number(v));
      s += fmt::format(
          "<rect class=\"bar s{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
          "data-tip=\"{}\"><title>{}</title></rect>\n",
          k % 6, gx + group * 0.1 + k * bar, top, std::max(bar - 1, 1.0), y0 - top,
          escape_html(tip), escape_html(tip));
    }
    s += fmt::format(
        "<text class=\"tick\" x=\"{0:.1f}\" y=\"{1}\" text-anchor=\"end\" "
        "transform=\"rotate(-40 {0:.1f} {1})\">{2}</text>\n",
        gx + group / 2, y0 + 12, escape_html(categories[c]));
  }
  // Legend.
  double lx = x0;
  for (size_t k = 0; k < series.size(); ++k) {
    s += fmt::format(
        "<rect class=\"bar s{}\" x=\"{:.0f}\" y=\"{}\" width=\"10\" height=\"10\"/>"
        "<text class=\"tick\" x=\"{:.0f}\" y=\"{}\">{}</text>\n",
        k % 6, lx, 20, lx + 14, 29, escape_html(series[k].first));
    lx += 24 + 7.0 * series[k].first.size();
  }
  return s + "</svg>\n";
}

}  // namespace vacc::sweep
