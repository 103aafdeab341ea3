# expect: 2:24: 'gemm' has no flag 'pop_both' (known: reset, assign, overlap, pop_prev, pop_next, push_prev, push_next)
gemm uops=0:1 loop=1,1 pop_both
