# expect: 2:6: unknown memory 'img' (known: uop, wgt, inp, acc, out)
load.img sram=0 dram=0
