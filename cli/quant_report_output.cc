#include "quant_report_output.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "vacc/cli/output.h"

namespace vacc::cli {

namespace {

// " u" after the fraction bits of an int8 form that holds unsigned levels (zero point -128).
const char *unsigned_mark(const graph::LayerQuantStats &l) {
  return l.zero_point ? " u" : "";
}

bool any_unsigned(const graph::QuantReport &r) {
  for (const graph::LayerQuantStats &l : r.layers)
    if (l.zero_point) return true;
  return false;
}

std::string weights_str(const std::optional<graph::WeightRange> &w) {
  if (!w) return "-";
  return fmt::format("{} ch: {:.3g} / {:.3g} / {:.3g} (f {}..{})", w->channels, w->min, w->median,
                     w->max, w->frac_bits_min, w->frac_bits_max);
}

// A number JSON can hold: infinity (no noise at all) and NaN (not measured) become null.
nlohmann::ordered_json json_db(double db) {
  if (!std::isfinite(db)) return nullptr;
  return db;
}

std::string html_escape(const std::string &s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// Two bars per layer, in graph order: its SQNR with float inputs and with int8 inputs.
std::string svg_plot(const graph::QuantReport &r) {
  const size_t n = r.layers.size();
  double top = 10;
  for (const auto &l : r.layers)
    for (double v : {l.sqnr_local, l.sqnr_chained})
      if (std::isfinite(v)) top = std::max(top, v);
  top = 10 * std::ceil(top / 10);
  // Slots of at least 14 px per layer, the plot at least 560 px wide (the legend's room).
  const double left = 50, right = 20, plot_h = 300, top_pad = 30, bottom = 40, gap = 4;
  const double slot = std::max(14.0, 560.0 / std::max<double>(n, 1));
  const double bar = std::min(16.0, (slot - gap) / 2);
  const double width = left + right + std::max<double>(n, 1) * slot;
  const double height = top_pad + plot_h + bottom;
  auto y_of = [&](double db) {
    const double v = std::isfinite(db) ? std::clamp(db, 0.0, top) : top;
    return top_pad + plot_h * (1 - v / top);
  };
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n",
      width, height);
  for (double db = 0; db <= top + 1e-9; db += 10) {
    const double y = y_of(db);
    s += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{:.0f}</text>\n",
        left, y, width - right, y, left - 6, y + 4, db);
  }
  s += fmt::format(
      "<text x=\"12\" y=\"{:.1f}\" transform=\"rotate(-90 12 {:.1f})\" text-anchor=\"middle\">"
      "SQNR (dB)</text>\n",
      top_pad + plot_h / 2, top_pad + plot_h / 2);
  for (size_t i = 0; i < n; ++i) {
    const graph::LayerQuantStats &l = r.layers[i];
    const double x = left + i * slot + (slot - 2 * bar) / 2;
    const char *colors[2] = {"#1f77b4", "#ff7f0e"};
    const double vals[2] = {l.sqnr_local, l.sqnr_chained};
    for (int k = 0; k < 2 && !l.kept_float; ++k) {
      if (std::isnan(vals[k])) continue;
      const double y = y_of(vals[k]);
      s += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\">"
          "<title>{} ({}): {} dB with {} inputs</title></rect>\n",
          x + k * bar, y, bar, top_pad + plot_h - y, colors[k], html_escape(l.name), l.ops,
          db_str(vals[k]), k == 0 ? "float" : "int8");
    }
    if (n <= 40 || i % 5 == 0)
      s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n",
                       x + bar, top_pad + plot_h + 14, i);
  }
  s += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">layer (graph order)</text>\n",
      left + (width - left - right) / 2, top_pad + plot_h + 32);
  s += fmt::format(
      "<rect x=\"{:.1f}\" y=\"8\" width=\"10\" height=\"10\" fill=\"#1f77b4\"/>"
      "<text x=\"{:.1f}\" y=\"17\">everything before it in float</text>"
      "<rect x=\"{:.1f}\" y=\"8\" width=\"10\" height=\"10\" fill=\"#ff7f0e\"/>"
      "<text x=\"{:.1f}\" y=\"17\">everything before it in int8</text>\n",
      left, left + 14, left + 200, left + 214);
  s += "</svg>\n";
  return s;
}

}  // namespace

std::string db_str(double db) {
  if (std::isnan(db)) return "-";
  if (std::isinf(db)) return db > 0 ? "inf" : "-inf";
  return fmt::format("{:.1f}", db);
}

std::string worst_layers(const graph::QuantReport &r, size_t count) {
  std::string out;
  size_t named = 0;
  for (size_t k = 0; named < count && k < r.ranking.size(); ++k) {
    const graph::LayerQuantStats &l = r.layers[r.ranking[k]];
    if (l.kept_float) continue;
    out += fmt::format("{}{} ({}) {} dB", named++ ? ", " : "", l.name, l.ops, db_str(l.sqnr_local));
  }
  return out;
}

std::string quant_report_text(const QuantReportHeader &h, const graph::QuantReport &r, size_t top) {
  std::string out = fmt::format("model        {}\ncalibration  {}, {}\ncompared on  {}\n", h.model,
                                h.calibration, h.method, h.inputs);
  for (size_t i = 0; i < r.output_sqnr.size(); ++i)
    out += fmt::format("output {}     SQNR {} dB, cosine {:.5f} (int8 against float)\n", i,
                       db_str(r.output_sqnr[i]), r.output_cosine[i]);
  std::vector<std::vector<std::string>> rows = {
      {"#", "layer", "ops", "SQNR float-in", "SQNR int8-in", "float range", "int8 max (f)",
       "clipped", "weights: max|w| per channel min / median / max (f)"}};
  for (size_t i = 0; i < r.layers.size(); ++i) {
    const graph::LayerQuantStats &l = r.layers[i];
    if (l.kept_float) {
      rows.push_back({std::to_string(i), l.name, l.ops, "float (kept)", "float (kept)", "-", "-",
                      "-", weights_str(l.weights)});
      continue;
    }
    rows.push_back({std::to_string(i), l.name, l.ops, db_str(l.sqnr_local), db_str(l.sqnr_chained),
                    fmt::format("[{:.4g}, {:.4g}]", l.min, l.max),
                    fmt::format("{:.4g} ({}{})", l.int8_max, l.frac_bits, unsigned_mark(l)),
                    fmt::format("{:.3f}%", 100 * l.clipped), weights_str(l.weights)});
  }
  out +=
      "\nper layer (SQNR in dB of its int8 output against float, with everything before it "
      "in float / in int8):\n";
  out += format_table(rows);
  if (any_unsigned(r))
    out += "(f u): unsigned levels, real (q + 128) * 2^-f (--unsigned-activations)\n";
  out += fmt::format(
      "\nmost costly layers (lowest SQNR with float inputs: the noise each adds by itself):\n");
  std::vector<std::string> kept;
  size_t listed = 0;
  for (size_t k = 0; k < r.ranking.size(); ++k) {
    const graph::LayerQuantStats &l = r.layers[r.ranking[k]];
    if (l.kept_float) {
      kept.push_back(l.name);
    } else if (listed < top) {
      out += fmt::format("  {}. {} ({}, #{}): {} dB with float inputs, {} dB with int8 inputs\n",
                         ++listed, l.name, l.ops, r.ranking[k], db_str(l.sqnr_local),
                         db_str(l.sqnr_chained));
    }
  }
  if (!kept.empty())
    out += fmt::format("kept in float on the CPU ({}): {}\n", kept.size(), fmt::join(kept, ", "));
  return out;
}

nlohmann::ordered_json quant_report_json(const QuantReportHeader &h, const graph::QuantReport &r) {
  nlohmann::ordered_json j;
  j["model"] = h.model;
  j["calibration"] = h.calibration;
  j["calibrate_method"] = h.method;
  j["inputs"] = h.inputs;
  j["input_batches"] = r.inputs;
  j["outputs"] = nlohmann::ordered_json::array();
  for (size_t i = 0; i < r.output_sqnr.size(); ++i)
    j["outputs"].push_back(
        {{"sqnr_db", json_db(r.output_sqnr[i])}, {"cosine", r.output_cosine[i]}});
  j["layers"] = nlohmann::ordered_json::array();
  for (const graph::LayerQuantStats &l : r.layers) {
    nlohmann::ordered_json e;
    e["name"] = l.name;
    e["ops"] = l.ops;
    e["value"] = l.value;
    e["kept_float"] = l.kept_float;
    e["sqnr_float_inputs_db"] = json_db(l.sqnr_local);
    e["sqnr_int8_inputs_db"] = json_db(l.sqnr_chained);
    e["min"] = l.min;
    e["max"] = l.max;
    e["frac_bits"] = l.frac_bits;
    e["zero_point"] = l.zero_point;
    e["int8_max"] = l.int8_max;
    e["clipped"] = l.clipped;
    e["elements"] = l.elements;
    if (l.weights)
      e["weights"] = {
          {"channels", l.weights->channels},           {"abs_max_min", l.weights->min},
          {"abs_max_median", l.weights->median},       {"abs_max_max", l.weights->max},
          {"frac_bits_min", l.weights->frac_bits_min}, {"frac_bits_max", l.weights->frac_bits_max}};
    j["layers"].push_back(e);
  }
  j["ranking"] = nlohmann::ordered_json::array();
  for (size_t i : r.ranking) j["ranking"].push_back(r.layers[i].name);
  return j;
}

std::string quant_report_html(const QuantReportHeader &h, const graph::QuantReport &r) {
  std::string s =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>vacc quant-report: " +
      html_escape(h.model) +
      "</title>\n<style>body{font-family:sans-serif;margin:20px}table{border-collapse:collapse;"
      "font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
      "td.l{text-align:left}tr.worst{background:#fdd}</style></head><body>\n";
  s += fmt::format(
      "<h1>int8 quantization report</h1>\n<p>model {}<br>calibration {}, {}<br>"
      "compared on {}</p>\n",
      html_escape(h.model), html_escape(h.calibration), h.method, html_escape(h.inputs));
  for (size_t i = 0; i < r.output_sqnr.size(); ++i)
    s += fmt::format("<p>output {}: SQNR {} dB, cosine {:.5f} (int8 against float)</p>\n", i,
                     db_str(r.output_sqnr[i]), r.output_cosine[i]);
  s += "<h2>SQNR of each layer's int8 output against float</h2>\n" + svg_plot(r);
  std::vector<bool> worst(r.layers.size(), false);
  for (size_t k = 0; k < 5 && k < r.ranking.size(); ++k)
    worst[r.ranking[k]] = !r.layers[r.ranking[k]].kept_float;
  s += "<h2>Layers</h2>\n<p>Rows in red: the five most costly layers (lowest SQNR with "
       "float inputs).";
  if (any_unsigned(r)) s += " (f u): unsigned levels, real (q + 128) &middot; 2<sup>-f</sup>.";
  s += "</p>\n<table><tr><th>#</th><th>layer</th><th>ops</th><th>SQNR float-in "
       "(dB)</th><th>SQNR int8-in (dB)</th><th>float range</th><th>int8 max (f)</th>"
       "<th>clipped</th><th>weights: max|w| per channel min / median / max (f)</th></tr>\n";
  for (size_t i = 0; i < r.layers.size(); ++i) {
    const graph::LayerQuantStats &l = r.layers[i];
    if (l.kept_float) {
      s += fmt::format(
          "<tr><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td colspan=\"5\">"
          "kept in float</td><td class=\"l\">{}</td></tr>\n",
          i, html_escape(l.name), l.ops, weights_str(l.weights));
      continue;
    }
    s += fmt::format(
        "<tr{}><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td>"
        "<td>[{:.4g}, {:.4g}]</td><td>{:.4g} ({}{})</td><td>{:.3f}%</td><td class=\"l\">{}</td>"
        "</tr>\n",
        worst[i] ? " class=\"worst\"" : "", i, html_escape(l.name), l.ops, db_str(l.sqnr_local),
        db_str(l.sqnr_chained), l.min, l.max, l.int8_max, l.frac_bits, unsigned_mark(l),
        100 * l.clipped, weights_str(l.weights));
  }
  s += "</table>\n</body></html>\n";
  return s;
}

}  // namespace vacc::cli
