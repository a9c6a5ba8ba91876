a:
a:
 halt
