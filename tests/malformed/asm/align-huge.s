.align 64
