# Packages the vacc RTL (top vacc_top) as a Vitis RTL kernel (.xo).
#
#   vivado -mode batch -source package_kernel.tcl \
#          -tclargs <out.xo> <kernel.xml> <rtl_files.f> <part> <work_dir>
#
# rtl_files.f lists the SystemVerilog sources, the generated vacc_pkg.sv first. fpga/build
# writes it and kernel.xml (from the register map, `vacc fpga gen`). Steps follow Xilinx's RTL
# kernel flow: package the RTL as an IP with the kernel properties, then package_xo.
# Untested with a real Vivado: none was available where this was written (docs/fpga.md).

if {[llength $argv] != 5} {
  puts "usage: vivado -mode batch -source package_kernel.tcl -tclargs OUT.xo KERNEL.xml RTL_FILES.f PART WORK_DIR"
  exit 1
}
lassign $argv xo_path kernel_xml file_list part work_dir

set kernel_name vacc_top
set ip_dir [file join $work_dir ip]
file delete -force $ip_dir [file join $work_dir kernel_pack]

# The RTL sources, in the order given.
set fp [open $file_list r]
set sources {}
foreach line [split [read $fp] "\n"] {
  set line [string trim $line]
  if {$line ne "" && [string index $line 0] ne "#"} { lappend sources $line }
}
close $fp

# PART "-" lets Vivado choose: packaging only elaborates the RTL, v++ implements it for the
# platform's own part.
if {$part eq "-"} {
  create_project -force kernel_pack [file join $work_dir kernel_pack]
} else {
  create_project -force kernel_pack [file join $work_dir kernel_pack] -part $part
}
add_files -norecurse $sources
foreach f $sources {
  if {[string match *.sv $f]} { set_property file_type SystemVerilog [get_files $f] }
}
set_property top $kernel_name [current_fileset]
update_compile_order -fileset sources_1

ipx::package_project -root_dir $ip_dir -vendor vacc.dev -library kernel -taxonomy /KernelIP \
  -import_files -set_current false
ipx::unload_core [file join $ip_dir component.xml]
ipx::edit_ip_in_project -upgrade true -name tmp_edit_project -directory $ip_dir \
  [file join $ip_dir component.xml]

set core [ipx::current_core]
set_property core_revision 1 $core
foreach up [ipx::get_user_parameters -of_objects $core] {
  ipx::remove_user_parameter [get_property NAME $up] $core
}

# The recipe of Vitis's RTL Kernel Wizard (package_kernel.tcl): Vivado infers s_axi_control,
# m_axi_gmem, the ap_rst_n reset and the interrupt from the port names; the arguments and their
# offsets come from kernel.xml, so no register map is restated here.
set_property sdx_kernel true $core
set_property sdx_kernel_type rtl $core
set_property supported_families { } $core
set_property auto_family_support_level level_2 $core
ipx::create_xgui_files $core
ipx::associate_bus_interfaces -busif s_axi_control -clock ap_clk $core
ipx::associate_bus_interfaces -busif m_axi_gmem -clock ap_clk $core
ipx::update_checksums $core
ipx::save_core $core
close_project -delete

if {[file exists $xo_path]} { file delete -force $xo_path }
# The Zynq-7000 flow needs only the IP in work/ip; package_xo exists where Vitis is installed.
if {[catch {package_xo -xo_path $xo_path -kernel_name $kernel_name -ip_directory $ip_dir \
              -kernel_xml $kernel_xml} err]} {
  if {[string match "invalid command name*" $err]} {
    puts "package_xo is not available (Vivado without Vitis): packaged the IP in $ip_dir only"
    exit 0
  }
  error $err
}
puts "wrote $xo_path"
