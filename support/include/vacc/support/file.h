// Reading a whole file, with the one diagnostic every reader gives when it cannot; whether a
// path a user named exists; the file names of per-step dumps.
#pragma once

#include <filesystem>
#include <string>

namespace vacc {

// The bytes of the file at `path`; throws vacc::Error "<path>: cannot open <what>" (e.g.
// "config file") when it cannot be opened.
std::string read_file(const std::string &path, const std::string &what);

// Whether `path` names an existing file or directory. Unlike std::filesystem::exists, a name
// the system cannot look up (too long, a component not a directory, no permission) is not
// there rather than an exception.
bool path_exists(const std::filesystem::path &path);

// "NNN_<name>": a dump file or folder named after step `index` and its layer, the name made safe
// as one path component (letters, digits and '.' kept, the rest '_', none leading).
std::string dump_name(size_t index, const std::string &name);

}  // namespace vacc
