.data
.fill 0x7fffffff, 8, 0
