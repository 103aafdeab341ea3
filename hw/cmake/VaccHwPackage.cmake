# vacc_generate_hw_package(CONFIG <config.yaml> OUT_DIR <dir>)
#
# Writes <dir>/vacc_pkg.sv for <config.yaml> at configure time, so that Verilator's verilate()
# (which runs Verilator while configuring) finds it. The generator is the small tool
# vacc-hwgen, built once per build tree by a bootstrap sub-build of support/, isa/ and hw/gen/
# (the main build's targets do not exist yet at configure time). CMake re-runs (and the
# package is rewritten only if its text changed) when the config or the generator changes.
include_guard(GLOBAL)

get_filename_component(_vacc_hw_dir "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
set(VACC_HW_DIR ${_vacc_hw_dir} CACHE INTERNAL "hw/ source directory")

function(_vacc_hwgen_bootstrap out_exe)
  get_property(_exe GLOBAL PROPERTY VACC_HWGEN_BOOTSTRAP_EXE)
  if(_exe)
    set(${out_exe} ${_exe} PARENT_SCOPE)
    return()
  endif()
  set(_dir ${CMAKE_BINARY_DIR}/hw/bootstrap)
  set(_args -S ${VACC_HW_DIR}/gen/bootstrap -B ${_dir} -G ${CMAKE_GENERATOR}
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}
      -DCMAKE_C_COMPILER=${CMAKE_C_COMPILER} -DVACC_SOURCE_DIR=${VACC_SOURCE_DIR})
  if(CMAKE_CXX_COMPILER_LAUNCHER)
    list(APPEND _args -DCMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER})
  endif()
  if(NOT EXISTS ${_dir}/CMakeCache.txt)
    message(STATUS "Bootstrapping vacc-hwgen (once per build tree)")
    execute_process(COMMAND ${CMAKE_COMMAND} ${_args}
      RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
    if(_rc)
      message(FATAL_ERROR "vacc-hwgen bootstrap configure failed:\n${_out}")
    endif()
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${_dir} --target vacc-hwgen
    RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  if(_rc)
    message(FATAL_ERROR "vacc-hwgen bootstrap build failed:\n${_out}")
  endif()
  set(_exe ${_dir}/vacc-hwgen)
  set_property(GLOBAL PROPERTY VACC_HWGEN_BOOTSTRAP_EXE ${_exe})
  set(${out_exe} ${_exe} PARENT_SCOPE)
endfunction()

function(vacc_generate_hw_package)
  cmake_parse_arguments(ARG "" "CONFIG;OUT_DIR" "" ${ARGN})
  if(NOT ARG_CONFIG OR NOT ARG_OUT_DIR)
    message(FATAL_ERROR "vacc_generate_hw_package: CONFIG and OUT_DIR are required")
  endif()
  _vacc_hwgen_bootstrap(_exe)
  execute_process(COMMAND ${_exe} --config ${ARG_CONFIG} -o ${ARG_OUT_DIR}
    RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  if(_rc)
    message(FATAL_ERROR "vacc-hwgen failed for ${ARG_CONFIG}:\n${_out}")
  endif()
  # What the package's text depends on: the config and the generator's sources.
  file(GLOB _generator_sources
    ${VACC_HW_DIR}/gen/*.cc ${VACC_HW_DIR}/include/vacc/hw/*.h ${VACC_HW_DIR}/synth/parts.cc
    ${VACC_SOURCE_DIR}/isa/*.cc ${VACC_SOURCE_DIR}/isa/include/vacc/isa/*.h)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${ARG_CONFIG} ${_generator_sources})
  # And at build time: Verilator's rules re-verilate from the RTL sources before CMake re-runs
  # (their generated .cmake files are inputs of the configure step), so an RTL change that needs
  # a new package parameter would otherwise be verilated against the old package. The rule
  # rebuilds the generator and rewrites the package only if its text changed (ninja's restat
  # then leaves everything that reads an unchanged package alone).
  # One at a time: each rule may relink the generator the others run.
  get_property(_pools GLOBAL PROPERTY JOB_POOLS)
  if(NOT _pools MATCHES "vacc_hwgen=")
    set_property(GLOBAL APPEND PROPERTY JOB_POOLS vacc_hwgen=1)
  endif()
  get_filename_component(_bootstrap_dir ${_exe} DIRECTORY)
  add_custom_command(OUTPUT ${ARG_OUT_DIR}/vacc_pkg.sv
    COMMAND ${CMAKE_COMMAND} --build ${_bootstrap_dir} --target vacc-hwgen
    COMMAND ${_exe} --config ${ARG_CONFIG} -o ${ARG_OUT_DIR}
    DEPENDS ${ARG_CONFIG} ${_generator_sources}
    COMMENT "vacc_pkg.sv for ${ARG_CONFIG}"
    JOB_POOL vacc_hwgen
    VERBATIM)
endfunction()
