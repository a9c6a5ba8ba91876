slli t0, t0, 4096
