// The quantization report (graph/quant_report.h) as a text table, JSON and a self-contained
// HTML page with an inline SVG plot of each layer's SQNR; and the line `vacc run --float`
// prints about the most costly layers.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "vacc/compile/quant_report.h"

namespace vacc::cli {

struct QuantReportHeader {
  std::string model, calibration, method, inputs;
};

std::string quant_report_text(const QuantReportHeader &h, const graph::QuantReport &r, size_t top);
nlohmann::ordered_json quant_report_json(const QuantReportHeader &h, const graph::QuantReport &r);
std::string quant_report_html(const QuantReportHeader &h, const graph::QuantReport &r);

// "layer4.1.conv2 (Conv+Relu) 21.3 dB, ..." for the `count` most costly layers.
std::string worst_layers(const graph::QuantReport &r, size_t count);

// A dB figure: "21.3", "inf", or "-" (not measured).
std::string db_str(double db);

}  // namespace vacc::cli
