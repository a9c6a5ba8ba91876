.macro m
 halt
