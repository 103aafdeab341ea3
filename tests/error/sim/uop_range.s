# expect: instruction 0 (GEMM): field 'uop_begin' = 3 is after 'uop_end' = 1
gemm uops=3:1
finish
