// ONNX import (with shape inference) and, for a model that imports, the whole compiler:
// calibration, quantization, the graph passes, the accelerator lowering and the package.
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "fuzz_targets.h"
#include "vacc/compile/compile_model.h"
#include "vacc/graph/onnx_import.h"

namespace vacc::fuzz {

namespace {

// compile_model reads a file: one per process, rewritten for each input, removed at exit.
class ModelFile {
 public:
  ModelFile() {
    path_ = (std::filesystem::temp_directory_path() / "vacc-fuzz-XXXXXX.onnx").string();
    const int fd = mkstemps(path_.data(), 5);
    if (fd >= 0) close(fd);
  }
  ~ModelFile() { std::remove(path_.c_str()); }
  const std::string &write(const std::string &bytes) {
    if (std::FILE *f = std::fopen(path_.c_str(), "wb")) {
      std::fwrite(bytes.data(), 1, bytes.size(), f);
      std::fclose(f);
    }
    return path_;
  }

 private:
  std::string path_;
};

}  // namespace

void fuzz_onnx(const uint8_t *data, size_t size) {
  const std::string bytes(reinterpret_cast<const char *>(data), size);
  graph::import_onnx_bytes(bytes, "fuzz.onnx");
  static ModelFile file;
  compile::compile_model(file.write(bytes), default_config());
}

}  // namespace vacc::fuzz
