// A table of named model coefficients read from YAML, each with its unit and the published
// source it comes from (the area and energy models' tables under configs/):
//
//   name: 45nm
//   coefficients:
//     mult8_um2: {value: 282, unit: um2, source: "Horowitz, ISSCC 2014, ..."}
//
// Every coefficient must carry a source; a missing or unknown one is a vacc::Error naming
// the file and the key.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace vacc::sweep {

struct Coefficient {
  double value = 0;
  std::string unit;
  std::string source;
};

struct CoefficientTable {
  std::string name;
  std::string path;  // the file it was read from
  std::map<std::string, Coefficient> values;
  // A table keyed by a number (e.g. SRAM energy by size): key -> (x, y) points, sorted by x.
  std::map<std::string, std::vector<std::pair<double, double>>> curves;
  std::map<std::string, std::string> curve_sources;

  double get(const std::string &key) const;  // throws vacc::Error naming the file and key
  // Interpolates `curve` log-log between its points, flat beyond its ends.
  double interpolate(const std::string &curve, double x) const;
};

// Reads a table; `required` keys must all be present, `required_curves` likewise, and no
// other key is accepted (so a typo is an error, not a silent default).
CoefficientTable parse_coefficients(const std::string &yaml_text, const std::string &path,
                                    const std::vector<std::string> &required,
                                    const std::vector<std::string> &required_curves = {});

}  // namespace vacc::sweep
