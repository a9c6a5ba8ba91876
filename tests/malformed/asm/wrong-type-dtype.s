vadd.x99 v0, v1, v2
