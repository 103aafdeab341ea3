# ctest script: generate vacc_pkg.sv for CONFIG with HWGEN, then lint the RTL with Verilator
# -Wall (waivers in WAIVERS); any warning fails the test.
execute_process(COMMAND ${HWGEN} --config ${CONFIG} -o ${OUT_DIR} RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "vacc-hwgen failed for ${CONFIG}")
endif()
execute_process(
  COMMAND ${VERILATOR} --lint-only -Wall ${WAIVERS} ${OUT_DIR}/vacc_pkg.sv ${SOURCES}
          --top-module vacc_top
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc OR NOT "${out}" STREQUAL "")
  message(FATAL_ERROR "verilator --lint-only -Wall is not clean for ${CONFIG}:\n${out}")
endif()
