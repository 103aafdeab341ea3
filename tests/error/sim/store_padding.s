# expect: instruction 0 (STORE OUT): padding is only legal for inp, wgt and acc (fields 'pad_*')
.region o output out 4
store.out dram=o x=4 pad=1,0,0,0
finish
