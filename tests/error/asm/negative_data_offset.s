# expect: 3:9: the byte offset must not be negative
.region a input inp 1
.data a -8 0102030405060708
