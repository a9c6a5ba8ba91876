.bss
.zero 0xffffffffffff
