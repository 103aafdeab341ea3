# A quantized dense layer on the default config (1x16x16 GEMM core):
#   out[64] = clip((x[64] . W[64x64]^T + bias) >> 10, 0, 127)   (ReLU and requantization)
# Run it:   vacc sim programs/dense_relu.s --engine fsim --dump out=out.npy
.region x    input  inp 4   random 11      # 64 int8 inputs: 4 tiles of 1x16
.region w    weight wgt 16  random 12      # 64x64 int8 weights: 4x4 tiles of 16x16
.region bias weight acc 4                  # 64 int32 biases (zero here; set them with .data)
.region out  output out 4                  # 64 int8 outputs

# micro-ops: GEMM over the 4 input tiles; bias add; in-place ALU
.uop dst=0 src=0 wgt=0
.uop dst=0 src=1 wgt=1
.uop dst=0 src=2 wgt=2
.uop dst=0 src=3 wgt=3
.uop dst=0 src=4 wgt=0
.uop dst=0 src=0 wgt=0

load.inp  sram=0 dram=x x=4
load.wgt  sram=0 dram=w x=16 push_next
load.uop  sram=0 dram=@uops x=6 pop_prev
load.acc  sram=4 dram=bias x=4
gemm      uops=0:1 loop=1,4 acc=0,1 inp=0,0 wgt=0,0 reset
gemm      uops=0:4 loop=1,4 acc=0,1 inp=0,0 wgt=0,4
alu.add   uops=4:5 loop=1,4 dst=0,1 src=0,1
alu.shr   uops=5:6 loop=1,4 dst=0,1 src=0,1 imm=10
alu.max   uops=5:6 loop=1,4 dst=0,1 src=0,1 imm=0
alu.min   uops=5:6 loop=1,4 dst=0,1 src=0,1 imm=127 push_next
store.out sram=0 dram=out x=4 pop_prev push_prev
finish    pop_next
