# expect: 2:1: unknown directive '.section' (known: .region, .data, .uop)
.section text
