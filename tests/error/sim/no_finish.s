# expect: the program has no FINISH instruction: the accelerator would never signal done
load.inp sram=0 dram=0 x=0
