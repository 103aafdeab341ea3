# expect: 2:21: pad takes four numbers: top,bottom,left,right
load.inp dram=0 pad=1,2
