.equ X, 1 % 0
