# Build-time script (cmake -P): synthesizes vacc_top to a generic gate-level netlist with Yosys
# (memories kept as arrays, no FPGA mapping) and writes it as Verilog to OUT, for
# tests/hw/netlist_test.cc. Inputs: YOSYS, PKG (generated vacc_pkg.sv), SOURCES (hw/rtl), OUT.
get_filename_component(dir ${OUT} DIRECTORY)
string(REPLACE ";" " " srcs "${SOURCES}")
file(WRITE ${dir}/netlist.ys "read_verilog -sv -DSYNTHESIS ${PKG} ${srcs}
hierarchy -check -top vacc_top
proc
flatten
opt_expr
opt_clean
opt -nodffe -nosdff
wreduce
peepopt
opt_clean
alumacc
share
opt
memory -nomap
opt_clean
opt -fast -full
techmap
opt -fast
abc -fast
opt -fast
opt_clean
stat
write_verilog -noattr ${OUT}.tmp
")
# An implicitly declared identifier is a construct Yosys did not understand (hw/README.md).
execute_process(COMMAND ${YOSYS} -q -e "is implicitly declared" -l ${dir}/yosys.log
                        -s ${dir}/netlist.ys RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "yosys failed (log: ${dir}/yosys.log)")
endif()
file(RENAME ${OUT}.tmp ${OUT})
