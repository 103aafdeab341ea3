#include "vacc/graph/idx.h"

#include <zlib.h>

#include <memory>

namespace vacc::graph {

Tensor read_idx(const std::string &path) {
  gzFile file = gzopen(path.c_str(), "rb");  // reads plain files too
  if (!file) fail("{}: cannot open the IDX file (is dataset-fashion-mnist installed?)", path);
  std::unique_ptr<gzFile_s, int (*)(gzFile)> guard(file, gzclose);
  auto read = [&](void *dst, size_t n) {
    if (gzread(file, dst, static_cast<unsigned>(n)) != static_cast<int>(n)) {
      fail("{}: the IDX file is truncated", path);
    }
  };
  uint8_t magic[4];
  read(magic, 4);
  if (magic[0] != 0 || magic[1] != 0 || magic[2] != 0x08 || magic[3] == 0 || magic[3] > 4) {
    fail("{}: not an unsigned-byte IDX file (bad magic number)", path);
  }
  Shape shape;
  for (int i = 0; i < magic[3]; ++i) {
    uint8_t b[4];
    read(b, 4);
    shape.push_back((int64_t{b[0]} << 24) | (int64_t{b[1]} << 16) | (int64_t{b[2]} << 8) | b[3]);
  }
  if (num_elements(shape) > (int64_t{1} << 32)) fail("{}: implausible IDX shape", path);
  Tensor t(DType::kUInt8, shape);
  read(t.raw(), t.nbytes());
  return t;
}

Tensor normalize_images(const Tensor &images, float mean, float stddev) {
  if (images.rank() != 3 || images.dtype() != DType::kUInt8) {
    fail("expected u8 images [N, H, W], got {}{}", dtype_name(images.dtype()),
         shape_str(images.shape()));
  }
  Tensor out(DType::kFloat32, {images.dim(0), 1, images.dim(1), images.dim(2)});
  const uint8_t *src = images.data<uint8_t>();
  float *dst = out.data<float>();
  for (int64_t i = 0; i < images.size(); ++i) {
    dst[i] = (static_cast<float>(src[i]) / 255.0f - mean) / stddev;
  }
  return out;
}

}  // namespace vacc::graph
