# expect: 3:9: region 'a' is declared twice
.region a input inp 4
.region a input inp 4
