# gemm_sparse.s — C = A x B with B 2:4 structured-sparse along k, on the
# cube's sparse mode (mmad.sp). A (m x k) dense row-major; B given
# compressed as BV (k/2 x n, the kept values, row-major) and BM (its 2:4
# metadata, in panels of BN columns: ref.h, ref_sparse_panels; made by
# `npusim sparsify B.npy --values BV.npy --meta BM.npy --panel 128`).
# C (m x n) row-major; any m, n; k a multiple of 4. Tiling and SPMD split
# are gemm.s's, with one L1 step per L0 step (slot s for L1 and L0, flags
# MTE2<->MTE1 and MTE1<->M per s, FIX<->M per L0C slot c, "free" flags set
# before the loop and waited after it; docs/kernels.md). Per k step of BK
# dense k the B side moves BK/2 value rows and BK/4 metadata rows:
#   MTE2  A -> L1A[s] (nd2nz, NZ); BV -> L1B[s] (nd2nz);
#         BM panel rows -> L1M[s] (one burst, .pad to 32 bytes)
#   MTE1  L1A[s] -> L0A[s] (ZZ, per k block); L1B[s] -> L0B[s] (.trans per column block);
#         L1M[s] -> L0B meta[s]
#   M     mmad.sp L0C[c] (+)= L0A[s] x sparse(L0B[s], meta[s])
#   FIX   L0C[c] -> C
# The metadata of a k step of a tile is contiguous only within a panel of
# the tile's columns, hence the panel layout (a row of the plain layout
# spans all n columns).
#
#   npusim ref gemm_sparse --m 256 --n 200 --k 512 --dtype f16 -o DIR
#
# Arguments: a0 = A, a1 = BV, a2 = BM, a3 = C, a4 = m, a5 = n, a6 = k.
# Defines: DT 1 f16 / 2 bf16; ODT 0 f32 / 1 f16 / 2 bf16; BM, BN (= the
# metadata panel width, default 128), BK (dense k per step, default 128).

    .include "npu.inc"

.ifndef DT
    .equ DT, 1
.endif
.ifndef ODT
    .equ ODT, 0
.endif

.if (DT == 1) || (DT == 2)
    .equ ESZ, 2
    .equ LOGESZ, 1
    .equ LOGC0, 4                       # 16 elements per 32-byte block
  .ifndef BK
    .equ BK, 128
  .endif
.else
    .error "DT must be 1 (f16) or 2 (bf16)"
.endif
.if (ODT != 0) && (ODT != 1) && (ODT != 2)
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
.if BK > 256
    .error "BK at most 256 (a metadata row block must fit its L1/L0B slot)"
.endif

    .equ PA, BM * 32                    # L1A column-block pitch (BM lines)
    .equ PB, BK / 2 * 32                # L1B column-block pitch (BK/2 value lines)
    .equ BSTEP, 512                     # L0B bytes per L1 column block
    .equ MSLOT, (BK / 4 * BN / 2 + 511) / 512 * 512   # metadata of one step
    .equ L1A, 0
    .equ L1A_SLOT, BM * BK * ESZ
    .equ L1B, 2 * L1A_SLOT
    .equ L1B_SLOT, BK / 2 * BN * ESZ
    .equ L1M, L1B + 2 * L1B_SLOT
    .equ L0A_SLOT, BM * BK * ESZ
    .equ L0B_SLOT, BK / 2 * BN * ESZ
    .equ L0BM, 2 * L0B_SLOT             # metadata slots after the value slots
    .equ L0C_SLOT, BM * BN * 4
.if (2 * L0A_SLOT > 65536) || (L0BM + 2 * MSLOT > 65536) || (2 * L0C_SLOT > 131072) || (L1M + 2 * MSLOT > 524288)
    .error "tile too large for L0A/L0B (64 KB), L0C (128 KB) or L1 (512 KB) with double buffering"
.endif
.if (L0A_SLOT % 512) || (L0B_SLOT % 512)
    .error "tile buffers must be 512-byte aligned"
.endif

    .include "gemm.inc"                 # ldnz, ltrans, drain, ctile_store

# ---- the dtype-specific cube instruction (data moves: gemm.inc) -------------
.if DT == 1
.macro mm c, a, b, cfg, meta
    mmad.sp.f16.f32 \c, \a, \b, \cfg, \meta
.endm
.elif DT == 2
.macro mm c, a, b, cfg, meta
    mmad.sp.bf16.f32 \c, \a, \b, \cfg, \meta
.endm
.endif

# Register map:
#   s0 BM (metadata)  s1 corenum  s2 A  s3 BV  s4 C  s5 m  s6 n  s7 k
#   s8 tile index  s9 tiles  s10 NT (tiles along n)  s11 KT (k steps)
#   a0 m0  a1 n0  a2 rows of the tile  a3 columns of the tile  a4 k step
#   a5 slot parity  a6 A nd2nz strides  a7 B nd2nz strides
#   t0..t6 gp tp sp: scratch

# One k step in L1/L0 slot \s of a tile in L0C slot \c.
.macro kstep s, c
    li t0, BK
    mul t1, a4, t0                      # k0
    sub t2, s7, t1
    min t2, t2, t0                      # kk: k of this step
    # ---- MTE2: A rows into L1A[s] in ZZ order, B into L1B[s] (NZ)
    mul t3, a0, s7
    add t3, t3, t1
    slli t3, t3, LOGESZ
    add t3, t3, s2                      # &A[m0][k0]
    slli t5, t2, LOGESZ + 16
    or t5, t5, a2                       # mt rows of kk*ESZ bytes
    li gp, L1A + \s * L1A_SLOT
    wait_flag MTE1, MTE2, \s
    ldnz gp, t3, t5, a6                 # NZ: k block k1 at k1 * PA
    srli t3, t1, 1
    mul t3, t3, s6
    add t3, t3, a1
    slli t3, t3, LOGESZ
    add t3, t3, s3                      # &BV[k0/2][n0]
    slli sp, a3, LOGESZ + 16
    srli t4, t2, 1
    or sp, sp, t4                       # kk/2 rows of nt*ESZ bytes
    li gp, L1B + \s * L1B_SLOT
    ldnz gp, t3, sp, a7
    mul t3, a1, s7                      # metadata: panel of n0 at n0*k/8,
    ceilshr t4, a3, 4
    slli t4, t4, 4                      # N16 of the tile
    mul t4, t4, t1                      # its rows from k0: k0*N16/8
    add t3, t3, t4
    srli t3, t3, 3
    add t3, t3, s0
    ceilshr t4, a3, 4
    slli t4, t4, 4
    mul t4, t4, t2
    srli t4, t4, 3                      # kk/4 rows of N16/2 bytes
    slli t4, t4, 16
    ori t4, t4, 1
    li gp, L1M + \s * MSLOT
    mov.gm2l1.pad gp, t3, t4, zero
    set_flag MTE2, MTE1, \s
    # ---- MTE1: L1 -> L0A (one burst), L1 -> L0B (trans per column block)
    wait_flag MTE2, MTE1, \s
    wait_flag M, MTE1, \s
    ceilshr t4, t2, LOGC0               # KA1 = ceil(kk / C0)
    ceilshr t3, a2, 4                   # M1
    li t5, 512 << 16
    or t5, t5, t3                       # M1 fractals of a k block ...
    slli t6, t4, 9 + 32
    ori t6, t6, 512                     # ... to (m1 * KA1 + k1) * 512
    li gp, \s * L0A_SLOT
    li tp, L1A + \s * L1A_SLOT
.Lat_\@:
    mov.l12l0a gp, tp, t5, t6
    addi gp, gp, 512
    addi tp, tp, PA
    addi t4, t4, -1
    bnez t4, .Lat_\@
    slli t3, a3, LOGESZ
    ceilshr t3, t3, 5                   # NB: 32-byte column blocks
    srli t4, t2, 1
    ceilshr t4, t4, 4                   # 16x16 units along k/2
    li t5, 512 << 16
    or t5, t5, t4
    slli sp, t3, 9 + 32                 # dst stride N1 * 512 (next k1)
    ori sp, sp, 512
    li gp, \s * L0B_SLOT
    li tp, L1B + \s * L1B_SLOT
.Lbt_\@:
    ltrans gp, tp, t5, sp
    addi gp, gp, BSTEP
    addi tp, tp, PB
    addi t3, t3, -1
    bnez t3, .Lbt_\@
    ceilshr t4, a3, 4
    slli t4, t4, 4
    mul t4, t4, t2
    srli t4, t4, 3                      # metadata bytes
    ceilshr t4, t4, 5
    slli t4, t4, 5 + 16                 # as padded to 32 in L1
    ori t4, t4, 1
    li gp, L0BM + \s * MSLOT
    li tp, L1M + \s * MSLOT
    mov.l12l0b gp, tp, t4, zero
    set_flag MTE1, MTE2, \s
    set_flag MTE1, M, \s
    # ---- M: mmad, init on the first k step
    wait_flag MTE1, M, \s
    slli t3, a3, 32
    sltiu t4, a4, 1
    slli t4, t4, 48
    or t3, t3, t4
    slli t4, t2, 16
    or t3, t3, t4
    or t3, t3, a2                       # m | k << 16 | n << 32 | init << 48
    li gp, \s * L0A_SLOT
    li tp, \s * L0B_SLOT
    li sp, \c * L0C_SLOT
    li t4, L0BM + \s * MSLOT
    mm sp, gp, tp, t3, t4
    set_flag M, MTE1, \s
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
    kstep 0, \c
    j .Lkb_\@
.Lka_\@:
    kstep 1, \c
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
    coreinfo t6, s1
    mv s2, a0
    mv s3, a1
    mv s0, a2
    mv s4, a3
    mv s5, a4
    mv s6, a5
    mv s7, a6
    li t0, BM
    addi t1, s5, BM - 1
    divu t1, t1, t0                     # MT
    li t0, BN
    addi s10, s6, BN - 1
    divu s10, s10, t0                   # NT
    mul s9, t1, s10
    li t0, BK
    addi s11, s7, BK - 1
    divu s11, s11, t0                   # KT
    slli t0, s7, LOGESZ
    li a6, PA << 32
    or a6, a6, t0                       # A: src row pitch k*ESZ, dst block pitch PA
    slli t0, s6, LOGESZ
    li a7, PB << 32
    or a7, a7, t0                       # B: src row pitch n*ESZ, dst pitch PB
    li a5, 0
    set_flag MTE1, MTE2, 0              # every buffer starts free
    set_flag MTE1, MTE2, 1
    set_flag M, MTE1, 0
    set_flag M, MTE1, 1
    set_flag FIX, M, 0
    set_flag FIX, M, 1
    mv s8, t6
.Ltiles:
    bge s8, s9, .Ldone
    tile 0
    add s8, s8, s1
    bge s8, s9, .Ldone
    tile 1
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
