# expect: 2:15: expected a number, found '1x'
load.inp sram=1x dram=0
