# expect: 2:9: region name '2' must start with a letter or '_' and hold no '+' (dram= reads those as an address)
.region 2 weight wgt 1
load.wgt dram=2 x=1
