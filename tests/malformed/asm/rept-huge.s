.rept 100000000
 nop
.endr
