#include "tile_output.h"

namespace vacc::lower {

OutputTiling tile_blocked_output(schedule::Schedule &s, const te::Tensor &out,
                                 const AccelSchedule &sc) {
  auto &so = s[out];
  auto ax = so.axis();
  auto [oh_o, oh_i] = so.split(ax[2], sc.tile_h);
  auto [ow_o, ow_i] = so.split(ax[3], sc.tile_w);
  auto [oc_o, oc_i] = so.split(ax[1], sc.tile_oc);
  te::IterVar channels = oc_o, thread = ax[0], rows = oh_o;
  if (sc.vthreads > 1 && sc.vthread_rows) {
    auto [vt, oh_rest] = so.split_nparts(oh_o, sc.vthreads);
    so.bind_vthread(vt);
    rows = oh_rest;
    thread = vt;
  } else if (sc.vthreads > 1) {
    auto [vt, oc_rest] = so.split_nparts(oc_o, sc.vthreads);
    so.bind_vthread(vt);
    channels = oc_rest;
    thread = vt;
  }
  std::vector<te::IterVar> order = {ax[0]};
  if (thread != ax[0]) order.push_back(thread);
  const bool inputs_resident = sc.resident == AccelSchedule::Resident::kInputs;
  if (inputs_resident)
    order.insert(order.end(), {rows, ow_o, channels});
  else
    order.insert(order.end(), {channels, rows, ow_o});
  order.insert(order.end(), {oc_i, oh_i, ow_i, ax[4], ax[5]});
  so.reorder(order);
  so.pragma(oc_i, "dma_copy");
  return {thread, channels, ow_o, inputs_resident ? channels : ow_o};
}

}  // namespace vacc::lower
