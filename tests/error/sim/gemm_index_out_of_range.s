# expect: instruction 1 (GEMM): field 'acc_factor_*' reaches acc index 2079, beyond its depth 2048
.uop dst=0 src=0 wgt=0
load.uop sram=0 dram=@uops x=1
gemm uops=0:1 loop=100,1 acc=21,0
finish
