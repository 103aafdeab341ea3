# config: small
# expect: 3:1: ALU operation clip is the extension extensions.alu_clip, which config 'small' has off; switch it on in the config or use max and min
alu.clip uops=0:1 imm=32512
