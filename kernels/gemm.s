# gemm.s — C = A x B on the cube. A (m x k) and B (k x n) row-major in GM,
# C (m x n) row-major; any m, n, k (tails handled); SPMD over tiles of C;
# double-buffered GM -> L1 -> L0A/L0B -> cube -> L0C -> FIX -> GM.
# docs/kernels.md has the diagram, the numbers and how to run it.
#
#   npusim ref gemm --m 300 --n 200 --k 500 --dtype f16 --out f32 -o DIR
#   npusim asm kernels/gemm.s -I kernels/include -D DT=1 -D ODT=0 -o gemm.elf
#
# Arguments: a0 = A, a1 = B, a2 = C, a3 = m, a4 = n, a5 = k.
# Defines:
#   DT   input dtype (isa/dtypes.def number): 1 f16, 2 bf16, 7 s8
#   ODT  output dtype: 0 f32, 1 f16, 2 bf16 (float inputs; FIX rounds RNE),
#        5 s32 (s8 inputs)
#   BM, BN, BK  the tile: C tiles of BM x BN, L0 k steps of BK (defaults
#        128 x 128 x 128 for 2-byte inputs, 128 x 128 x 256 for s8: one
#        32 KB L0A / L0B buffer each, a 64 KB L0C buffer)
#   BKL  k of an L1 step: 2 BK (default) or BK
#   L0CS L0C slots: 2 when two BM x BN fp32 tiles fit the 128 KB L0C (the
#        drain of a tile overlaps the next tile's mmads), else 1 (e.g. BN =
#        256: the next tile's first mmad waits for the drain)
#
# Tiles of C (mt, nt) are numbered t = mt * NT + nt and dealt round robin:
# core c computes tiles c, c + corenum, ... Each tile runs KT = ceil(k/BKL)
# L1 steps of up to two L0 sub-steps each:
#   MTE2  (L1 step, slot s1) A[m0:+mt, k0:+kk1] -> L1A[s1] by nd2nz (NZ: k
#         block k1 of C0 columns at k1 * BM * 32, mt lines padded to 16);
#         B[k0:+kk1, n0:+nt] -> L1B[s1] by nd2nz (NZ: column block nb of C0
#         columns at nb * BKL * 32, kk1 lines); one instruction each, so
#         the GM latency is paid twice per 2 BK of k;
#   MTE1  (sub-step j, L0 slot j) the sub-step's k blocks of L1A[s1] ->
#         L0A[j]: per k block, its M1 fractals to L0A's ZZ order (fractal
#         (m1, k1) at (m1 * KA1 + k1) * 512); L1B[s1] lines j*BK.. ->
#         L0B[j] with .trans, one instruction per column block (each 16x16
#         (32x32 for s8) unit transposed becomes ZN fractal(s) (k1, n1));
#   M     mmad L0C[c] (+)= L0A[j] x L0B[j] (init on the very first sub-step).
# After the last step FIX drains L0C[c] to C (row-major, cast to ODT).
# s1 alternates every L1 step, j is the sub-step, c (L0C slot) alternates
# every tile: the loads of L1 step i+1, the L0 fill of sub-step 1 and the
# drain of tile t-1 all overlap the mmads.
#
# Synchronisation (flag id = slot; "free" flags are set once before the
# loop and waited once after it, so none is left set):
#   MTE2: wait MTE1->MTE2[s1] (L1[s1] free) .. A, B .. set MTE2->MTE1[s1]
#   MTE1: wait MTE2->MTE1[s1]
#         per sub-step j: wait M->MTE1[j] (L0[j] free) .. moves .. set MTE1->M[j]
#         set MTE1->MTE2[s1]
#   M:    (tile start) wait FIX->M[c] (L0C[c] free)
#         per sub-step j: wait MTE1->M[j] .. mmad .. set M->MTE1[j]
#         (tile end) set M->FIX[c]
#   FIX:  wait M->FIX[c] .. fix.l0c2gm .. set FIX->M[c]
# s8 only: the L1 B slots are zeroed once at the start (V: vdup into UB,
# MTE3: ub2l1; V->MTE3 and MTE3->MTE2 flags), because a 32x32 transpose unit
# reads up to ceil32(kk) lines of which nd2nz writes ceil16(kk); the extra
# lines only feed k positions >= kk, which mmad ignores, but they must not
# be uninitialised reads.

    .include "npu.inc"

.ifndef DT
    .equ DT, 1
.endif
.ifndef ODT
  .if DT == 7
    .equ ODT, 5
  .else
    .equ ODT, 0
  .endif
.endif

.if (DT == 1) || (DT == 2)
    .equ ESZ, 2
    .equ LOGESZ, 1
    .equ LOGC0, 4                       # 16 elements per 32-byte block
  .ifndef BK
    .equ BK, 128
  .endif
.elif DT == 7
    .equ ESZ, 1
    .equ LOGESZ, 0
    .equ LOGC0, 5
  .ifndef BK
    .equ BK, 256
  .endif
.else
    .error "DT must be 1 (f16), 2 (bf16) or 7 (s8)"
.endif
.if DT == 7
  .if ODT != 5
    .error "s8 inputs accumulate in s32: ODT must be 5"
  .endif
.elif (ODT != 0) && (ODT != 1) && (ODT != 2)
    .error "float inputs: ODT must be 0 (f32), 1 (f16) or 2 (bf16)"
.endif
.if (ODT == 0) || (ODT == 5)
    .equ LOGOSZ, 2
.else
    .equ LOGOSZ, 1
.endif
.ifndef BM
    .equ BM, 128
.endif
.ifndef BN
    .equ BN, 128
.endif
.if (BM % 16) || (BN % 32) || (BK % 32) || (BM < 16) || (BN < 32) || (BK < 32)
    .error "BM must be a multiple of 16, BN and BK multiples of 32"
.endif

.ifndef BKL
    .equ BKL, 2 * BK                    # k of an L1 step: two L0 sub-steps
.endif
.if (BKL != BK) && (BKL != 2 * BK)
    .error "BKL must be BK or 2 * BK"
.endif
    .equ PA, BM * 32                    # L1A column-block pitch (BM lines)
    .equ PB, BKL * 32                   # L1B column-block pitch (BKL lines)
    .equ BSTEP, 512 * (3 - ESZ)         # L0B bytes per L1 column block (1 or 2 fractals)
    .equ L1A, 0
    .equ L1A_SLOT, BM * BKL * ESZ
    .equ L1B, 2 * L1A_SLOT
    .equ L1B_SLOT, BKL * BN * ESZ
    .equ L0A_SLOT, BM * BK * ESZ
    .equ L0B_SLOT, BK * BN * ESZ
    .equ L0C_SLOT, BM * BN * 4
.ifndef L0CS
  .if 2 * L0C_SLOT <= 131072
    .equ L0CS, 2                        # L0C slots: 2 (drain overlaps the next tile) ...
  .else
    .equ L0CS, 1                        # ... or 1 for a 128 KB tile (BM x BN = 32768)
  .endif
.endif
    .equ CLAST, L0CS - 1                # L0C slot of the odd tiles
.if (2 * L0A_SLOT > 65536) || (2 * L0B_SLOT > 65536) || (L0CS * L0C_SLOT > 131072) || (L1B + 2 * L1B_SLOT > 524288)
    .error "tile too large for L0A/L0B (64 KB), L0C (128 KB) or L1 (512 KB) with double buffering"
.endif
.if (L0A_SLOT % 512) || (L0B_SLOT % 512)
    .error "tile buffers must be 512-byte aligned"
.endif

    .include "gemm.inc"                 # ldnz, ltrans, drain, ctile_store

# ---- the dtype-specific cube instruction (data moves: gemm.inc) -------------
.if DT == 1
.macro mm c, a, b, cfg
    mmad.f16.f32 \c, \a, \b, \cfg
.endm
.elif DT == 2
.macro mm c, a, b, cfg
    mmad.bf16.f32 \c, \a, \b, \cfg
.endm
.else
.macro mm c, a, b, cfg
    mmad.s8.s32 \c, \a, \b, \cfg
.endm
.endif

# Register map:
#   s0 coreid, then the k of the current L1 step  s1 corenum  s2 A  s3 B  s4 C  s5 m  s6 n  s7 k
#   s8 tile index  s9 tiles  s10 NT (tiles along n)  s11 KT (L1 steps)
#   a0 m0  a1 n0  a2 rows of the tile  a3 columns of the tile  a4 L1 step
#   a5 L1 slot parity  a6 A nd2nz strides  a7 B nd2nz strides
#   t0..t6 gp tp sp: scratch

# L0 sub-step \j (0: k [0, BK) of the L1 step, 1: [BK, 2 BK)) of an L1
# step in L1 slot \s1, for a tile in L0C slot \c. L0 slot = \j.
.macro l0step j, s1, c
    li t0, BK
.if \j == 0
    min t2, s0, t0                      # kk: k of this sub-step
.else
    addi t2, s0, -BK
    min t2, t2, t0
.endif
    # ---- MTE1: the sub-step's k blocks of L1A -> L0A (ZZ), L1B -> L0B (.trans)
    wait_flag M, MTE1, \j               # L0[j] free
    ceilshr t4, t2, LOGC0               # KA1 = ceil(kk / C0)
    ceilshr t3, a2, 4                   # M1
    li t5, 512 << 16
    or t5, t5, t3                       # M1 fractals of a k block ...
    slli t6, t4, 9 + 32
    ori t6, t6, 512                     # ... to (m1 * KA1 + k1) * 512
    li gp, \j * L0A_SLOT
    li tp, L1A + \s1 * L1A_SLOT + \j * (BK >> LOGC0) * PA
.Lat_\@:
    mov.l12l0a gp, tp, t5, t6
    addi gp, gp, 512
    addi tp, tp, PA
    addi t4, t4, -1
    bnez t4, .Lat_\@
    slli t3, a3, LOGESZ
    ceilshr t3, t3, 5                   # NB: 32-byte column blocks
.if ESZ == 2
    ceilshr t4, t2, 4                   # 16x16 units along k
    li t5, 512 << 16
    or t5, t5, t4
    slli sp, t3, 9 + 32                 # dst stride N1 * 512 (next k1)
    ori sp, sp, 512
.else
    ceilshr t4, t2, 5                   # 32x32 units along k
    li t5, 1024 << 16
    or t5, t5, t4
    slli sp, t3, 10 + 32                # dst stride 2 NB * 512
    ori sp, sp, 1024
.endif
    li gp, \j * L0B_SLOT
    li tp, L1B + \s1 * L1B_SLOT + \j * BK * 32
.Lbt_\@:
    ltrans gp, tp, t5, sp
    addi gp, gp, BSTEP
    addi tp, tp, PB
    addi t3, t3, -1
    bnez t3, .Lbt_\@
    set_flag MTE1, M, \j
    # ---- M: mmad, init on the first sub-step of the first L1 step
    wait_flag MTE1, M, \j
.if ESZ == 1
    ceilshr t3, a3, 5
    slli t3, t3, 5 + 32                 # n padded to 32 (even N1 for the 32x32 units)
.else
    slli t3, a3, 32
.endif
.if \j == 0
    sltiu t4, a4, 1
    slli t4, t4, 48
    or t3, t3, t4
.endif
    slli t4, t2, 16
    or t3, t3, t4
    or t3, t3, a2                       # m | k << 16 | n << 32 | init << 48
    li gp, \j * L0A_SLOT
    li tp, \j * L0B_SLOT
    li sp, \c * L0C_SLOT
    mm sp, gp, tp, t3
    set_flag M, MTE1, \j
.endm

# One L1 step (BKL = 2 BK of k) in L1 slot \s1 of a tile in L0C slot \c.
.macro l1step s1, c
    li t0, BKL
    mul t1, a4, t0                      # k0 of the L1 step
    sub s0, s7, t1
    min s0, s0, t0                      # kk1: its k
    # ---- MTE2: A[m0:+mt, k0:+kk1] -> L1A[s1] (NZ), B[k0:+kk1, n0:+nt] -> L1B[s1] (NZ)
    mul t3, a0, s7
    add t3, t3, t1
    slli t3, t3, LOGESZ
    add t3, t3, s2                      # &A[m0][k0]
    slli t5, s0, LOGESZ + 16
    or t5, t5, a2                       # mt rows of kk1*ESZ bytes
    li gp, L1A + \s1 * L1A_SLOT
    wait_flag MTE1, MTE2, \s1           # L1[s1] free
    ldnz gp, t3, t5, a6                 # k block k1 at k1 * PA
    mul t3, t1, s6
    add t3, t3, a1
    slli t3, t3, LOGESZ
    add t3, t3, s3                      # &B[k0][n0]
    slli sp, a3, LOGESZ + 16
    or sp, sp, s0                       # kk1 rows of nt*ESZ bytes
    li gp, L1B + \s1 * L1B_SLOT
    ldnz gp, t3, sp, a7                 # column block nb at nb * PB, kk1 lines
    set_flag MTE2, MTE1, \s1
    wait_flag MTE2, MTE1, \s1
    l0step 0, \s1, \c
.if BKL > BK
    li t0, BK
    bge t0, s0, .Lone_\@
    l0step 1, \s1, \c
.Lone_\@:
.endif
    set_flag MTE1, MTE2, \s1
.endm

# One tile of C in L0C slot \c (s8 = its index).
.macro tile c
    divu t0, s8, s10
    remu t1, s8, s10
    li t2, BM
    mul a0, t0, t2
    sub a2, s5, a0
    min a2, a2, t2
    li t2, BN
    mul a1, t1, t2
    sub a3, s6, a1
    min a3, a3, t2
    wait_flag FIX, M, \c                # L0C[c] drained
    li a4, 0
.Lk_\@:
    bnez a5, .Lka_\@
    l1step 0, \c
    j .Lkb_\@
.Lka_\@:
    l1step 1, \c
.Lkb_\@:
    xori a5, a5, 1
    addi a4, a4, 1
    blt a4, s11, .Lk_\@
    ctile_store \c
.endm

    .text
    .globl main
    .type main, @function
main:
    coreinfo s0, s1
    mv s2, a0
    mv s3, a1
    mv s4, a2
    mv s5, a3
    mv s6, a4
    mv s7, a5
    li t0, BM
    addi t1, s5, BM - 1
    divu t1, t1, t0                     # MT
    li t0, BN
    addi s10, s6, BN - 1
    divu s10, s10, t0                   # NT
    mul s9, t1, s10
    li t0, BKL
    addi s11, s7, BKL - 1
    divu s11, s11, t0                   # KT: L1 steps
    slli t0, s7, LOGESZ
    li a6, PA << 32
    or a6, a6, t0                       # A: src row pitch k*ESZ, dst block pitch PA
    slli t0, s6, LOGESZ
    li a7, PB << 32
    or a7, a7, t0                       # B: src row pitch n*ESZ, dst pitch PB
    li a5, 0
.if ESZ == 1
    .equ ZCH, 32768                     # zero the L1 B slots in 32 KB copies
  .if L1B_SLOT < ZCH
    .set ZCH, L1B_SLOT
  .endif
    li t0, 0
    vcfg t1, ZCH / 256
    vdup.s32 t0, zero, t1               # ZCH bytes of zeros in UB
    set_flag V, MTE3, 0
    wait_flag V, MTE3, 0
    dmacfg t1, 1, ZCH
    .set ZOFF, 0
  .rept (2 * L1B_SLOT) / ZCH
    li t2, L1B + ZOFF
    mov.ub2l1 t2, t0, t1, zero
    .set ZOFF, ZOFF + ZCH
  .endr
  .if (2 * L1B_SLOT) % ZCH
    dmacfg t1, 1, (2 * L1B_SLOT) % ZCH
    li t2, L1B + ZOFF
    mov.ub2l1 t2, t0, t1, zero
  .endif
    set_flag MTE3, MTE2, 0
    wait_flag MTE3, MTE2, 0
.endif
    set_flag MTE1, MTE2, 0              # every buffer starts free
    set_flag MTE1, MTE2, 1
    set_flag M, MTE1, 0
    set_flag M, MTE1, 1
    set_flag FIX, M, 0
    set_flag FIX, M, 1
    mv s8, s0
.Ltiles:
    bge s8, s9, .Ldone
    tile 0
    add s8, s8, s1
    bge s8, s9, .Ldone
    tile CLAST
    add s8, s8, s1
    j .Ltiles
.Ldone:
    wait_flag MTE1, MTE2, 0
    wait_flag MTE1, MTE2, 1
    wait_flag M, MTE1, 0
    wait_flag M, MTE1, 1
    wait_flag FIX, M, 0
    wait_flag FIX, M, 1
    halt
    .size main, . - main
