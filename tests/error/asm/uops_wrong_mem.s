# expect: 2:15: @uops can only be loaded by load.uop
load.inp dram=@uops x=1
