# pmu_region.s — a kernel that measures a region of itself with the PMU
# (tests/counters: the values it stores must be what the region did).
#
# Arguments: x f32[1024 * cores] (in), y f32[1024 * cores] (out), r s64[8 * cores] (out).
# The event numbers come from the command line (rows of counters/events.def,
# found with `npusim stat --list`), so the kernel never hard-codes them:
#   -D EV0=<class.vector> -D EV1=<path.gm_ub.bytes> -D EV2=<vec.elems.f32> -D EV3=<cycles>
# Region 1 (zero + enable .. read): one 4096-byte GM -> UB move and NV
# vadd.f32 of 16 repeats (1024 elements each). Then counting is disabled,
# two more vadds run and counter 0 is read again (it must not move).
# Region 2 (zero + enable again): two vadds, then counter 0 is read.
# r[core*8 + 0..3] = the four counters after region 1, r[+4] = counter 0
# after the disabled vadds, r[+5] = counter 0 after region 2.
    .include "npu.inc"
.ifndef NV
    .equ NV, 5
.endif
    .equ BYTES, 4096

    .text
    .globl main
main:
    coreinfo s0, s1
    arg a0, 0                   # x
    arg a1, 1                   # y
    arg a2, 2                   # r
    li t0, BYTES
    mul t0, t0, s0
    add a0, a0, t0
    add a1, a1, t0
    slli t0, s0, 6              # 64 bytes of results per core
    add a2, a2, t0
    li t0, EV0
    mtsr pmusel0, t0
    li t0, EV1
    mtsr pmusel1, t0
    li t0, EV2
    mtsr pmusel2, t0
    li t0, EV3
    mtsr pmusel3, t0
    li t4, BYTES                # UB destination of the vadds
    dmaflat t1, t2, BYTES
    vcfg t3, 16
    li t0, 3
    mtsr pmuctl, t0             # zero and enable
    # ---- region 1
    mov.gm2ub.f32 zero, a0, t1, t2
    handoff MTE2, V, 0
    .rept NV
    vadd.f32 t4, zero, zero, t3
    .endr
    handoff V, S, 1
    mfsr t5, pmucnt0
    sdg t5, 0(a2)
    mfsr t5, pmucnt1
    sdg t5, 8(a2)
    mfsr t5, pmucnt2
    sdg t5, 16(a2)
    mfsr t5, pmucnt3
    sdg t5, 24(a2)
    mtsr pmuctl, zero           # disable: counters hold their values
    vadd.f32 t4, zero, zero, t3
    vadd.f32 t4, zero, zero, t3
    mfsr t5, pmucnt0
    sdg t5, 32(a2)
    li t0, 3
    mtsr pmuctl, t0             # zero and enable again
    # ---- region 2
    vadd.f32 t4, zero, zero, t3
    vadd.f32 t4, zero, zero, t3
    mfsr t5, pmucnt0
    sdg t5, 40(a2)
    handoff V, MTE3, 2
    mov.ub2gm.f32 a1, t4, t1, t2
    li t0, 4                    # a loop: 4 conditional branches, 3 taken
1:  addi t0, t0, -1
    bnez t0, 1b
    halt
    .size main, . - main
