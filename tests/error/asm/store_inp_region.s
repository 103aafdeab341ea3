# set: extensions.store_inp=on
# expect: 4:23: store.inp writes the INP scratchpad: dram= takes the first INP index, a number
.region o output out 4
store.inp sram=0 dram=o x=4
