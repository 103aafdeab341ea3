# The operator families (compiler/ops/<family>/): each folder holds every target's part of its
# operators, and each part is compiled into its target's library, so that the graph level still
# links no backend:
#   def*.cc   the OpDefs (import, shape inference, reference kernel, quantization rule) -> vacc_graph
#   cpu*.cc   the CPU lowerings (te compute + CPU schedule)                             -> vacc_ops_cpu
#   gpu*.cc   the GPU node kernels                                                      -> vacc_ops_gpu
#   accel*.cc the accelerator operator (node mapping, layer, schedule space, lowering)  -> vacc_lower
# A family is a folder with a def.cc.
file(GLOB _vacc_family_defs CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*/def.cc)
set(VACC_OP_FAMILIES "")
foreach(def ${_vacc_family_defs})
  get_filename_component(dir ${def} DIRECTORY)
  list(APPEND VACC_OP_FAMILIES ${dir})
endforeach()
list(SORT VACC_OP_FAMILIES)

# Sets `out` to every family's sources of one part (def, cpu, gpu or accel).
function(vacc_op_family_parts out part)
  set(sources "")
  foreach(dir ${VACC_OP_FAMILIES})
    file(GLOB found CONFIGURE_DEPENDS ${dir}/${part}.cc ${dir}/${part}_*.cc)
    list(SORT found)
    list(APPEND sources ${found})
  endforeach()
  set(${out} ${sources} PARENT_SCOPE)
endfunction()
