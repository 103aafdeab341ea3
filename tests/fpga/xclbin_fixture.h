// Test fixtures for the FPGA tests: an xclbin container built the way v++ --link lays one out
// (axlf header; EMBEDDED_METADATA carrying the kernel description of kernel.xml, IP_LAYOUT with
// one compute unit, MEM_TOPOLOGY with one DDR bank, CONNECTIVITY of the memory argument), with
// no bitstream. XRT's own parser reads it, so the driver's xclbin checks are exercised on real
// XRT code; only loading it onto a board would need the bitstream. Plus a subprocess runner for
// end-to-end checks of the `vacc` command line.
#pragma once

#include <string>
#include <vector>

namespace vacc::test {

// The bytes of an xclbin for `platform` whose kernel is described by `kernel_xml` (the text
// `vacc fpga gen` writes; its <kernel>, <port> and <arg> elements are carried over as v++ does).
std::vector<char> make_xclbin(const std::string &kernel_xml, const std::string &platform);
void write_file(const std::string &path, const std::vector<char> &bytes);
void write_file(const std::string &path, const std::string &text);
std::string read_text(const std::string &path);

// A fresh empty directory under the system temp dir, named after the running test.
std::string temp_dir(const std::string &tag);

struct CommandResult {
  int exit_code = -1;  // -1: killed by a signal (a crash)
  std::string output;  // stdout and stderr together
};
// Runs `command` through /bin/sh and captures its output.
CommandResult run_command(const std::string &command);

// A directory usable as XILINX_XRT with Debian's XRT: its lib/ is the library directory.
// Call it once per test (it lives in the test's temp_dir("xrt_root")).
std::string xrt_root();

}  // namespace vacc::test
