#include "tile_output.h"

namespace vacc::lower {

OutputTiling tile_blocked_output(schedule::Schedule &s, const te::Tensor &out,
                                 const AccelSchedule &sc) {
  auto &so = s[out];
  auto ax = so.axis();
  auto [oh_o, oh_i] = so.split(ax[2], sc.tile_h);
  auto [ow_o, ow_i] = so.split(ax[3], sc.tile_w);
  auto [oc_o, oc_i] = so.split(ax[1], sc.tile_oc);
  std::vector<te::IterVar> order = {ax[0]};
  te::IterVar channels = oc_o, thread = ax[0];
  if (sc.vthreads > 1 && sc.vthread_rows) {
    auto [vt, oh_rest] = so.split_nparts(oh_o, sc.vthreads);
    so.bind_vthread(vt);
    order.insert(order.end(), {vt, oc_o, oh_rest});
    thread = vt;
  } else if (sc.vthreads > 1) {
    auto [vt, oc_rest] = so.split_nparts(oc_o, sc.vthreads);
    so.bind_vthread(vt);
    order.insert(order.end(), {vt, oc_rest, oh_o});
    channels = oc_rest;
    thread = vt;
  } else {
    order.insert(order.end(), {oc_o, oh_o});
  }
  order.insert(order.end(), {ow_o, oc_i, oh_i, ow_i, ax[4], ax[5]});
  so.reorder(order);
  so.pragma(oc_i, "dma_copy");
  return {thread, channels, ow_o};
}

}  // namespace vacc::lower
