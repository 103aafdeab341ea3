# expect: 3:21: region 'x': shape [1000000000000] needs more than 4294967296 bytes, the limit on one tensor
# A region is bounded before its bytes are allocated.
.region x input inp 1000000000000
finish
