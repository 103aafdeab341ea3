# expect: 2:10: 'load.inp' has no operand 'size' (known: sram, dram, y, x, stride, pad)
load.inp size=4 dram=0
