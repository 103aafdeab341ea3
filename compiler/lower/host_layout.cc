#include "vacc/lower/host_layout.h"

#include "vacc/graph/blocked_layout.h"
#include "vacc/support/error.h"

namespace vacc::lower {

Conv2dParams blocked_conv(const isa::HwConfig &c, const Conv2dParams &p) {
  Conv2dParams b = p;
  b.batch = round_up(p.batch, c.batch);
  b.in_channels = round_up(p.in_channels, c.block_in);
  b.out_channels = round_up(p.out_channels, c.block_out);
  return b;
}

Conv2dParams folded_conv(const isa::HwConfig &c, const Conv2dParams &p) {
  Conv2dParams f = blocked_conv(c, p);
  f.in_channels = round_up(p.in_channels * p.kernel_h * p.kernel_w, c.block_in);
  f.height = p.out_height();
  f.width = p.out_width();
  f.kernel_h = f.kernel_w = f.stride_h = f.stride_w = 1;
  f.pad_h = f.pad_w = 0;
  return f;
}

bool should_fold(const isa::HwConfig &c, const Conv2dParams &p) {
  return 2 * p.in_channels <= c.block_in && p.kernel_h * p.kernel_w > 1;
}

namespace {

// The host vectors as int64 tensors and back: the packing itself is graph/blocked_layout.h's.
graph::Tensor tensor_of(graph::Shape shape, const std::vector<int64_t> &values,
                        const char *what) {
  VACC_CHECK(static_cast<int64_t>(values.size()) == graph::num_elements(shape)) << what;
  return graph::Tensor::from_vector<int64_t>(std::move(shape), values);
}

std::vector<int64_t> values_of(const graph::Tensor &t) {
  return {t.data<int64_t>(), t.data<int64_t>() + t.size()};
}

}  // namespace

std::vector<int64_t> pack_data(const isa::HwConfig &c, int64_t n, int64_t ch, int64_t h, int64_t w,
                               const std::vector<int64_t> &data) {
  return values_of(
      graph::block_tensor(tensor_of({n, ch, h, w}, data, "data size"), c.batch, c.block_in));
}

std::vector<int64_t> unpack_output(const isa::HwConfig &c, int64_t n, int64_t o, int64_t h,
                                   int64_t w, const std::vector<int64_t> &out) {
  const graph::Shape blocked = graph::blocked_shape({n, o, h, w}, c.batch, c.block_out);
  return values_of(graph::unblock_tensor(tensor_of(blocked, out, "output size"), {n, o, h, w}));
}

std::vector<int64_t> pack_weight(const isa::HwConfig &c, int64_t o, int64_t ch, int64_t kh,
                                 int64_t kw, const std::vector<int64_t> &weight) {
  return values_of(graph::block_tensor(tensor_of({o, ch, kh, kw}, weight, "weight size"),
                                       c.block_out, c.block_in));
}

std::vector<int64_t> pack_grouped_weight(const isa::HwConfig &c, int64_t o, int64_t ch,
                                         int64_t groups, int64_t kh, int64_t kw,
                                         const std::vector<int64_t> &weight) {
  int64_t parts = 1;
  const graph::Tensor sliced =
      graph::slice_weight_groups(tensor_of({o, ch / groups, kh, kw}, weight, "weight size"),
                                 groups, c.block_in, c.block_out, &parts);
  return values_of(graph::block_tensor(sliced, c.block_out, c.block_in));
}

std::vector<int64_t> pack_bias(const isa::HwConfig &c, int64_t n, int64_t o,
                               const std::vector<int64_t> &bias) {
  // Every batch row, the padded ones included, holds the bias.
  const int64_t rows = round_up(n, c.batch);
  std::vector<int64_t> plain;
  plain.reserve(rows * o);
  for (int64_t i = 0; i < rows; ++i) plain.insert(plain.end(), bias.begin(), bias.begin() + o);
  return values_of(graph::block_tensor(tensor_of({rows, o}, plain, "bias size"), c.batch,
                                       c.block_out));
}

std::vector<int64_t> fold_data(const isa::HwConfig &c, const Conv2dParams &p,
                               const std::vector<int64_t> &data) {
  graph::Attributes window;
  window.set("kernel_shape", std::vector<int64_t>{p.kernel_h, p.kernel_w});
  window.set("strides", std::vector<int64_t>{p.stride_h, p.stride_w});
  window.set("pads", std::vector<int64_t>{p.pad_h, p.pad_w, p.pad_h, p.pad_w});
  const graph::Tensor cols = graph::unfold_windows(
      tensor_of({p.batch, p.in_channels, p.height, p.width}, data, "data size"), window);
  return pack_data(c, p.batch, cols.dim(1), cols.dim(2), cols.dim(3), values_of(cols));
}

std::vector<int64_t> fold_weight(const isa::HwConfig &c, const Conv2dParams &p,
                                 const std::vector<int64_t> &weight) {
  // [O, C, KH, KW] is already [O, C*KH*KW, 1, 1] with channel (c*KH + kh)*KW + kw.
  return pack_weight(c, p.out_channels, p.in_channels * p.kernel_h * p.kernel_w, 1, 1, weight);
}

}  // namespace vacc::lower
