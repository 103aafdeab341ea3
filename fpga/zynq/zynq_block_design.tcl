# A Zynq-7000 (PYNQ-Z1 class, xc7z020clg400-1) block design around the vacc_top IP that
# package_kernel.tcl leaves in work/ip: the PS drives s_axi_control through M_AXI_GP0, vacc_top
# reads and writes DDR through S_AXI_HP0, its interrupt goes to IRQ_F2P. Produces a bitstream
# and the .hwh that PYNQ's Overlay class reads.
#
#   vivado -mode batch -source zynq_block_design.tcl -tclargs <ip_dir> <part> <clock_mhz> <out_dir>
#
# UNTESTED: written without Vivado or a board. vacc has no host driver for this path yet (XRT
# does not run on Zynq-7000 PYNQ images); see docs/fpga.md for what a run would need.

if {[llength $argv] != 4} {
  puts "usage: vivado -mode batch -source zynq_block_design.tcl -tclargs IP_DIR PART CLOCK_MHZ OUT_DIR"
  exit 1
}
lassign $argv ip_dir part clock_mhz out_dir

create_project -force vacc_zynq [file join $out_dir vacc_zynq] -part $part
set_property ip_repo_paths [list $ip_dir] [current_project]
update_ip_catalog

create_bd_design vacc_zynq
set ps [create_bd_cell -type ip -vlnv xilinx.com:ip:processing_system7 ps7]
apply_bd_automation -rule xilinx.com:bd_rule:processing_system7 \
  -config {make_external "FIXED_IO, DDR" apply_board_preset "1"} $ps
set_property -dict [list \
  CONFIG.PCW_USE_S_AXI_HP0 {1} \
  CONFIG.PCW_S_AXI_HP0_DATA_WIDTH {64} \
  CONFIG.PCW_USE_FABRIC_INTERRUPT {1} \
  CONFIG.PCW_IRQ_F2P_INTR {1} \
  CONFIG.PCW_FPGA0_PERIPHERAL_FREQMHZ $clock_mhz] $ps

set acc [create_bd_cell -type ip -vlnv vacc.dev:kernel:vacc_top:1.0 vacc]

# Control: PS master -> accelerator registers. Memory: accelerator master -> PS DDR.
apply_bd_automation -rule xilinx.com:bd_rule:axi4 \
  -config {Master "/ps7/M_AXI_GP0" Clk "Auto"} [get_bd_intf_pins vacc/s_axi_control]
apply_bd_automation -rule xilinx.com:bd_rule:axi4 \
  -config {Slave "/ps7/S_AXI_HP0" Clk "Auto"} [get_bd_intf_pins vacc/m_axi_gmem]
connect_bd_net [get_bd_pins vacc/interrupt] [get_bd_pins ps7/IRQ_F2P]

assign_bd_address
validate_bd_design
save_bd_design

set bd [get_files vacc_zynq.bd]
make_wrapper -files $bd -top
add_files -norecurse [file join $out_dir vacc_zynq vacc_zynq.gen sources_1 bd vacc_zynq hdl vacc_zynq_wrapper.v]
set_property top vacc_zynq_wrapper [current_fileset]

launch_runs impl_1 -to_step write_bitstream -jobs 4
wait_on_run impl_1
file copy -force [glob [file join $out_dir vacc_zynq vacc_zynq.runs impl_1 *.bit]] \
  [file join $out_dir vacc.bit]
file copy -force [glob [file join $out_dir vacc_zynq vacc_zynq.gen sources_1 bd vacc_zynq hw_handoff *.hwh]] \
  [file join $out_dir vacc.hwh]
puts "wrote [file join $out_dir vacc.bit] and vacc.hwh"
