# expect: instruction 0 (LOAD INP): runs on the load engine, which has no previous engine: clear pop_prev/push_prev
load.inp sram=0 dram=0 x=0 pop_prev
finish
