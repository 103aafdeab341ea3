# expect: 2:1: ALU field 'imm' = 40000 does not fit its 16 signed bits (range -32768..32767)
alu.add uops=0:1 imm=40000
