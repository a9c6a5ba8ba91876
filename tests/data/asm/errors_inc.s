.macro checked n
    slli a0, a0, \n * 30
.endm
