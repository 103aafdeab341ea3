# expect: 2:1: STORE INP is the extension extensions.store_inp, which config 'default' has off; switch it on in the config or store to OUT and load the tiles back (store.inp)
store.inp sram=0 dram=0
