// Reader for the IDX format of the (Fashion-)MNIST data sets, gzip-compressed or not, as
// Debian's dataset-fashion-mnist installs them. vacc evaluates the bundled model on the
// 10k test images read from there rather than from a committed copy.
#pragma once

#include <string>

#include "vacc/graph/tensor.h"

namespace vacc::graph {

inline constexpr const char *kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

// An unsigned-byte IDX file as a u8 tensor of its dimensions (images: [N, 28, 28], labels:
// [N]). Throws vacc::Error naming the file when it is missing, truncated or not IDX.
Tensor read_idx(const std::string &path);

// Normalizes u8 images [N, H, W] into float32 [N, 1, H, W] as (x / 255 - mean) / std.
Tensor normalize_images(const Tensor &images, float mean, float stddev);

}  // namespace vacc::graph
