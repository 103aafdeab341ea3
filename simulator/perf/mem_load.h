// The timing of vacc_mem_load (hw/rtl/vacc_mem_load.sv): one LOAD into one scratchpad, a 2D
// DMA read (DmaReader) and the zero-padding walker around it. The walker shares the write port
// and yields to arriving data: it steps over a padding element only in a cycle without a data
// element, and over a whole data row in one step.
#pragma once

#include <cstdint>

#include "dma_reader.h"
#include "timed_program.h"

namespace vacc::sim::perf {

class MemLoad {
 public:
  MemLoad(int elem_bytes_log2, int bus_bytes_log2)
      : dma_(elem_bytes_log2, /*max_beats=*/256, bus_bytes_log2) {}

  DmaReader &dma() { return dma_; }
  const DmaReader &dma() const { return dma_; }
  bool busy() const { return dma_.busy() || p_active_; }
  bool padding() const { return p_active_; }
  // Whether the scratchpad's write port is taken this cycle (vacc_mem_load's we_o): a data
  // element arriving, or the padding walker on a padding element.
  bool writes() const { return dma_.elem_valid() || (p_active_ && !walker_on_data()); }

  // Next state; `start` is the LOAD that begins this cycle (null if none).
  void update(const TimedInsn *start, uint64_t base, bool ar_fire, bool r_valid) {
    if (!start && !p_active_ && dma_.idle()) return;
    if (start) {
      const uint32_t width = start->pad_left + start->x_size + start->pad_right;
      const uint32_t height = start->pad_top + start->y_size + start->pad_bottom;
      w_ = width;
      h_ = height;
      x_ = start->x_size;
      y_ = start->y_size;
      pt_ = start->pad_top;
      pl_ = start->pad_left;
      p_active_ = width != 0 && height != 0 &&
                  (start->pad_top || start->pad_bottom || start->pad_left || start->pad_right);
      py_ = px_ = 0;
    } else if (p_active_) {
      const bool is_data = walker_on_data();
      if (is_data || !dma_.elem_valid()) {
        px_ += is_data ? x_ : 1;
        if (px_ == w_) {
          px_ = 0;
          if (++py_ == h_) p_active_ = false;
        }
      }
    }
    DmaReader::Transfer t;
    if (start) t = {base, start->dram_base, start->y_size, start->x_size, start->x_stride};
    dma_.update(start ? &t : nullptr, ar_fire, r_valid);
  }

 private:
  // The padding walker stands on a data row's first element (it steps over the row at once).
  bool walker_on_data() const { return py_ >= pt_ && py_ < pt_ + y_ && px_ == pl_ && x_ != 0; }

  DmaReader dma_;
  // Padding walker (p_active_q, py_q, px_q) and the geometry it walks.
  bool p_active_ = false;
  uint32_t w_ = 0, h_ = 0, x_ = 0, y_ = 0, pt_ = 0, pl_ = 0;
  uint32_t py_ = 0;
  uint64_t px_ = 0;
};

}  // namespace vacc::sim::perf
