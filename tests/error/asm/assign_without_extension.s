# config: small
# expect: 3:1: GEMM flag assign is the extension extensions.gemm_assign, which config 'small' has off; switch it on in the config or zero the accumulators with a reset GEMM
gemm uops=0:1 assign
