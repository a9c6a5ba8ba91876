.rept -1
 nop
.endr
