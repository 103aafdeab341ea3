// Two kinds of failure (STYLE.md): a user's input that cannot be accepted is a
// vacc::Error carrying a message that names the thing at fault and how to fix it; a broken
// internal invariant is a bug and aborts through VACC_CHECK with file:line.
#pragma once

#include <fmt/format.h>

#include <sstream>
#include <stdexcept>
#include <string>

namespace vacc {

// A diagnostic for the user: the message names the file / key / node / instruction at fault.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string &message) : std::runtime_error(message) {}
};

// Throws vacc::Error with a fmt-formatted message.
template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args &&...args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

namespace detail {
// Collects the streamed message of a failed VACC_CHECK and aborts when destroyed.
class CheckFailure {
 public:
  CheckFailure(const char *file, int line, const char *condition);
  [[noreturn]] ~CheckFailure();
  template <typename T>
  CheckFailure &operator<<(const T &value) {
    stream_ << value;
    return *this;
  }

 private:
  std::ostringstream stream_;
};
}  // namespace detail

}  // namespace vacc

// VACC_CHECK(cond) << "context"; aborts with file:line when cond is false (a vacc bug).
#define VACC_CHECK(cond) \
  if (cond) {            \
  } else                 \
    ::vacc::detail::CheckFailure(__FILE__, __LINE__, #cond)
