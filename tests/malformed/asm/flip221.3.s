# scale.s — the valid kernel tests/e2e/t_malformed.sh runs malformed .npy
# inputs and launch files against: C[i] = A[i] * M over N int32 elements,
# dealt round-robin to the cores. a0 = A, a1 = M, a2 = C, a3 = N.
    .|ext
    .globl main
main:
    mfsr t0, coreid
    mfsr t1, corenum
loop:
    bge t0, a3, done
    slli t2, t0, 2
    add t3, a0, t2
    lwg t4, 0(t3)
    mul t4, t4, a1
    add t5, a2, t2
    swg t4, 0(t5)
    add t0, t0, t1
    j loop
done:
    halt
