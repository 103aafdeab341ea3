# expect: instruction 1 (GEMM): has the overlap flag, so it may touch only ACC bank 1
# expect: its acc index (micro-op dst + acc_factor_*) reaches ACC index 1023
# The first micro-op's dst (1024) lies in bank 1, the second's (1023) in bank 0.
.uop dst=1024 src=0 wgt=0
.uop dst=1023 src=0 wgt=0
load.uop sram=0 dram=@uops x=2
gemm uops=0:2 loop=1,1 acc=0,0 reset overlap
finish
