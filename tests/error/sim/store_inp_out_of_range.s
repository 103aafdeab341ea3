# set: extensions.store_inp=on
# expect: instruction 0 (STORE INP): field 'dram_base' reaches inp index 2049, beyond its depth 2048
store.inp sram=0 dram=2040 y=2 x=2 stride=8
finish
