# expect: instruction 1 (ALU): has the overlap flag, so it may touch only ACC bank 0
# expect: its src index (micro-op src + src_factor_*) reaches ACC index 1024
# expect: clear the flag or keep the instruction inside one half of ACC
# The default config's ACC has 2048 entries: bank 0 is 0..1023, bank 1 is 1024..2047.
.uop dst=0 src=1024 wgt=0
load.uop sram=0 dram=@uops x=1
alu.add uops=0:1 loop=1,1 dst=0,0 src=0,0 overlap
finish
