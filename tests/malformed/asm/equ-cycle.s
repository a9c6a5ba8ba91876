.equ A, B
.equ B, A
 li t0, A
