.data
.space 0x7fffffffffffffff
