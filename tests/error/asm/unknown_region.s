# expect: 2:15: unknown region 'weights' (declare it with .region)
load.wgt dram=weights x=1
