# expect: 2:1: 'load.out' is not an instruction: OUT is written by store.out
load.out sram=0 dram=0
