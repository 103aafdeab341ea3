// Writing a whole message to a pipe (the worker protocol's one helper both ends share).
#pragma once

#include <string>

namespace vacc::sweep {

// Writes all of `text` to `fd`, retrying short writes and EINTR; false when the other end is
// gone.
bool write_all(int fd, const std::string &text);

}  // namespace vacc::sweep
