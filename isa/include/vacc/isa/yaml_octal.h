// YAML 1.1 readers, yaml-cpp among them, read an integer written with a leading zero as octal:
// `inp_kib: 032` is 26, `to: 0100` is 64. Config and sweep files refuse that spelling rather
// than take a number the author did not mean.
#pragma once

#include <cctype>
#include <string>

namespace vacc::isa {

// True for "032", "-010": a sign, a zero, then another digit.
inline bool has_octal_spelling(const std::string &scalar) {
  const size_t i = !scalar.empty() && (scalar[0] == '+' || scalar[0] == '-') ? 1 : 0;
  return scalar.size() > i + 1 && scalar[i] == '0' &&
         std::isdigit(static_cast<unsigned char>(scalar[i + 1]));
}

// The diagnostic for such a scalar, after "key 'K': ".
inline std::string octal_spelling_message(const std::string &scalar) {
  return "expected a decimal integer, found '" + scalar +
         "': a leading zero makes YAML read it as octal; write it without the zero";
}

}  // namespace vacc::isa
