add t99, t0, t1
