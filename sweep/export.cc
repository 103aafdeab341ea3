#include "vacc/sweep/export.h"

#include <fmt/format.h>

namespace vacc::sweep {

namespace {

std::string field(const nlohmann::ordered_json &v) {
  std::string text;
  if (v.is_null()) return "";
  if (v.is_string())
    text = v.get<std::string>();
  else if (v.is_boolean())
    text = v.get<bool>() ? "1" : "0";
  else if (v.is_number_float())
    text = fmt::format("{}", v.get<double>());
  else
    text = v.dump();
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

}  // namespace

std::string to_csv(const std::vector<nlohmann::ordered_json> &rows,
                   const std::vector<std::string> &columns) {
  std::string out;
  for (size_t i = 0; i < columns.size(); ++i) out += (i ? "," : "") + field(columns[i]);
  out += "\n";
  for (const auto &row : rows) {
    for (size_t i = 0; i < columns.size(); ++i) {
      auto it = row.find(columns[i]);
      out += (i ? "," : "") + (it == row.end() ? std::string() : field(*it));
    }
    out += "\n";
  }
  return out;
}

}  // namespace vacc::sweep
