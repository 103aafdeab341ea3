# expect: 2:1: 'store.inp' is not an instruction: STORE writes only OUT (store.out)
store.inp sram=0 dram=0
