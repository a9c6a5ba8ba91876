.globl nothere
 halt
