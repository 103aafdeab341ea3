# expect: 2:1: ALU operation clip is the extension extensions.alu_clip, which config 'default' has off; switch it on in the config or use max and min
alu.clip uops=0:1 imm=32512
