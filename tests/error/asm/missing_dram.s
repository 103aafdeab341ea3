# expect: 2:1: 'load.inp' needs dram=
load.inp sram=0
