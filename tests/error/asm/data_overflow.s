# expect: 3:7: data [0, 20) overflows region 'a' of 16 bytes
.region a input inp 1
.data a 0 0102030405060708090a0b0c0d0e0f1011121314
