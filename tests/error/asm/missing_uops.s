# expect: 2:1: 'gemm' needs uops=BEGIN:END
gemm loop=1,1
