// Reading a whole file, with the one diagnostic every reader gives when it cannot.
#pragma once

#include <string>

namespace vacc {

// The bytes of the file at `path`; throws vacc::Error "<path>: cannot open <what>" (e.g.
// "config file") when it cannot be opened.
std::string read_file(const std::string &path, const std::string &what);

}  // namespace vacc
