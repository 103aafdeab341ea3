# expect: instruction 0 (GEMM): the run reaches 274844353537 operations, over its limit of
# A GEMM of 1024 x 16383 x 16383 micro-ops would keep fsim busy for hours: the default limit
# stops it before it starts (vacc sim --cycle-limit lifts it).
gemm uops=0:1024 loop=16383,16383 acc=0,0 inp=0,0 wgt=0,0
finish
