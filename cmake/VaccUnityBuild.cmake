# vacc_unity_build(DIRECTORIES <dir>... [BATCH <n>])
#
# Compiles the C++ sources of every target defined under <dir>... in batches of <n> (unity
# builds): fmt, nlohmann/json, CLI11, Eigen and the project's own headers are then parsed, and
# their templates instantiated and optimized, once per batch instead of once per file, which
# halves a first build on two cores.
#
# CMake's own UNITY_BUILD writes absolute paths into its batch files; ccache then keys each
# batch on the checkout's location, and a fresh clone elsewhere (CI's) recompiles every batch.
# The batch files here include their sources by paths relative to themselves, so that with
# CCACHE_BASEDIR set (the Makefile sets it) a clone anywhere reuses another's cache.
#
# Left file by file: generated sources, sources with their own compile definitions, options or
# include directories, non-C++ sources, and targets that set UNITY_BUILD themselves.
include_guard(GLOBAL)

function(_vacc_unity_collect_targets dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    _vacc_unity_collect_targets(${sub} sub_targets)
    list(APPEND targets ${sub_targets})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

function(_vacc_unity_batch_target target batch)
  get_target_property(type ${target} TYPE)
  if(NOT type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|EXECUTABLE)$")
    return()
  endif()
  get_target_property(own_unity ${target} UNITY_BUILD)
  if(own_unity)
    return()
  endif()
  get_target_property(sources ${target} SOURCES)
  get_target_property(src_dir ${target} SOURCE_DIR)
  get_target_property(bin_dir ${target} BINARY_DIR)

  set(kept "")
  set(batched "")
  foreach(s IN LISTS sources)
    if(s MATCHES "^\\$<")  # a generator expression: leave it
      list(APPEND kept ${s})
      continue()
    endif()
    get_filename_component(abs ${s} ABSOLUTE BASE_DIR ${src_dir})
    set(alone FALSE)
    if(NOT abs MATCHES "\\.(cc|cpp|cxx)$")
      set(alone TRUE)
    endif()
    foreach(prop GENERATED COMPILE_DEFINITIONS COMPILE_OPTIONS COMPILE_FLAGS INCLUDE_DIRECTORIES
                 SKIP_UNITY_BUILD_INCLUSION)
      get_source_file_property(v ${abs} TARGET_DIRECTORY ${target} ${prop})
      if(v AND NOT v STREQUAL "NOTFOUND")
        set(alone TRUE)
      endif()
    endforeach()
    if(alone)
      list(APPEND kept ${s})
    else()
      list(APPEND batched ${abs})
    endif()
  endforeach()

  list(LENGTH batched n)
  if(n LESS 2)
    return()
  endif()
  # Source i goes to batch i / <batch>; each batch file is rewritten only when its text changes.
  set(out_dir ${bin_dir}/vacc_unity)
  math(EXPR last "(${n} - 1) / ${batch}")
  set(files "")
  foreach(index RANGE ${last})
    math(EXPR first "${index} * ${batch}")
    list(SUBLIST batched ${first} ${batch} members)
    set(text "")
    foreach(abs IN LISTS members)
      file(RELATIVE_PATH rel ${out_dir} ${abs})
      string(APPEND text "#include \"${rel}\"\n")
    endforeach()
    set(f ${out_dir}/${target}_${index}.cc)
    file(CONFIGURE OUTPUT ${f} CONTENT "${text}" @ONLY)
    list(APPEND files ${f})
  endforeach()
  set_property(TARGET ${target} PROPERTY SOURCES ${kept} ${files})
endfunction()

function(vacc_unity_build)
  cmake_parse_arguments(ARG "" "BATCH" "DIRECTORIES" ${ARGN})
  if(NOT ARG_BATCH)
    set(ARG_BATCH 8)
  endif()
  foreach(dir IN LISTS ARG_DIRECTORIES)
    _vacc_unity_collect_targets(${CMAKE_SOURCE_DIR}/${dir} targets)
    foreach(t IN LISTS targets)
      _vacc_unity_batch_target(${t} ${ARG_BATCH})
    endforeach()
  endforeach()
endfunction()
