#include "vacc/sweep/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "svg_plot.h"

namespace vacc::sweep {

namespace {

using Json = nlohmann::ordered_json;

double num(const Json &row, const char *key) {
  auto it = row.find(key);
  return it == row.end() || it->is_null() ? std::nan("") : it->get<double>();
}

std::string fmt_num(double v, int digits = 3) {
  if (!std::isfinite(v)) return "";
  return fmt::format("{:.{}g}", v, digits);
}

std::string point_tip(const Json &r) {
  return fmt::format(
      "point {} ({})\nlatency {} ms, utilization {}%\nenergy {} uJ, area {} mm2\nLUT {} FF {} "
      "DSP {} BRAM {}{}",
      r.value("point", 0), r.value("label", ""), fmt_num(num(r, "latency_ms"), 4),
      fmt_num(100 * num(r, "utilization"), 3), fmt_num(num(r, "energy_uj"), 4),
      fmt_num(num(r, "area_mm2"), 3), fmt_num(num(r, "lut"), 6), fmt_num(num(r, "ff"), 6),
      fmt_num(num(r, "dsp"), 5), fmt_num(num(r, "bram"), 4),
      r.value("fits", false) ? fmt::format(", fits {}", r.value("part", ""))
                             : fmt::format(", does not fit {}", r.value("part", "")));
}

bool wide_range(const std::vector<double> &v) {
  double lo = INFINITY, hi = 0;
  for (double x : v)
    if (x > 0) {
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
  return hi > 20 * lo;
}

std::string pareto_plot(const std::string &id, const std::string &workload,
                        const std::vector<const Json *> &rows, const char *y_key,
                        const char *y_label, const char *front_key) {
  std::vector<double> xs, ys;
  for (const Json *r : rows) {
    xs.push_back(num(*r, "latency_ms"));
    ys.push_back(num(*r, y_key));
  }
  SvgPlot plot(id, fmt::format("{}: latency vs {}", workload, y_label),
               {"latency (ms)", wide_range(xs), 0, 1}, {y_label, wide_range(ys), 0, 1});
  std::vector<std::pair<double, double>> front;
  for (size_t i = 0; i < rows.size(); ++i) {
    const bool on = rows[i]->value(front_key, 0) != 0;
    if (on) front.emplace_back(xs[i], ys[i]);
  }
  std::sort(front.begin(), front.end());
  // The front as a staircase: each point dominates the region above and to its right.
  std::vector<std::pair<double, double>> stairs;
  for (size_t i = 0; i < front.size(); ++i) {
    if (i) stairs.emplace_back(front[i].first, front[i - 1].second);
    stairs.push_back(front[i]);
  }
  plot.line(stairs, "front-line", "Pareto front");
  // Tuned sweeps: the same points at their heuristic schedules' latency, and that front, so the
  // software's share of the ranking shows.
  const std::string heuristic_key = std::string("pareto_heuristic_") + (front_key + 7);
  if (!rows.empty() && rows[0]->contains("heuristic_latency_ms")) {
    std::vector<std::pair<double, double>> hfront;
    for (size_t i = 0; i < rows.size(); ++i)
      if (rows[i]->value(heuristic_key, 0) != 0)
        hfront.emplace_back(num(*rows[i], "heuristic_latency_ms"), ys[i]);
    std::sort(hfront.begin(), hfront.end());
    std::vector<std::pair<double, double>> hstairs;
    for (size_t i = 0; i < hfront.size(); ++i) {
      if (i) hstairs.emplace_back(hfront[i].first, hfront[i - 1].second);
      hstairs.push_back(hfront[i]);
    }
    plot.line(hstairs, "front-line heuristic", "Pareto front, heuristic schedules");
    for (size_t i = 0; i < rows.size(); ++i)
      plot.dot(num(*rows[i], "heuristic_latency_ms"), ys[i], "pt heuristic",
               "heuristic schedules: " + point_tip(*rows[i]), 3);
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    const bool on = rows[i]->value(front_key, 0) != 0;
    plot.dot(xs[i], ys[i], on ? "pt front" : "pt", point_tip(*rows[i]), on ? 5.5 : 4);
  }
  return plot.render();
}

std::vector<const Json *> fastest(std::vector<const Json *> rows, size_t n) {
  std::sort(rows.begin(), rows.end(), [](const Json *a, const Json *b) {
    return num(*a, "latency_ms") < num(*b, "latency_ms");
  });
  if (rows.size() > n) rows.resize(n);
  return rows;
}

Json layers_of(const Json &row) {
  auto it = row.find("layers");
  if (it == row.end() || it->is_null()) return Json::array();
  return it->is_string() ? Json::parse(it->get<std::string>()) : *it;
}

// "/layer1/layer1.0/conv1/Conv_output_0.acc" -> "layer1.0/conv1": the last two path parts,
// without the exporter's and the compiler's suffixes (the full name is in the tooltip).
std::string short_layer_name(std::string name) {
  for (const char *suffix : {".acc", ".qadd", "_output_0", "/Conv", "/Gemm", "/MatMul", "/Add"}) {
    const std::string s = suffix;
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0)
      name.erase(name.size() - s.size());
  }
  const size_t last = name.rfind('/');
  if (last == std::string::npos || last == 0) return name.substr(last == 0 ? 1 : 0);
  const size_t before = name.rfind('/', last - 1);
  return name.substr(before == std::string::npos ? 0 : before + 1);
}

std::string layer_bars(const std::string &id, const std::string &workload,
                       const std::vector<const Json *> &best) {
  std::vector<std::string> categories;
  std::vector<std::pair<std::string, std::vector<double>>> series;
  for (const Json *r : best) {
    const Json layers = layers_of(*r);
    std::vector<double> util;
    if (categories.empty())
      for (const auto &l : layers) categories.push_back(short_layer_name(l.value("name", "?")));
    for (const auto &l : layers) util.push_back(100 * l.value("utilization", 0.0));
    series.emplace_back(fmt::format("point {}", r->value("point", 0)), util);
  }
  const int width = std::max(560, 60 + static_cast<int>(categories.size()) * 42);
  return bar_chart(id, fmt::format("{}: utilization per layer, fastest points", workload),
                   categories, series, "utilization (%)", 100, width);
}

std::string roofline(const std::string &id, const std::string &workload, const Json &best) {
  const double peak = num(best, "peak_macs_per_cycle");
  const double bw = num(best, "dram_bytes_per_cycle");
  SvgPlot plot(id, fmt::format("{}: roofline, point {}", workload, best.value("point", 0)),
               {"arithmetic intensity (useful MACs per DRAM byte)", true, 1, 10},
               {"MACs per cycle", true, 1, peak});
  double lo = INFINITY, hi = 0;
  std::vector<std::tuple<double, double, std::string>> dots;
  for (const auto &l : layers_of(best)) {
    const double macs = l.value("useful_macs", 0.0), bytes = l.value("dram_bytes", 0.0),
                 cycles = l.value("cycles", 0.0);
    if (macs <= 0 || bytes <= 0 || cycles <= 0) continue;
    const double x = macs / bytes, y = macs / cycles;
    lo = std::min(lo, x);
    hi = std::max(hi, x);
    dots.emplace_back(
        x, y,
        fmt::format("{} ({}): {} MACs/byte, {} MACs/cycle = {}% of peak\npoint {} "
                    "({})",
                    l.value("name", "?"), l.value("op", ""), fmt_num(x), fmt_num(y),
                    fmt_num(100 * y / peak), best.value("point", 0), best.value("label", "")));
  }
  if (dots.empty() || !(peak > 0) || !(bw > 0)) return "";
  const double ridge = peak / bw;
  lo = std::min(lo, ridge) / 2;
  hi = std::max(hi, ridge) * 2;
  plot.line(
      {{lo, bw * lo}, {ridge, peak}, {hi, peak}}, "roof",
      fmt::format("roof: {} MACs/cycle peak, {} bytes/cycle DRAM", fmt_num(peak), fmt_num(bw)));
  for (const auto &[x, y, tip] : dots) plot.dot(x, y, "pt layer", tip);
  return plot.render();
}

const char *kStyle = R"(
body{font-family:system-ui,sans-serif;margin:24px;color:#222;background:#fff}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ccc}
.plots{display:flex;flex-wrap:wrap;gap:12px}
svg.plot{background:#fafafa;border:1px solid #ddd}
svg .frame{fill:none;stroke:#999}svg .grid{stroke:#e4e4e4}
svg .tick{font-size:11px;fill:#555}svg .label{font-size:12px;fill:#333}
svg .title{font-size:13px;font-weight:600;fill:#222}
svg .pt{fill:#7aa6d8;stroke:#2c5d94;stroke-width:1;opacity:.85}
svg .pt.front{fill:#e4572e;stroke:#8a2a10}
svg .pt.layer{fill:#3c9d5d;stroke:#1d5c33}
svg .front-line{fill:none;stroke:#e4572e;stroke-width:1.5;stroke-dasharray:4 3}
svg .front-line.heuristic{stroke:#7a7a7a;stroke-dasharray:1 3}
svg .pt.heuristic{fill:none;stroke:#7a7a7a}
svg .roof{fill:none;stroke:#444;stroke-width:2}
svg .bar.s0{fill:#e4572e}svg .bar.s1{fill:#2c7bb6}svg .bar.s2{fill:#3c9d5d}
svg .bar.s3{fill:#f2a541}svg .bar.s4{fill:#8e6cc0}svg .bar.s5{fill:#999}
svg [data-tip]:hover{stroke:#000;stroke-width:2}
#tip{position:absolute;display:none;background:#222;color:#fff;font-size:12px;padding:6px 8px;
 border-radius:4px;white-space:pre;pointer-events:none;z-index:10}
table{border-collapse:collapse;font-size:12px;margin-top:8px}
th,td{border:1px solid #ddd;padding:3px 6px;text-align:right}
th{background:#f0f0f0;cursor:pointer;position:sticky;top:0}
td.t{text-align:left}tr.failed td{background:#fde8e4}tr.invalid td,tr.excluded td{color:#888}
.note{color:#555;font-size:13px}
)";

const char *kScript = R"(
(function(){
  var tip=document.getElementById('tip');
  document.querySelectorAll('[data-tip]').forEach(function(e){
    e.addEventListener('mousemove',function(ev){
      tip.textContent=e.getAttribute('data-tip');tip.style.display='block';
      tip.style.left=(ev.pageX+14)+'px';tip.style.top=(ev.pageY+14)+'px';});
    e.addEventListener('mouseleave',function(){tip.style.display='none';});
  });
  document.querySelectorAll('table.sortable').forEach(function(t){
    t.querySelectorAll('th').forEach(function(th,i){
      th.addEventListener('click',function(){
        var asc=th.getAttribute('data-dir')!=='asc';
        t.querySelectorAll('th').forEach(function(h){h.removeAttribute('data-dir');});
        th.setAttribute('data-dir',asc?'asc':'desc');
        var body=t.tBodies[0],rows=Array.prototype.slice.call(body.rows);
        rows.sort(function(a,b){
          var x=a.cells[i].getAttribute('data-v'),y=b.cells[i].getAttribute('data-v');
          var nx=parseFloat(x),ny=parseFloat(y),c;
          if(!isNaN(nx)&&!isNaN(ny))c=nx-ny;else if(isNaN(nx)!==isNaN(ny))c=isNaN(nx)?1:-1;
          else c=String(x).localeCompare(String(y));
          return asc?c:-c;});
        rows.forEach(function(r){body.appendChild(r);});
      });
    });
    t.setAttribute('data-sortable','ready');
  });
  document.body.setAttribute('data-report','ready');
})();
)";

std::string cell(const Json &r, const char *key, double scale = 1, int digits = 4) {
  auto it = r.find(key);
  if (it == r.end() || it->is_null()) return "<td data-v=\"\"></td>";
  if (it->is_number()) {
    const double v = it->get<double>() * scale;
    return fmt::format("<td data-v=\"{}\">{}</td>", v, fmt_num(v, digits));
  }
  if (it->is_boolean()) {
    const bool b = it->get<bool>();
    return fmt::format("<td data-v=\"{}\">{}</td>", b ? 1 : 0, b ? "yes" : "no");
  }
  const std::string s = it->is_string() ? it->get<std::string>() : it->dump();
  return fmt::format("<td class=\"t\" data-v=\"{0}\">{0}</td>", escape_html(s));
}

std::string table(const Json &results) {
  static const std::vector<std::tuple<const char *, const char *, double>> cols = {
      {"point", "point", 1},
      {"workload", "workload", 1},
      {"status", "status", 1},
      {"label", "config", 1},
      {"latency_ms", "latency ms", 1},
      {"inferences_per_s", "inf/s", 1},
      {"utilization", "util %", 100},
      {"energy_uj", "energy uJ", 1},
      {"edp_uj_ms", "EDP uJ*ms", 1},
      {"area_mm2", "area mm2", 1},
      {"lut", "LUT", 1},
      {"ff", "FF", 1},
      {"dsp", "DSP", 1},
      {"bram", "BRAM36", 1},
      {"fits", "fits", 1},
      {"pareto_latency_area", "front (area)", 1},
      {"pareto_latency_energy", "front (energy)", 1},
      {"heuristic_latency_ms", "heuristic ms", 1},
      {"tuning_gain", "tuned gain", 1},
      {"perf_error_pct", "perf vs rtl %", 1},
      {"message", "message", 1}};
  std::string s = "<table class=\"sortable\" id=\"results\"><thead><tr>";
  for (const auto &[key, title, _] : cols) s += fmt::format("<th>{}</th>", title);
  s += "</tr></thead><tbody>\n";
  for (const auto &r : results) {
    s += fmt::format("<tr class=\"{}\">", escape_html(r.value("status", "")));
    for (const auto &[key, title, scale] : cols) s += cell(r, key, scale);
    s += "</tr>\n";
  }
  return s + "</tbody></table>\n";
}

bool is_on(const std::string &v) { return v == "on" || v == "true"; }
bool is_off(const std::string &v) { return v == "off" || v == "false"; }

std::string axis_value(const Json &row, const std::string &key) {
  auto it = row.find(key);
  if (it == row.end() || it->is_null()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

std::string signed_num(double v, int digits) {
  if (!std::isfinite(v)) return "";
  return (v > 0 ? "+" : "") + fmt_num(v, digits);
}

// Per ISA extension (an `extensions.*` axis) and workload: each pair of points that differ in
// that axis alone, off against on, as the cycles it saves and the LUTs, DSPs, BRAM, area and
// energy it costs, so a reader weighs each extension without pairing points by hand.
std::string extension_view(const std::vector<std::string> &axes, const std::string &ext,
                           const std::string &workload, const std::vector<const Json *> &rows) {
  std::map<std::string, std::pair<const Json *, const Json *>> pairs;  // the other axes: off, on
  for (const Json *r : rows) {
    const std::string v = axis_value(*r, ext);
    if (!is_on(v) && !is_off(v)) continue;
    std::string rest;
    for (const std::string &a : axes)
      if (a != ext) rest += (rest.empty() ? "" : " ") + a + "=" + axis_value(*r, a);
    (is_on(v) ? pairs[rest].second : pairs[rest].first) = r;
  }
  std::string body;
  double lo = INFINITY, hi = 0;
  for (const auto &[rest, p] : pairs) {
    if (!p.first || !p.second) continue;
    const Json &off = *p.first, &on = *p.second;
    const double speedup = num(off, "cycles") / num(on, "cycles");
    lo = std::min(lo, speedup);
    hi = std::max(hi, speedup);
    body += fmt::format(
        "<tr><td class=\"t\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td></tr>\n",
        escape_html(rest.empty() ? "(no other axis)" : rest), fmt_num(num(off, "cycles"), 8),
        fmt_num(num(on, "cycles"), 8), fmt_num(speedup, 4),
        signed_num(num(on, "lut") - num(off, "lut"), 5),
        signed_num(num(on, "dsp") - num(off, "dsp"), 4),
        signed_num(num(on, "bram") - num(off, "bram"), 4),
        signed_num(num(on, "area_mm2") - num(off, "area_mm2"), 3),
        signed_num(num(on, "energy_uj") - num(off, "energy_uj"), 3));
  }
  if (body.empty()) return "";
  return fmt::format(
             "<h3>{}: {} on against off</h3>\n<p class=\"note\">{:.3f}&times; to {:.3f}&times; "
             "fewer cycles with it; each row a pair of points that differ in {} alone.</p>\n"
             "<table class=\"ext\"><tr><th>the other axes</th><th>cycles off</th><th>cycles "
             "on</th><th>speedup</th><th>&Delta;LUT</th><th>&Delta;DSP</th><th>&Delta;BRAM36"
             "</th><th>&Delta;area mm2</th><th>&Delta;energy uJ</th></tr>\n",
             escape_html(workload), escape_html(ext), lo, hi, escape_html(ext)) +
         body + "</table>\n";
}

}  // namespace

std::string render_report(const Json &doc) {
  const Json &results = doc.at("results");
  const std::string spec = doc.value("spec", "sweep");
  const std::vector<std::string> axes =
      doc.contains("axes") ? doc.at("axes").get<std::vector<std::string>>()
                           : std::vector<std::string>{};
  std::map<std::string, std::vector<const Json *>> ok;
  std::vector<std::string> order;
  std::map<std::string, int> status_count;
  for (const auto &r : results) {
    const std::string w = r.value("workload", "");
    if (std::find(order.begin(), order.end(), w) == order.end()) order.push_back(w);
    ++status_count[r.value("status", "")];
    if (r.value("status", "") == "ok") ok[w].push_back(&r);
  }

  std::string body = fmt::format("<h1>vacc sweep: {}</h1>\n<p class=\"note\">", escape_html(spec));
  for (const auto &[st, n] : status_count) body += fmt::format("{} rows {}; ", n, escape_html(st));
  body += fmt::format(
      "energy table {}, area table {}. Hover over a mark for its config; click a "
      "column of the table to sort by it.</p>\n",
      escape_html(doc.value("energy_table", "")), escape_html(doc.value("area_table", "")));

  int n = 0;
  for (const std::string &w : order) {
    body += fmt::format("<h2>{}</h2>\n", escape_html(w));
    const auto &rows = ok[w];
    if (rows.empty()) {
      body += "<p class=\"note\">No point ran successfully for this workload.</p>\n";
      continue;
    }
    body += "<div class=\"plots\">\n";
    body += pareto_plot(fmt::format("pareto-area-{}", n), w, rows, "area_mm2", "area (mm2)",
                        "pareto_latency_area");
    body += pareto_plot(fmt::format("pareto-energy-{}", n), w, rows, "energy_uj",
                        "energy per inference (uJ)", "pareto_latency_energy");
    const auto best = fastest(rows, 3);
    body += roofline(fmt::format("roofline-{}", n), w, *best.front());
    body += layer_bars(fmt::format("layers-{}", n), w, best);
    body += "</div>\n";
    for (const std::string &ext : axes)
      if (ext.rfind("extensions.", 0) == 0) body += extension_view(axes, ext, w, rows);
    ++n;
  }

  std::string skipped;
  for (const auto &r : results) {
    const std::string st = r.value("status", "");
    if ((st == "invalid" || st == "excluded") && r.value("workload", "") == order.front())
      skipped +=
          fmt::format("<li>point {} ({}): {} — {}</li>\n", r.value("point", 0),
                      escape_html(r.value("label", "")), st, escape_html(r.value("message", "")));
  }
  if (!skipped.empty())
    body += "<h2>Points not run</h2>\n<ul class=\"note\">\n" + skipped + "</ul>\n";

  if (doc.contains("resource_model")) {
    const Json &m = doc.at("resource_model");
    body += "<h2>Resource model</h2>\n<pre class=\"note\">" +
            escape_html(m.value("coefficients", "")) + "</pre>\n<p class=\"note\">" +
            escape_html(fmt::format("Fitted to {} bundled and {} of this sweep's Yosys results.",
                                    m.value("bundled_samples", 0), m.value("sweep_samples", 0))) +
            "</p>\n<table><tr><th>error against Yosys</th><th>samples</th><th>LUT</th><th>FF</th>"
            "<th>DSP</th><th>BRAM</th></tr>\n";
    for (const char *key : {"leave_one_out_error", "bundled_model_error_on_sweep_samples"}) {
      if (!m.contains(key)) continue;
      const Json &e = m.at(key);
      for (const char *stat : {"mean_pct", "max_pct"}) {
        body += fmt::format(
            "<tr><td class=\"t\">{} ({})</td><td>{}</td>",
            std::string(key) == "leave_one_out_error" ? "each sample predicted by the others"
                                                      : "bundled model on this sweep's samples",
            std::string(stat) == "mean_pct" ? "mean %" : "max %", e.value("samples", 0));
        for (const char *r : {"lut", "ff", "dsp", "bram"})
          body += fmt::format("<td>{}</td>", fmt_num(e.at(stat).value(r, 0.0), 3));
        body += "</tr>\n";
      }
    }
    body += "</table>\n";
  }
  body += "<h2>All rows</h2>\n" + table(results);

  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>vacc sweep: "
      "{}</title>\n<style>{}</style></head>\n<body>\n<div id=\"tip\"></div>\n{}\n<script>{}"
      "</script>\n</body></html>\n",
      escape_html(spec), kStyle, body, kScript);
}

}  // namespace vacc::sweep
