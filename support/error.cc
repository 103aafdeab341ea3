#include "vacc/support/error.h"

#include <cstdio>
#include <cstdlib>

namespace vacc::detail {

CheckFailure::CheckFailure(const char *file, int line, const char *condition) {
  stream_ << file << ":" << line << ": internal error: check failed: " << condition << " ";
}

CheckFailure::~CheckFailure() {
  std::fprintf(stderr, "%s\n(this is a bug in vacc; please report it)\n", stream_.str().c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace vacc::detail
