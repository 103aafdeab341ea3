// DIR/report.html: one self-contained page (inline SVG, CSS and a little script; nothing
// fetched from the network). Per workload: the latency/area and latency/energy Pareto scatter
// plots with the front highlighted and every point's config on hover, the per-layer
// utilization of the fastest points, a roofline (the fastest point's layers against its
// compute peak and DRAM bandwidth), and per ISA extension axis (`extensions.*`) a table of the
// point pairs that differ in it alone: cycles off and on, and the LUTs, DSPs, BRAM, area and
// energy it adds. Then the invalid and excluded points with their reasons,
// the resource model's error, and a table of every row, sortable by any column.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace vacc::sweep {

// `doc` is DIR/results.json's content (finalize.h).
std::string render_report(const nlohmann::ordered_json &doc);

}  // namespace vacc::sweep
