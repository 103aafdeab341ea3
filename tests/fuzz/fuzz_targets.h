// The fuzz targets: one entry per input vacc reads from a user, each taking the raw bytes of
// one input. The same functions run under libFuzzer (`make fuzz`, fuzz_main.cc, clang only)
// and in the normal test suite, which replays every kept input under tests/fuzz/<target>/
// (replay_test.cc): a crash a fuzzer found stays fixed without clang.
//
// The contract each target checks: bad input ends in a vacc::Error (a diagnostic for the
// user); anything else (another exception, an abort, a sanitizer report, a hang) is a bug.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "vacc/isa/config.h"

namespace vacc::fuzz {

struct Target {
  const char *name;  // also the folder of its kept inputs: tests/fuzz/<name>/
  void (*run)(const uint8_t *data, size_t size);
};

// Every target, in a fixed order.
const std::vector<Target> &targets();
const Target *find_target(const std::string &name);

// Process-wide settings every target assumes (small resource limits, so that no input can
// make one run long); call once before running inputs.
void set_up();

// The bundled default config, which the program targets decode and run against.
const isa::HwConfig &default_config();

// Runs one input through `target`; a vacc::Error is the expected end of a bad input and is
// swallowed, anything else escapes to the caller (libFuzzer reports it as a crash).
void run_input(const Target &target, const uint8_t *data, size_t size);

// The targets (one file each).
void fuzz_config(const uint8_t *data, size_t size);      // YAML config reader and validator
void fuzz_asm(const uint8_t *data, size_t size);         // assembler
void fuzz_disasm(const uint8_t *data, size_t size);      // program loader, decoder, disassembler
void fuzz_fsim(const uint8_t *data, size_t size);        // a program file run on fsim
void fuzz_package(const uint8_t *data, size_t size);     // .vpkg loader and its command lists
void fuzz_onnx(const uint8_t *data, size_t size);        // ONNX import, shapes, compile
void fuzz_npy(const uint8_t *data, size_t size);         // .npy reader
void fuzz_sweep_spec(const uint8_t *data, size_t size);  // sweep spec reader and its points
void fuzz_remote(const uint8_t *data, size_t size);      // remote run request and reply

}  // namespace vacc::fuzz
