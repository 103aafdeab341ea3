// The sweep's rows as CSV (RFC 4180 quoting, one header line) and as JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace vacc::sweep {

// One line per row with `columns` in order; nested values (objects, lists) are written as
// their JSON text, null as an empty field.
std::string to_csv(const std::vector<nlohmann::ordered_json> &rows,
                   const std::vector<std::string> &columns);

}  // namespace vacc::sweep
