# config: small
# expect: 3:1: ALU operation shr_clip is the extension extensions.alu_shr_clip, which config 'small' has off; switch it on in the config or use shr, then clip (or max and min)
alu.shr_clip uops=0:1 src=0,0 bounds=-128,127
