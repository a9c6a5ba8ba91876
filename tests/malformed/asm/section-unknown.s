.section .weird
 halt
