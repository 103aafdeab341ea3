# expect: 2:1: micro-op field 'dst' = 5000 does not fit its 11 bits (max 2047)
.uop dst=5000 src=0 wgt=0
