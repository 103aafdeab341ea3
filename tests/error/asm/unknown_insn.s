# expect: 2:1: unknown instruction 'gemv' (known: load.MEM, store.out, gemm, alu.OP, finish)
gemv uops=0:1
