# expect: deadlock: no engine can proceed; a pop can never be satisfied:
# expect: compute engine: instruction 0 (GEMM) waits for a token from the load engine (pop_prev)
gemm uops=0:0 pop_prev
finish
