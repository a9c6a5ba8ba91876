add t0, t1, t2, t3, t4
