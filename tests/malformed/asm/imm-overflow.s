li t0, 0x1ffffffffffffffffffff
