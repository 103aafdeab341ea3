# expect: 2:1: LOAD field 'sram_base' = 9000 does not fit its 13 bits (max 8191)
load.inp sram=9000 dram=0
