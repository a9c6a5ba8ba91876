.if 1
 halt
