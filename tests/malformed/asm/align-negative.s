.align -3
