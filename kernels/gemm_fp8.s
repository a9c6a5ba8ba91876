# gemm_fp8.s — fp8 (e4m3) GEMM with fine-grained per-128-block scaling, in
# the style of DeepGEMM:
#   C[i][j] = sum_kb  sa[kb][i] * sb[kb][j/128] * sum_{p in block kb} A[i][p] B[p][j]
# A (m x k) and B (k x n) e4m3 row-major; SA (KB x m) fp32, one scale per row
# of A and 128-wide k block, stored k-block major ("MN-major", as DeepGEMM
# wants it: the scales of a row tile are contiguous); SB (KB x NB) fp32, one
# per 128 x 128 block of B; C (m x n) f32, bf16 or f16. KB = ceil(k/128),
# NB = ceil(n/128). Any m, n, k.
#
#   npusim ref gemm_fp8 --m 256 --n 384 --k 1000 --out bf16 -o DIR
#
# Arguments: a0 = A, a1 = B, a2 = SA, a3 = SB, a4 = C, a5 = m, a6 = n, a7 = k.
# Defines: ODT 0 f32 (default) / 1 f16 / 2 bf16.
#
# Tiles: C tiles of BM x BN = 64 x 128 (BN = the scale block of B, so a tile
# has one sb per k block), dealt round robin over the cores; one k step per
# scale block (BK = 128). Per k step, slot s alternating every step:
#   MTE2  A -> L1A[s] (nd2nz, NZ), B -> L1B[s] (nd2nz),
#         SA[kb][m0:+mt] -> UB SA[s] (.pad: zeros to 8 values),
#         SB[kb][nt] -> the block after it (.pad)
#   MTE1  L1A[s] -> L0A[s] (ZZ, per k block); L1B[s] -> L0B[s] (.trans, 32x32 units)
#   M     mmad.e4m3.f32 L0C[s] = A_kb x B_kb          (fp32, a fresh partial)
#   FIX   L0C[s] -> UB P[s] (fp32, row-major, 512-byte rows)
#   V     S = vbrcb(SA[s]) * vbrcb(sb)  (sa[i] sb as one 32-byte block per
#         row; vbrcb broadcasts 8 packed values into 8 blocks);
#         T = P[s] * S (per row); ACC' = ACC + T, ping-ponging between two
#         accumulators (the first block writes ACC = P * S); two 64-column
#         halves, masked to the tile's columns
# After the last block V converts ACC (bf16/f16 output) and MTE3 stores the
# tile. Accumulating the scaled partials in fp32 in UB, not in L0C, is
# DeepGEMM's "promotion": the cube never sums across blocks of different
# scales.
#
# Synchronisation (ids = slot; the "free" flags are set once before the
# loop and waited once after it):
#   MTE2: wait MTE1->MTE2[s] (L1[s] free) .. A, B .. set MTE2->MTE1[s]
#         wait V->MTE2[s] (SA[s] free) .. SA .. set MTE2->V[s]
#   MTE1: wait MTE2->MTE1[s], M->MTE1[s] (L0[s] free) .. set MTE1->MTE2[s], MTE1->M[s]
#   M:    wait MTE1->M[s], FIX->M[s] (L0C[s] free) .. mmad .. set M->MTE1[s], M->FIX[s]
#   FIX:  wait M->FIX[s], V->FIX[s] (P[s] free) .. l0c2ub .. set FIX->M[s], FIX->V[s]
#   V:    (tile start) wait MTE3->V (ACC/OUT free: the last store read them)
#         wait FIX->V[s], MTE2->V[s] .. scale, accumulate .. set V->FIX[s], V->MTE2[s]
#         (tile end) [convert] set V->MTE3
#   MTE3: wait V->MTE3 .. ub2gm .. set MTE3->V
# Start: the L1 B slots are zeroed (V vdup into UB OUT, MTE3 ub2l1;
# V->MTE3 then MTE3->MTE2, and the MTE3->V set after it is the first "ACC/OUT
# free"), because a 32x32 transpose unit reads up to ceil32(kk) lines of
# which nd2nz writes ceil16(kk) (the extra lines feed only k >= kk, which
# mmad ignores, but must not be uninitialised reads).
# The scales come through MTE2 like the data (no scalar GM reads), so the
# kernel also runs in timing mode.

    .include "npu.inc"

.ifndef ODT
    .equ ODT, 0
.endif
.if (ODT != 0) && (ODT != 1) && (ODT != 2)
    .error "ODT must be 0 (f32), 1 (f16) or 2 (bf16)"
.endif
    .equ BM, 64
    .equ BN, 128
    .equ BK, 128
    .equ PA, BM * 32                    # L1A column-block pitch
    .equ PB, BK * 32                    # L1B column-block pitch
    .equ L1A, 0
    .equ L1A_SLOT, BM * BK
    .equ L1B, 2 * L1A_SLOT
    .equ L1B_SLOT, BK * BN
    .equ L0A_SLOT, BM * BK
    .equ L0B_SLOT, BK * BN
    .equ L0C_SLOT, BM * BN * 4
    .equ ROWB, BN * 4                   # UB row pitch of P and ACC
    .equ P0, 0
    .equ PSLOT, BM * ROWB
    # T (= P * S) and the two accumulators ACCA / ACCB (ping-pong: ACC' =
    # ACC + T never updates in place). Each starts one 32-byte block later
    # in its bank cycle than the one before (UB: 48 banks in 16 groups, a
    # row is 16 blocks), so in every beat the written block's bank group
    # differs from the read blocks' and two read blocks never share a bank
    # (docs/vector.md); an in-place vmla pays a conflict every beat.
    .equ TB, 2 * PSLOT + 32
    .equ ACCA, 3 * PSLOT + 64
    .equ ACCB, 4 * PSLOT + 96
    .equ OUT, 5 * PSLOT + 128           # bf16/f16 rows of BN * 2 bytes; also the zero source
    .equ SA0, OUT + BK * BN             # (OUT is L1B_SLOT bytes: big enough for both)
    .equ SASLOT, BM * 4 + 32            # the row scales, then sb in its own block
    .equ WB, SA0 + 2 * SASLOT
    .equ SB_, WB + 256
    .equ UB_END, SB_ + BM * 32
.if UB_END > 196608
    .error "UB layout too large"
.endif
    # VCFG of the per-row ops: repeat = rows (or'ed in), 8 blocks a row half,
    # rows 512 bytes apart, the scale block per row with block stride 0
    .equ VROW, (1 << 8) | (1 << 16) | (0 << 24) | (16 << 32) | (16 << 40) | (1 << 48)
    .equ VROW3, (1 << 8) | (1 << 16) | (1 << 24) | (16 << 32) | (16 << 40) | (16 << 48)
    .equ VCONV, (1 << 8) | (1 << 16) | (8 << 32) | (16 << 40)
    .equ SBBASE, 0                      # scalar buffer (not GM): SB address, NB
    .equ SBNB, 8

# Register map:
#   s0 SA  s1 corenum  s2 A  s3 B  s4 C  s5 m  s6 n  s7 k
#   s8 tile index  s9 tiles  s10 NT  s11 KB (k steps)
#   a0 m0  a1 n0  a2 rows  a3 columns  a4 k block  a5 slot parity
#   a6 A nd2nz strides  a7 B nd2nz strides
#   t0..t6 gp tp sp: scratch

# vmask for the 64-column half \h of a tile with a3 columns; \skip if empty.
.macro halfmask h, skip
    addi t4, a3, -64 * \h
    blt t4, zero, \skip
    beqz t4, \skip
    li t5, -1
    li t6, 64
    bge t4, t6, .Lhm_\@
    li t5, 1
    sll t5, t5, t4
    addi t5, t5, -1
.Lhm_\@:
    vmask t5, zero
.endm

.macro kstep s
    li t0, BK
    mul t1, a4, t0                      # k0
    sub t2, s7, t1
    min t2, t2, t0                      # kk
    # ---- MTE2: A (ZZ order), B (NZ), the row scales
    mul t3, a0, s7
    add t3, t3, t1
    add t3, t3, s2                      # &A[m0][k0]
    slli t5, t2, 16
    or t5, t5, a2                       # mt rows of kk bytes
    li gp, L1A + \s * L1A_SLOT
    wait_flag MTE1, MTE2, \s
    mov.gm2l1.nd2nz.e4m3 gp, t3, t5, a6 # NZ: k block k1 at k1 * PA
    mul t3, t1, s6
    add t3, t3, a1
    add t3, t3, s3                      # &B[k0][n0]
    slli sp, a3, 16
    or sp, sp, t2
    li gp, L1B + \s * L1B_SLOT
    mov.gm2l1.nd2nz.e4m3 gp, t3, sp, a7
    set_flag MTE2, MTE1, \s
    mul t3, a4, s5
    add t3, t3, a0
    slli t3, t3, 2
    add t3, t3, s0                      # &SA[kb][m0]
    slli t4, a2, 2 + 16
    ori t4, t4, 1
    li gp, SA0 + \s * SASLOT
    wait_flag V, MTE2, \s
    mov.gm2ub.pad gp, t3, t4, zero
    ld t3, SBBASE(zero)
    ld t4, SBNB(zero)
    mul t4, t4, a4
    srli t5, a1, 7                      # nt of the 128-column block
    add t4, t4, t5
    slli t4, t4, 2
    add t3, t3, t4                      # &SB[kb][nt]
    li t4, (4 << 16) | 1
    li gp, SA0 + \s * SASLOT + BM * 4
    mov.gm2ub.pad gp, t3, t4, zero      # sb, zero padded to a block
    set_flag MTE2, V, \s
    # ---- MTE1
    wait_flag MTE2, MTE1, \s
    wait_flag M, MTE1, \s
    ceilshr t4, t2, 5                   # KA1 = ceil(kk / C0)
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
    ceilshr t3, a3, 5                   # NB: 32-column blocks
    ceilshr t4, t2, 5                   # 32x32 units along k
    li t5, 1024 << 16
    or t5, t5, t4
    slli sp, t3, 10 + 32                # dst stride 2 NB * 512
    ori sp, sp, 1024
    li gp, \s * L0B_SLOT
    li tp, L1B + \s * L1B_SLOT
.Lbt_\@:
    mov.l12l0b.trans.e4m3 gp, tp, t5, sp
    addi gp, gp, 1024
    addi tp, tp, PB
    addi t3, t3, -1
    bnez t3, .Lbt_\@
    set_flag MTE1, MTE2, \s
    set_flag MTE1, M, \s
    # ---- M: a fresh fp32 partial of this block
    wait_flag MTE1, M, \s
    wait_flag FIX, M, \s
    ceilshr t3, a3, 5
    slli t3, t3, 5 + 32                 # n padded to 32 (even N1)
    li t4, 1
    slli t4, t4, 48
    or t3, t3, t4
    slli t4, t2, 16
    or t3, t3, t4
    or t3, t3, a2
    li gp, \s * L0A_SLOT
    li tp, \s * L0B_SLOT
    li sp, \s * L0C_SLOT
    mmad.e4m3.f32 sp, gp, tp, t3
    set_flag M, MTE1, \s
    set_flag M, FIX, \s
    # ---- FIX: partial -> UB P[s], row-major
    wait_flag M, FIX, \s
    wait_flag V, FIX, \s
    slli t3, a3, 16
    or t3, t3, a2                       # m | n << 16
    ceilshr t4, a2, 4
    slli t4, t4, 10
    li t5, ROWB << 32
    or t4, t4, t5                       # src pitch M1 * 1024, dst row pitch
    li gp, P0 + \s * PSLOT
    li tp, \s * L0C_SLOT
    fix.l0c2ub.nd.f32.f32 gp, tp, t3, t4, zero
    set_flag FIX, M, \s
    set_flag FIX, V, \s
    # ---- V: scale and accumulate
    wait_flag FIX, V, \s
    wait_flag MTE2, V, \s
    vcfg t5, 1, 1, 1, 1, 8, 8, 8
    li gp, WB
    li tp, SA0 + \s * SASLOT + BM * 4
    vbrcb.f32 gp, tp, t5                # block 0 of WB: 8 copies of sb
    addi t4, a2, 7
    srli t4, t4, 3                      # ceil(rows / 8)
    vcfg t5, 0, 1, 1, 1, 8, 8, 8
    or t5, t5, t4
    li sp, SA0 + \s * SASLOT
    li tp, SB_
    vbrcb.f32 tp, sp, t5                # one block of sa[i] per row (zero padded to 8 rows)
    slli t4, t4, 6
    vmaskc t4                           # those blocks' elements
    vcfg t5, 1, 1, 1, 0, 8, 8, 0
    vmul.f32 tp, tp, gp, t5             # S[i] = sa[i] * sb, one block per row
    ldc t3, VROW
    or t3, t3, a2
    li gp, P0 + \s * PSLOT
    bnez a4, .Lnf_\@
    li sp, ACCA                         # first block: ACCA = P * S
    halfmask 0, .Lf1_\@
    vmul.f32 sp, gp, tp, t3
.Lf1_\@:
    addi gp, gp, 256
    addi sp, sp, 256
    halfmask 1, .Lvd_\@
    vmul.f32 sp, gp, tp, t3
    j .Lvd_\@
.Lnf_\@:
    ldc t2, VROW3
    or t2, t2, a2
    li t0, ACCA                         # odd block: ACCB = ACCA + T
    li t1, ACCB
    andi t4, a4, 1
    bnez t4, .Lod_\@
    li t0, ACCB                         # even block: ACCA = ACCB + T
    li t1, ACCA
.Lod_\@:
    li ra, TB
    halfmask 0, .Ln1_\@
    vmul.f32 ra, gp, tp, t3             # T = P * S
    vadd.f32 t1, t0, ra, t2             # ACC' = ACC + T
.Ln1_\@:
    addi gp, gp, 256
    addi ra, ra, 256
    addi t0, t0, 256
    addi t1, t1, 256
    halfmask 1, .Lvd_\@
    vmul.f32 ra, gp, tp, t3
    vadd.f32 t1, t0, ra, t2
.Lvd_\@:
    set_flag V, FIX, \s
    set_flag V, MTE2, \s
.endm

.macro tile
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
    wait_flag MTE3, V, 0                # ACC / OUT free
    li a4, 0
.Lk_\@:
    bnez a5, .Lka_\@
    kstep 0
    j .Lkb_\@
.Lka_\@:
    kstep 1
.Lkb_\@:
    xori a5, a5, 1
    addi a4, a4, 1
    blt a4, s11, .Lk_\@
    addi t4, s11, -1
    andi t4, t4, 1
    li ra, ACCA                         # the accumulator of the last block
    beqz t4, .Lfa_\@
    li ra, ACCB
.Lfa_\@:
    mul t0, a0, s6
    add t0, t0, a1                      # element offset of C[m0][n0]
.if ODT == 0
    set_flag V, MTE3, 0
    wait_flag V, MTE3, 0
    slli t0, t0, 2
    add t0, t0, s4
    slli t1, a3, 2 + 16
    or t1, t1, a2                       # rows of n_t * 4 bytes
    slli t2, s6, 2 + 32
    ori t2, t2, ROWB
    mov.ub2gm t0, ra, t1, t2
.else
    ldc t3, VCONV
    or t3, t3, a2
    li gp, OUT
    mv sp, ra
    halfmask 0, .Lc1_\@
  .if ODT == 1
    vconv.f32.f16 gp, sp, t3
  .else
    vconv.f32.bf16 gp, sp, t3
  .endif
.Lc1_\@:
    addi gp, gp, 128
    addi sp, sp, 256
    halfmask 1, .Lc2_\@
  .if ODT == 1
    vconv.f32.f16 gp, sp, t3
  .else
    vconv.f32.bf16 gp, sp, t3
  .endif
.Lc2_\@:
    set_flag V, MTE3, 0
    wait_flag V, MTE3, 0
    slli t0, t0, 1
    add t0, t0, s4
    slli t1, a3, 1 + 16
    or t1, t1, a2
    slli t2, s6, 1 + 32
    ori t2, t2, BN * 2
    li t3, OUT
    mov.ub2gm t0, t3, t1, t2
.endif
    set_flag MTE3, V, 0
.endm

    .text
    .globl main
    .type main, @function
main:
    coreinfo t6, s1
    mv s2, a0
    mv s3, a1
    mv s0, a2
    sd a3, SBBASE(zero)
    mv s4, a4
    mv s5, a5
    mv s6, a6
    mv s7, a7
    li t0, BN
    addi t1, s6, BN - 1
    divu t1, t1, t0
    sd t1, SBNB(zero)                   # NB = NT (BN = the scale block)
    mv s10, t1
    li t0, BM
    addi t1, s5, BM - 1
    divu t1, t1, t0                     # MT
    mul s9, t1, s10
    li t0, BK
    addi s11, s7, BK - 1
    divu s11, s11, t0                   # KB
    li a6, PA << 32
    or a6, a6, s7                       # A: src row pitch k, dst block pitch PA
    li a7, PB << 32
    or a7, a7, s6                       # B: src row pitch n, dst pitch PB
    li a5, 0
    # zero the L1 B slots (see the header)
    li t0, OUT
    vcfg t1, L1B_SLOT / 256
    vdup.s32 t0, zero, t1
    set_flag V, MTE3, 0
    wait_flag V, MTE3, 0
    dmacfg t1, 1, L1B_SLOT
    li t2, L1B
    mov.ub2l1 t2, t0, t1, zero
    li t2, L1B + L1B_SLOT
    mov.ub2l1 t2, t0, t1, zero
    set_flag MTE3, MTE2, 0
    wait_flag MTE3, MTE2, 0
    set_flag MTE3, V, 0                 # ACC / OUT free once the copies read OUT
    set_flag MTE1, MTE2, 0              # every other buffer starts free
    set_flag MTE1, MTE2, 1
    set_flag M, MTE1, 0
    set_flag M, MTE1, 1
    set_flag FIX, M, 0
    set_flag FIX, M, 1
    set_flag V, FIX, 0
    set_flag V, FIX, 1
    set_flag V, MTE2, 0
    set_flag V, MTE2, 1
    mv s8, t6
.Ltiles:
    bge s8, s9, .Ldone
    tile
    add s8, s8, s1
    j .Ltiles
.Ldone:
    wait_flag MTE1, MTE2, 0
    wait_flag MTE1, MTE2, 1
    wait_flag M, MTE1, 0
    wait_flag M, MTE1, 1
    wait_flag FIX, M, 0
    wait_flag FIX, M, 1
    wait_flag V, FIX, 0
    wait_flag V, FIX, 1
    wait_flag V, MTE2, 0
    wait_flag V, MTE2, 1
    wait_flag MTE3, V, 0
    halt
    .size main, . - main
