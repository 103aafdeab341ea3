# expect: instruction 0 (LOAD INP): field 'sram_base' reaches inp index 2050, beyond its depth 2048
.region a input inp 8
load.inp sram=2043 dram=a x=8
finish
