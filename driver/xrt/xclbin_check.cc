// Validates an xclbin before any device is touched, so that a wrong file is reported the same
// way with or without a board: missing, not an xclbin, malformed, or not vacc's kernel.
#include <experimental/xrt_xclbin.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xclbin.h>

#include <cstddef>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "vacc/driver/xrt_device.h"
#include "vacc/driver/xrt_kernel.h"
#include "vacc/support/error.h"

namespace vacc::driver {

XclbinInfo check_xclbin(const std::string &path) {
  namespace fs = std::filesystem;
  const char *how = "build one with `fpga/build --config C --platform P` (docs/fpga.md)";
  if (path.empty()) fail("no xclbin given: pass --xclbin FILE; {}", how);
  std::error_code ec;
  if (!fs::exists(path, ec)) fail("xclbin '{}' does not exist; {}", path, how);
  if (!fs::is_regular_file(path, ec)) fail("xclbin '{}' is not a regular file", path);

  // XRT's own message for a bad magic is "Invalid xclbin", and it trusts the section table of
  // what it parses: check the container's structure first, so a damaged file is a message.
  std::vector<char> bytes;
  {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail("cannot read xclbin '{}'", path);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  if (bytes.size() < 8 || std::memcmp(bytes.data(), "xclbin2", 8) != 0)
    fail(
        "'{}' is not an xclbin: it does not start with the magic \"xclbin2\" (v++ --link "
        "writes one); {}",
        path, how);
  const char *rebuild = "it is truncated or damaged: rebuild it with fpga/build";
  if (bytes.size() < sizeof(axlf))
    fail("xclbin '{}' is malformed: {} bytes is shorter than its {}-byte header; {}", path,
         bytes.size(), sizeof(axlf), rebuild);
  axlf top;
  std::memcpy(&top, bytes.data(), sizeof(axlf));
  if (top.m_header.m_length != bytes.size())
    fail("xclbin '{}' is malformed: its header gives a length of {} bytes, the file has {}; {}",
         path, top.m_header.m_length, bytes.size(), rebuild);
  uint64_t sections = top.m_header.m_numSections;
  uint64_t table_end =
      sizeof(axlf) + (sections == 0 ? 0 : sections - 1) * sizeof(axlf_section_header);
  if (sections == 0 || sections > XCLBIN_MAX_NUM_SECTION || table_end > bytes.size())
    fail("xclbin '{}' is malformed: its section table ({} sections) does not fit the file; {}",
         path, sections, rebuild);
  for (uint64_t i = 0; i < sections; ++i) {
    axlf_section_header section;
    std::memcpy(&section,
                bytes.data() + offsetof(axlf, m_sections) + i * sizeof(axlf_section_header),
                sizeof(section));
    if (section.m_sectionOffset > bytes.size() ||
        section.m_sectionSize > bytes.size() - section.m_sectionOffset)
      fail("xclbin '{}' is malformed: section {} (kind {}) lies outside the file; {}", path, i,
           section.m_sectionKind, rebuild);
  }

  xrt::xclbin xclbin;
  try {
    xclbin = xrt::xclbin(bytes);
  } catch (const std::exception &e) {
    fail("xclbin '{}' is malformed: XRT cannot parse it ({}); rebuild it with fpga/build", path,
         e.what());
  }

  XclbinInfo info;
  xrt::xclbin::kernel kernel;
  try {
    info.uuid = xclbin.get_uuid().to_string();
    info.platform = xclbin.get_xsa_name();
    for (const auto &k : xclbin.get_kernels()) {
      info.kernels.push_back(k.get_name());
      if (k.get_name() == xrt_kernel::kKernelName) kernel = k;
    }
  } catch (const std::exception &e) {
    fail("xclbin '{}' is malformed: XRT cannot read its kernels ({})", path, e.what());
  }
  if (!kernel)
    fail(
        "xclbin '{}' has no kernel '{}' (it holds: {}); it was not built from vacc's RTL "
        "kernel: build it with fpga/build",
        path, xrt_kernel::kKernelName,
        info.kernels.empty() ? std::string("no kernels")
                             : fmt::format("{}", fmt::join(info.kernels, ", ")));

  // The register map is the contract: an xclbin packaged from another kernel.xml would make
  // XRT write the arguments to the wrong registers.
  std::vector<xrt::xclbin::arg> args = kernel.get_args();
  for (const xrt_kernel::KernelArg &want : xrt_kernel::kernel_args()) {
    const xrt::xclbin::arg *found = nullptr;
    for (const auto &a : args)
      if (a.get_name() == want.name) found = &a;
    if (found == nullptr)
      fail(
          "xclbin '{}': kernel '{}' has no argument '{}'; it was packaged from a different "
          "kernel.xml: rebuild it with fpga/build",
          path, xrt_kernel::kKernelName, want.name);
    if (found->get_offset() != want.offset)
      fail(
          "xclbin '{}': argument '{}' of kernel '{}' is at offset 0x{:X}, but vacc's register "
          "map puts it at 0x{:X}; rebuild the xclbin with fpga/build",
          path, want.name, xrt_kernel::kKernelName, found->get_offset(), want.offset);
  }
  return info;
}

}  // namespace vacc::driver
