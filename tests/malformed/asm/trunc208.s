# scale.s — the valid kernel tests/e2e/t_malformed.sh runs malformed .npy
# inputs and launch files against: C[i] = A[i] * M over N int32 elements,
# dealt round-robin to the cores. a0 = A, a1 = M, a2 = C, 