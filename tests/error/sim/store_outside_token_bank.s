# expect: instruction 5 (STORE OUT): reads ACC index 1024 (bank 1), last written by instruction 1
# expect: no token covers bank 1 yet
# expect: a token from a GEMM/ALU with the overlap flag covers only its own bank
# The ALU's token (bank 0) does not cover the GEMM's write to bank 1, which may still run.
.region c output out 2
.uop dst=1024 src=0 wgt=0
.uop dst=0 src=0 wgt=0
load.uop sram=0 dram=@uops x=2
gemm uops=0:1 loop=1,1 reset overlap
gemm uops=1:2 loop=1,1 reset overlap
alu.add uops=1:2 loop=1,1 imm=1 overlap push_next
store.out sram=0 dram=c x=1 pop_prev
store.out sram=1024 dram=c+1 x=1
finish
