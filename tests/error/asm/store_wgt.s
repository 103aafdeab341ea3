# set: extensions.store_inp=on
# expect: 3:1: 'store.wgt' is not an instruction: STORE writes only OUT (store.out) and INP (store.inp)
store.wgt sram=0 dram=0
