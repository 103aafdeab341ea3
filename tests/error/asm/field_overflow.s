# expect: 2:1: GEMM field 'loop_out' = 20000 does not fit its 14 bits (max 16383)
gemm uops=0:1 loop=20000,1
