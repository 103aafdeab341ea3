// The output tiling every blocked accelerator operator shares: the output stage of shape
// [N/B, C/BC, H, W, B, BC] is split into tiles of sc.tile_h x sc.tile_w pixels and
// sc.tile_oc channel blocks, ordered (n, [vthread,] oc.o, oh.o, ow.o) outside, or
// (n, [vthread,] oh.o, ow.o, oc.o) with inputs resident (AccelSchedule::Resident::kInputs),
// and (oc.i, oh.i, ow.i, b, c) inside, the channel blocks split across virtual threads when
// sc.vthreads > 1 (the output rows with sc.vthread_rows), and each tile stored by DMA.
#pragma once

#include "vacc/lower/operators.h"
#include "vacc/schedule/schedule.h"

namespace vacc::lower {

struct OutputTiling {
  te::IterVar thread;    // the virtual thread (n without them): inside it, one thread's channels
  te::IterVar channels;  // inside it, per-channel operands (bias) stay the same
  te::IterVar spatial;   // ow.o: inside it, the tile's rows and columns stay the same
  te::IterVar tile;      // the innermost outer loop: inside it, a tile's inputs and accumulator
                         // stages are computed
};
OutputTiling tile_blocked_output(schedule::Schedule &s, const te::Tensor &out,
                                 const AccelSchedule &sc);

}  // namespace vacc::lower
