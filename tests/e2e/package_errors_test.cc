// One case per diagnostic of packages and the graph executor: a file that is not a package,
// another format version, a corrupt or truncated file, a package for another config, a bad
// reference inside the header, and inputs that do not fit the model. Each message must name
// the file (or the input) and say what to do.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "vacc/compile/compile_model.h"
#include "vacc/host/reference_kernels.h"
#include "vacc/isa/package.h"
#include "vacc/runtime/graph_executor.h"
#include "vacc/support/error.h"
#include "vacc/support/npy.h"

namespace vacc {
namespace {

const std::string kModel = std::string(VACC_SOURCE_DIR) + "/models/fashion_mnist_cnn.onnx";

isa::HwConfig config_named(const std::string &name) {
  return isa::load_config(std::string(VACC_SOURCE_DIR) + "/configs/" + name + ".yaml");
}

std::string error_of(const std::function<void()> &action) {
  try {
    action();
  } catch (const Error &e) {
    return e.what();
  }
  return "(no error)";
}

// A float32 .npy file of version 1.0 that claims `shape` (a Python tuple) and holds no data.
std::vector<uint8_t> npy_header(const std::string &shape) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  header.append(63 - (10 + header.size()) % 64, ' ');
  header.push_back('\n');
  std::vector<uint8_t> bytes = {0x93,
                                'N',
                                'U',
                                'M',
                                'P',
                                'Y',
                                1,
                                0,
                                uint8_t(header.size() & 0xff),
                                uint8_t(header.size() >> 8)};
  bytes.insert(bytes.end(), header.begin(), header.end());
  return bytes;
}

class PackageErrors : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    package_ = new isa::Package(compile::compile_model(kModel, config_named("default")).package);
    path_ = temp_path("package_errors.vpkg");
    isa::save_package(*package_, path_);
    std::ifstream in(path_, std::ios::binary);
    bytes_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  static void TearDownTestSuite() {
    delete package_;
    for (const std::string &f : temp_files_) std::filesystem::remove(f);
  }
  // A file in the temporary folder that no other test process uses: ctest runs each test of
  // this suite in its own process, in parallel.
  // Removed when the suite ends.
  static std::string temp_path(const std::string &name) {
    temp_files_.push_back(testing::TempDir() + "/" + std::to_string(getpid()) + "_" + name);
    return temp_files_.back();
  }
  // Writes `bytes` to a new file and returns its path.
  static std::string write(const std::string &name, const std::vector<uint8_t> &bytes) {
    const std::string p = temp_path(name);
    std::ofstream(p, std::ios::binary)
        .write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
    return p;
  }

  static isa::Package *package_;
  static std::string path_;
  static std::vector<uint8_t> bytes_;
  static std::vector<std::string> temp_files_;
};
isa::Package *PackageErrors::package_ = nullptr;
std::string PackageErrors::path_;
std::vector<uint8_t> PackageErrors::bytes_;
std::vector<std::string> PackageErrors::temp_files_;

TEST_F(PackageErrors, MissingFile) {
  EXPECT_EQ(error_of([] { isa::load_package("/nonexistent/m.vpkg"); }),
            "/nonexistent/m.vpkg: cannot open package file");
}

TEST_F(PackageErrors, NotAPackage) {
  const std::string p =
      write("not_a_package.vpkg", {'h', 'e', 'l', 'l', 'o', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                   0,   0,   0,   0,   0,   0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  EXPECT_EQ(error_of([&] { isa::load_package(p); }),
            p + ": not a vacc package (bad magic; expected a .vpkg written by `vacc compile`)");
}

TEST_F(PackageErrors, OtherFormatVersion) {
  auto b = bytes_;
  b[8] = 99;
  const std::string p = write("version.vpkg", b);
  EXPECT_EQ(error_of([&] { isa::load_package(p); }),
            p + ": package format version 99 is not supported (this vacc reads version 2): "
                "recompile the model with `vacc compile`");
}

// Version 1 packages lack the model's own MACs per step (utilization would count padding).
TEST_F(PackageErrors, VersionOnePackage) {
  auto b = bytes_;
  b[8] = 1;
  const std::string p = write("version1.vpkg", b);
  EXPECT_EQ(error_of([&] { isa::load_package(p); }),
            p + ": package format version 1 is not supported (this vacc reads version 2): "
                "recompile the model with `vacc compile`");
}

TEST_F(PackageErrors, CorruptByte) {
  auto b = bytes_;
  b[b.size() - 100] ^= 0x40;  // inside the blobs
  const std::string p = write("corrupt.vpkg", b);
  EXPECT_EQ(error_of([&] { isa::load_package(p); }),
            p + ": corrupt package (checksum mismatch): recompile the model with `vacc compile`");
}

TEST_F(PackageErrors, Truncated) {
  auto b = bytes_;
  b.resize(200);
  const std::string p = write("truncated.vpkg", b);
  const std::string e = error_of([&] { isa::load_package(p); });
  EXPECT_NE(e.find(p + ": truncated package (header of "), std::string::npos) << e;
}

TEST_F(PackageErrors, InconsistentHeader) {
  isa::Package bad = *package_;
  bad.steps[3].inputs[0] = 9999;
  const std::string p = temp_path("inconsistent.vpkg");
  isa::save_package(bad, p);
  const std::string e = error_of([&] { isa::load_package(p); });
  EXPECT_NE(e.find(p + ": step 3 ('" + bad.steps[3].name + "', " + bad.steps[3].op +
                   ") refers to tensor 9999"),
            std::string::npos)
      << e;
}

TEST_F(PackageErrors, HostStepCannotJoinAProgram) {
  isa::Package bad = *package_;
  size_t host = 0;
  while (bad.steps[host].commands) ++host;
  bad.steps[host].joins_previous = true;
  const std::string p = temp_path("joins.vpkg");
  isa::save_package(bad, p);
  const std::string e = error_of([&] { isa::load_package(p); });
  EXPECT_NE(e.find(p + ": step " + std::to_string(host) + " ('" + bad.steps[host].name +
                   "') joins the program of the step before it, but only an accelerator step "
                   "that follows one can: recompile the package"),
            std::string::npos)
      << e;
}

TEST_F(PackageErrors, ZeroPointOutsideInt8IsRefusedNamingTheTensor) {
  isa::Package bad = *package_;
  isa::PackageTensor &t = bad.tensors[bad.outputs[0]];
  t.zero_point = 300;
  const std::string p = temp_path("zero_point.vpkg");
  isa::save_package(bad, p);
  const std::string e = error_of([&] { isa::load_package(p); });
  EXPECT_NE(e.find(p + ": tensor '" + t.name +
                   "' has zero point 300, outside an int8's [-128, 127]: recompile the model"),
            std::string::npos)
      << e;
}

// Resource bounds (support/limits.h): what a package claims is checked before the runtime
// allocates it.
TEST_F(PackageErrors, HugeTensorIsRefusedNamingIt) {
  isa::Package bad = *package_;
  isa::PackageTensor &t = bad.tensors[bad.outputs[0]];
  t.shape = {int64_t{1} << 40, int64_t{1} << 30};  // 2^72 bytes: overflows 64 bits
  const std::string p = temp_path("huge_tensor.vpkg");
  isa::save_package(bad, p);
  const std::string e = error_of([&] { isa::load_package(p); });
  EXPECT_NE(e.find(p + ": tensor '" + t.name +
                   "': shape [1099511627776,1073741824] needs more "
                   "than"),
            std::string::npos)
      << e;
}

TEST_F(PackageErrors, HugeArenaIsRefused) {
  isa::Package bad = *package_;
  bad.arena_bytes = int64_t{1} << 50;
  const std::string p = temp_path("huge_arena.vpkg");
  isa::save_package(bad, p);
  const std::string e = error_of([&] { isa::load_package(p); });
  EXPECT_NE(e.find(p + ": the activation arena of 1125899906842624 bytes is outside [0, "),
            std::string::npos)
      << e;
}

TEST_F(PackageErrors, NpyWithHugeShapeIsRefusedBeforeAllocating) {
  // The header claims 2^40 x 2^30 elements; the file holds none of them.
  const std::string p = write("huge.npy", npy_header("(1099511627776, 1073741824)"));
  const std::string e = error_of([&] { read_npy(p); });
  EXPECT_NE(e.find(p + ": .npy data: shape [1099511627776,1073741824] needs more than"),
            std::string::npos)
      << e;
}

TEST_F(PackageErrors, NpyWithAbsurdDimensionIsRefused) {
  const std::string p = write("absurd.npy", npy_header("(99999999999999999999999,)"));
  EXPECT_EQ(error_of([&] { read_npy(p); }),
            p + ": .npy shape (99999999999999999999999,) has an absurd dimension");
}

TEST_F(PackageErrors, CompiledForAnotherConfig) {
  const isa::HwConfig small = config_named("small");
  const std::string e = error_of([&] { package_->check_config(small, path_); });
  EXPECT_NE(e.find(path_ + ": the package was compiled for config 'default', whose accelerator "
                           "differs from config 'small'"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("recompile it with `vacc compile --config"), std::string::npos) << e;
}

TEST_F(PackageErrors, WrongNumberOfInputs) {
  host::ReferenceKernels cpu(*package_);
  auto device = driver::open_device("fsim", config_named("default"));
  runtime::GraphExecutor exec(*package_, cpu, device.get(), config_named("default"));
  EXPECT_EQ(error_of([&] { exec.run({}); }), "the model takes 1 input(s), got 0");
}

TEST_F(PackageErrors, WrongInputShape) {
  host::ReferenceKernels cpu(*package_);
  auto device = driver::open_device("fsim", config_named("default"));
  runtime::GraphExecutor exec(*package_, cpu, device.get(), config_named("default"));
  runtime::HostTensor x;
  x.shape = {1, 1, 14, 14};
  x.data.resize(14 * 14 * 4);
  EXPECT_EQ(error_of([&] { exec.run({x}); }),
            "input 0 ('input') needs f32 [1,1,28,28], got f32 [1,1,14,14]");
}

TEST_F(PackageErrors, AcceleratorStepsNeedADevice) {
  host::ReferenceKernels cpu(*package_);
  EXPECT_EQ(
      error_of([&] { runtime::GraphExecutor(*package_, cpu, nullptr, config_named("default")); }),
      "the package has accelerator steps: run it on a device (--sim or --fpga)");
}

TEST_F(PackageErrors, InputFileOfWrongShape) {
  NpyArray a;
  a.dtype = "f4";
  a.shape = {3, 3};
  a.data.resize(9 * 4);
  const std::string p = temp_path("wrong_shape.npy");
  write_npy(p, a);
  EXPECT_EQ(error_of([&] {
              compile::read_input_npy(p, {1, 1, 28, 28}, "input 'input' of m.onnx");
            }),
            p + ": holds an array of shape [3,3] but input 'input' of m.onnx needs [1,1,28,28] "
                "(float32)");
}

TEST_F(PackageErrors, InputFileOfWrongDtype) {
  NpyArray a;
  a.dtype = "i4";
  a.shape = {1, 28, 28};
  a.data.resize(28 * 28 * 4);
  const std::string p = temp_path("wrong_dtype.npy");
  write_npy(p, a);
  EXPECT_EQ(error_of([&] {
              compile::read_input_npy(p, {1, 1, 28, 28}, "input 'input' of m.onnx");
            }),
            p + ": holds i4 elements but input 'input' of m.onnx needs float32 ('<f4')");
}

TEST_F(PackageErrors, CalibrationFileOfWrongShape) {
  NpyArray a;
  a.dtype = "f4";
  a.shape = {4, 1, 14, 14};
  a.data.resize(4 * 14 * 14 * 4);
  const std::string p = temp_path("wrong_calibration.npy");
  write_npy(p, a);
  compile::CompileOptions o;
  o.calibration = p;
  const std::string e =
      error_of([&] { compile::compile_model(kModel, config_named("default"), o); });
  EXPECT_EQ(e, p + ": calibration inputs must be float32 [M, 1,28,28] for input 'input', got f4 "
                   "[4,1,14,14]");
}

// --max-layer-loss reads the model from its file: a model given as bytes (the Python module's
// in-memory models) gets a message instead.
TEST_F(PackageErrors, MaxLayerLossNeedsTheModelFile) {
  std::ifstream in(kModel, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  compile::CompileOptions o;
  o.max_layer_loss_db = 20;
  const std::string e = error_of(
      [&] { compile::compile_model_bytes(bytes, "in-memory", config_named("default"), o); });
  EXPECT_EQ(e,
            "in-memory: --max-layer-loss compares each layer against the model read from its "
            "file with the calibration .npy; compile the model from a file, or name the layers "
            "to keep in float (keep_float)");
}

}  // namespace
}  // namespace vacc
