add t0
