frobnicate t0, t1
