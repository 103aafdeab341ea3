# expect: instruction 0 (LOAD INP): field 'dram_base' = 100000 with y_size 1, x_size 4, x_stride 4 reaches element 100003
load.inp sram=0 dram=100000 x=4 push_next
gemm uops=0:0 pop_prev
finish
