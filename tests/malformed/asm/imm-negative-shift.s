slli t0, t0, -1
