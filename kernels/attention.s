# attention.s — attention forward, flash style (one pass over the keys with
# an online softmax; the Sq x Sk score matrix never exists):
#   O[b] = softmax(scale * Q[b] K[b]^T (+ causal mask)) V[b]
#
#   a0 = Q (GM, [BH][Sq][HD] fp16)   a1 = K ([BH][Sk][HD] fp16)
#   a2 = V ([BH][Sk][HD] fp16)       a3 = O ([BH][Sq][HD], fp16 or fp32)
#   a4 = BH (batch x heads)          a5 = Sq          a6 = Sk
#   a7 = scale as fp32 bits (1/sqrt(HD) usually)
#   -D HD=64 (head dim: 16..128, a multiple of 16), -D CAUSAL=1 (query i
#   sees keys j <= i; needs Sq == Sk), -D F32OUT=1 (fp32 output).
#
# Work unit: (bh, 64-query block), round-robin over the cores (causal
# blocks differ in cost). A unit walks 64-key tiles t (causal: only
# t <= query block; the diagonal tile adds a precomputed 0/-inf bias):
#   M:    S_t = Q K_t^T                 (Q in L0A once per unit; K_t GM -> L1 nd2nz -> L0B)
#   FIX:  S_t -> UB (fp32, row-major)
#   V:    S *= scale; m' = max(m, rowmax S); alpha = exp(m - m');
#         P = exp(S - m'); l = l*alpha + rowsum P; P -> fp16 in ZZ fractals
#   MTE3: P -> L1, MTE1: P -> L0A, V_t (L1, nd2nz) -> L0B (.trans)
#   M:    PV_t = P V_t;  FIX: PV_t -> UB;  V: O = O*alpha + PV_t
# and at the end O /= l, cast, MTE3 -> GM. Every buffer of a tile has two
# slots s = t & 1. Issue order per tile: softmax(t), S(t+1), PV(t),
# update(t-1): the cube computes the next scores while the vector unit does
# this tile's softmax, and the vector unit does the next softmax before it
# needs this tile's P V. (The simulator runs each instruction at issue, so
# every wait must follow its set in program order; this order keeps that.)
#
# Flags (s = slot; "free" flags are set once at the start, waited at the end):
#   MTE2->MTE1 2+s K_t in L1        MTE1->MTE2 2+s K L1 slot free
#   MTE1->M 2+s K_t in L0B          M->MTE1 2+s K L0B slot free
#   MTE2->M 2   Q in L0A            M->MTE2 2   Q free (unit done)
#   MTE2->MTE1 s V_t in L1          MTE1->MTE2 s V slot free
#   M->FIX s    S_t in L0C          FIX->M s    S L0C slot free
#   FIX->V s    S_t in UB           V->FIX s    S UB slot free
#   V->MTE3 s   P_t in UB           MTE3->V s   P UB slot free
#   MTE3->MTE1 s P_t in L1          MTE1->MTE3 s P L1 slot free
#   MTE1->M s   P_t, V_t in L0A/B   M->MTE1 s   L0A/L0B slots free
#   M->FIX 2+s  PV_t in L0C         FIX->M 2+s  PV L0C slot free
#   FIX->V 2+s  PV_t in UB          V->FIX 2+s  PV UB slot free (one slot, id 2, if NPV = 1)
#   V->MTE3 2   O ready             MTE3->V 2   O buffers free
#   MTE3->MTE2 0, MTE3->MTE1 3  the zeroed K and V slots in L1 (once, at the start)

    .include "npu.inc"

.ifndef HD
    .equ HD, 64
.endif
.ifndef CAUSAL
    .equ CAUSAL, 0
.endif
.ifndef F32OUT
    .equ F32OUT, 0
.endif
.if (HD % 16) || HD < 16 || HD > 128
    .error "HD must be a multiple of 16 in 16..128"
.endif
.if F32OUT
    .equ OS, 4
.else
    .equ OS, 2
.endif
    .equ BR, 64                  # queries per block
    .equ BC, 64                  # keys per tile (one fp32 repeat per score row)
    .equ KD1, HD / 16
    .equ HDC, (HD + 63) / 64     # 64-column chunks of an O row
    .equ NEGINF, 0xff800000
    # L0A: Q, P[2]
    .equ L0A_Q, 0
    .equ L0A_P0, 0x4000
    .equ L0A_P1, 0x6000
    # L0B: K[2], V[2]
    .equ L0B_K0, 0
    .equ L0B_K1, 0x4000
    .equ L0B_V0, 0x8000
    .equ L0B_V1, 0xc000
    # L0C: S[2] (64 x 64 fp32), PV[2] (64 x HD fp32)
    .equ L0C_S0, 0
    .equ L0C_S1, 0x4000
    .equ L0C_O0, 0x8000
    .equ L0C_O1, 0x10000
    # L1: V[2] (nd2nz: HD/16 column blocks of 64 keys x 32 B), P[2]
    .equ L1_V0, 0
    .equ L1_V1, 0x4000
    .equ L1_P0, 0x8000
    .equ L1_P1, 0xa000
    .equ L1_K0, 0xc000           # K[2] (nd2nz like V)
    .equ L1_K1, 0x10000
    # UB
    # UB. A vector op never works in place: it reads one buffer and writes
    # another whose 32-byte blocks sit in another bank group (block q is in
    # group q % 16, so buffers that meet in one op are 128 or 256 bytes
    # apart modulo 512): S and O at 0, X at 256, PV and CB at 128.
    # P V gets two slots (NPV = 2) when they fit (all but causal HD = 128):
    # then the update of tile t is issued after the softmax of tile t+1.
    .equ PVB, 64 * HD * 4        # one 64 x HD fp32 tile (a multiple of 4 KB)
    .equ UB_S0, 0x00000          # scores, 64 x 64 fp32
    .equ UB_S1, 0x04000
    .equ UB_PV0, 0x08080         # P V, 64 x HD fp32
    .equ STATB, 0x2000
    # X partners both S (64 x 64 fp32) and O: the larger of the two
    .equ XB, PVB + (PVB < 0x4000) * (0x4000 - PVB)
.if (((UB_PV0 + 2 * PVB + 511) / 512 * 512 + PVB + XB + 256 + 511) / 512 * 512 + 0x4000 + CAUSAL * (0x4000 + 512) + STATB) <= 0x30000
    .equ NPV, 2
.else
    .equ NPV, 1
.endif
    .equ UB_PV1, UB_PV0 + (NPV - 1) * PVB
    .equ UB_O, (UB_PV0 + NPV * PVB + 511) / 512 * 512       # the accumulator
    .equ UB_X, UB_O + PVB + 256  # scratch: the other half of every op, output staging
    .equ UB_PZ0, (UB_X + XB + 511) / 512 * 512              # P, fp16 ZZ fractals
    .equ UB_PZ1, UB_PZ0 + 0x2000
    .equ UB_CB, UB_PZ1 + 0x2000 + 128                        # causal bias, 64 x 64 (0 / -inf)
    .equ UB_M, (UB_CB + CAUSAL * 0x4000 + 511) / 512 * 512   # running max (64 fp32)
    .equ UB_L, UB_M + 0x100      # running sum
    .equ UB_MX, UB_M + 0x200     # tile row max
    .equ UB_RS, UB_M + 0x300     # tile row sum
    .equ UB_AL0, UB_M + 0x400    # alpha per slot
    .equ UB_AL1, UB_M + 0x500
    .equ UB_MN, UB_M + 0x600     # new max
    .equ UB_BRM, UB_M + 0x800    # broadcasts: one 32-byte block per row (2 KB)
    .equ UB_BRA, UB_M + 0x1000
    .equ UB_RP, UB_M + 0x1800    # row partials: 8 per row (2 KB)
    .equ UB_STAT_END, UB_M + STATB
.if UB_STAT_END > 0x30000
    .error "UB layout does not fit 192 KB"
.endif
    .equ PVF1, 2 + (NPV - 1)     # flag id of P V slot 1 (V <-> FIX)

# Registers over the kernel: a0-a7 the arguments; s0 core id, s1 cores,
# s2 unit, s3 units; per unit s4 bh, s5 q0, s6 nq, s7 key tiles, s8 tile t,
# s9 slot of t, s10 query block. gp, tp, ra, s11, t0-t6 are temporaries.

# vector config with a run-time repeat count: rd = vcfg(...) | rep
.macro vcfgr rd, rep, dstblk=1, s0blk=1, s1blk=1, dstrep=8, s0rep=8, s1rep=8
    vcfg \rd, 0, \dstblk, \s0blk, \s1blk, \dstrep, \s0rep, \s1rep
    or \rd, \rd, \rep
.endm
.macro swap a, b
    mv t0, \a
    mv \a, \b
    mv \b, t0
.endm
# t4 := \dst; per row of the score tile at t3 (nq rows, vcfg t2, full mask)
# one value at \dst: \op per block into UB_RP, then \op over those blocks
.macro rowred op, dst
    li t4, UB_RP
    \op t4, t3, t2
    addi t0, s6, 7
    srli t0, t0, 3
    vcfgr t5, t0
    li t1, \dst
    \op t1, t4, t5
    mv t4, t1
.endm
.macro maskall
    li t0, -1
    vmask t0, t0
.endm
# the first \cnt lanes enabled (clobbers t0, tp) (normal mode, fp32: 64 lanes in the low word)
.macro masklanes cnt
    li t0, 1
    sll t0, t0, \cnt
    addi t0, t0, -1
    li tp, 64
    blt \cnt, tp, 1f
    li t0, -1
1:  vmask t0, zero
.endm

# gp := valid keys of tile \j (min(64, Sk - 64 j)), tp := 64 j
.macro tileinfo j
    slli tp, \j, 6
    sub gp, a6, tp
    li t0, BC
    min gp, gp, t0
.endm

# ---- issue S_j = Q K_j^T through slot \s (tile index in register \j) ----
.macro qk s, j
    tileinfo \j
    # K rows [tp, tp+gp) of head s4 -> L1_K[s] in one nd2nz (column blocks
    # of 64 keys = 2 KB apart: exactly K^T's ZN fractals with N1 = 4), then
    # MTE1 copies them to L0B_K[s]
    mul t0, s4, a6
    add t0, t0, tp
    li t1, HD * 2
    mul t0, t0, t1
    add t0, a1, t0               # t0: GM address of the first key
    li t1, HD * 2
    slli t1, t1, 16
    or t1, t1, gp                # DMA_CFG: gp rows of HD*2 bytes
    li t3, (2048 << 32) | (HD * 2)
    li t4, L1_K0 + \s * (L1_K1 - L1_K0)
    wait_flag MTE1, MTE2, 2 + \s
    mov.gm2l1.nd2nz.f16 t4, t0, t1, t3
    set_flag MTE2, MTE1, 2 + \s
    dmaflat t1, t3, KD1 * 2048
    li t5, L0B_K0 + \s * (L0B_K1 - L0B_K0)
    wait_flag MTE2, MTE1, 2 + \s
    wait_flag M, MTE1, 2 + \s
    mov.l12l0b.f16 t5, t4, t1, t3
    set_flag MTE1, MTE2, 2 + \s
    set_flag MTE1, M, 2 + \s
    # V rows -> L1_V[s] (nd2nz, column blocks 64 rows = 2 KB apart)
    mul t0, s4, a6
    add t0, t0, tp
    li t1, HD * 2
    mul t0, t0, t1
    add t0, a2, t0
    li t1, HD * 2
    slli t1, t1, 16
    or t1, t1, gp
    li t3, 2048
    slli t3, t3, 32
    ori t3, t3, HD * 2
    li t4, L1_V0 + \s * (L1_V1 - L1_V0)
    wait_flag MTE1, MTE2, \s
    mov.gm2l1.nd2nz.f16 t4, t0, t1, t3
    set_flag MTE2, MTE1, \s
    # M: S = Q K^T, m = nq, k = HD, n = 64 (key rows past the tail are
    # zero or stale; their columns never leave L0C: FIX takes nv)
    li t1, BC << 32
    li t0, HD
    slli t0, t0, 16
    or t1, t1, t0
    or t1, t1, s6
    li t0, 1
    slli t0, t0, 48
    or t1, t1, t0
    li t3, L0C_S0 + \s * (L0C_S1 - L0C_S0)
    li t4, L0A_Q
    li t5, L0B_K0 + \s * (L0B_K1 - L0B_K0)
    wait_flag MTE1, M, 2 + \s
    wait_flag FIX, M, \s
    mmad.f16.f32 t3, t4, t5, t1
    set_flag M, MTE1, 2 + \s
    set_flag M, FIX, \s
    # FIX: S -> UB_S[s], nq x nv fp32 rows of 256 bytes
    slli t1, gp, 16
    or t1, t1, s6                # FIX_SHAPE
    addi t0, s6, 15
    srli t0, t0, 4
    slli t0, t0, 10              # L0C column-block pitch M1 * 1024
    li t2, 256
    slli t2, t2, 32
    or t2, t2, t0
    li t4, UB_S0 + \s * (UB_S1 - UB_S0)
    wait_flag M, FIX, \s
    wait_flag V, FIX, \s
    fix.l0c2ub.nd.f32.f32 t4, t3, t1, t2, zero
    set_flag FIX, M, \s
    set_flag FIX, V, \s
.endm

# ---- issue the online softmax of tile \j in slot \s, and P -> L1 ----
.macro sm s, j
    tileinfo \j
    li t3, UB_S0 + \s * (UB_S1 - UB_S0)
    wait_flag FIX, V, \s
    li t0, BC
    bge gp, t0, 2f
    # keys >= nv (the tail) score -inf
    li t0, 1
    sll t0, t0, gp
    addi t0, t0, -1
    not t0, t0
    vmask t0, zero
    li t1, NEGINF
    vcfgr t2, s6
    vdup.f32 t3, t1, t2
2:  maskall
    vcfgr t2, s6
    li s11, UB_X                 # s11: the other buffer of the chain
    vmuls.f32 s11, t3, a7, t2
    swap t3, s11
.if CAUSAL
    bne \j, s10, 3f
    li t4, UB_CB
    vadd.f32 s11, t3, t4, t2
    swap t3, s11
3:
.endif
    # row max in two group reductions (1 cycle a repeat, against 7 for
    # vcmax): 8 partials per row, then the 8 partials of a row are one block
    rowred vcgmax.f32, UB_MX
    vmaskc s6
    vcfg t5, 1
    li t1, UB_MN
    li t6, UB_M
    vmax.f32 t1, t6, t4, t5
    li t4, UB_AL0 + \s * (UB_AL1 - UB_AL0)
    vsub.f32 t4, t6, t1, t5
    vexp.f32 t4, t4, t5
    vmov.f32 t6, t1, t5
    # broadcast m' (one block per row), P = exp(S - m')
    addi t0, s6, 7
    srli t0, t0, 3
    vcfgr t5, t0
    li t1, UB_BRM
    vbrcb.f32 t1, t6, t5
    maskall
    vcfgr t2, s6, 1, 1, 0, 8, 8, 1
    vsub.f32 s11, t3, t1, t2
    swap t3, s11
    vcfgr t2, s6
    vexp.f32 s11, t3, t2
    swap t3, s11
    rowred vcgadd.f32, UB_RS
    vmaskc s6
    vcfg t5, 1
    li t1, UB_L
    li t6, UB_AL0 + \s * (UB_AL1 - UB_AL0)
    vmul.f32 t1, t1, t6, t5
    vadd.f32 t1, t1, t4, t5
    # P -> fp16 ZZ fractals: rows of 16-row group g at PZ + g*2048 + r*32,
    # column block b of a row 512 bytes further
    maskall
    li t4, UB_PZ0 + \s * (UB_PZ1 - UB_PZ0)
    wait_flag MTE3, V, \s
    mv t5, s6
4:  li t0, 16
    min t6, t5, t0
    vcfgr t2, t6, 16, 1, 1, 1, 8, 8
    vconv.f32.f16 t4, t3, t2
    li t0, 2048
    add t4, t4, t0
    li t0, 16 * 256
    add t3, t3, t0
    addi t5, t5, -16
    blt zero, t5, 4b
    set_flag V, FIX, \s
    set_flag V, MTE3, \s
    # MTE3: P (M1 groups of 2 KB) -> L1_P[s]
    addi t0, s6, 15
    srli t0, t0, 4
    slli t0, t0, 11
    slli t1, t0, 16
    ori t1, t1, 1
    li t2, 0
    li t3, UB_PZ0 + \s * (UB_PZ1 - UB_PZ0)
    li t4, L1_P0 + \s * (L1_P1 - L1_P0)
    wait_flag V, MTE3, \s
    wait_flag MTE1, MTE3, \s
    mov.ub2l1.f16 t4, t3, t1, t2
    set_flag MTE3, V, \s
    set_flag MTE3, MTE1, \s
.endm

# ---- issue PV_t (slot \s) and the accumulator update ----
.macro pv s
    # MTE1: P -> L0A_P[s]; V (L1, NZ) -> L0B_V[s] (ZN, transposed fractals)
    addi t0, s6, 15
    srli t0, t0, 4
    slli t0, t0, 11
    slli t1, t0, 16
    ori t1, t1, 1
    li t2, 0
    li t3, L1_P0 + \s * (L1_P1 - L1_P0)
    li t4, L0A_P0 + \s * (L0A_P1 - L0A_P0)
    wait_flag MTE3, MTE1, \s
    wait_flag MTE2, MTE1, \s
    wait_flag M, MTE1, \s
    mov.l12l0a.f16 t4, t3, t1, t2
    dmacfg t1, KD1, 512
    dmastride t2, 2048, 512
    li t3, L1_V0 + \s * (L1_V1 - L1_V0)
    li t4, L0B_V0 + \s * (L0B_V1 - L0B_V0)
    li t5, 0
2:  mov.l12l0b.trans.f16 t4, t3, t1, t2
    addi t3, t3, 512
    addi t4, t4, KD1 * 512
    addi t5, t5, 1
    li t0, 4
    blt t5, t0, 2b
    set_flag MTE1, MTE3, \s
    set_flag MTE1, MTE2, \s
    set_flag MTE1, M, \s
    # M: PV = P V, m = nq, k = 64, n = HD
    ldc t1, (1 << 48) | (HD << 32) | (BC << 16)
    or t1, t1, s6
    li t3, L0C_O0 + \s * (L0C_O1 - L0C_O0)
    li t4, L0A_P0 + \s * (L0A_P1 - L0A_P0)
    li t5, L0B_V0 + \s * (L0B_V1 - L0B_V0)
    wait_flag MTE1, M, \s
    wait_flag FIX, M, 2 + \s
    mmad.f16.f32 t3, t4, t5, t1
    set_flag M, MTE1, \s
    set_flag M, FIX, 2 + \s
    # FIX: PV -> UB_PV[s], nq x HD fp32 rows
    li t1, HD << 16
    or t1, t1, s6
    addi t0, s6, 15
    srli t0, t0, 4
    slli t0, t0, 10
    li t2, (HD * 4) << 32
    or t2, t2, t0
    li t4, UB_PV0 + \s * (UB_PV1 - UB_PV0)
    wait_flag M, FIX, 2 + \s
    wait_flag V, FIX, 2 + \s * (PVF1 - 2)
    fix.l0c2ub.nd.f32.f32 t4, t3, t1, t2, zero
    set_flag FIX, M, 2 + \s
    set_flag FIX, V, 2 + \s * (PVF1 - 2)
.endm

# ---- issue the accumulator update of slot \s: O = O * alpha + PV ----
.macro upd s
    addi t0, s6, 7
    srli t0, t0, 3
    vcfgr t5, t0
    li t1, UB_BRA
    li t6, UB_AL0 + \s * (UB_AL1 - UB_AL0)
    wait_flag FIX, V, 2 + \s * (PVF1 - 2)
    vbrcb.f32 t1, t6, t5
    li t3, UB_O
    li t4, UB_PV0 + \s * (UB_PV1 - UB_PV0)
    li ra, 0
3:  li t0, HD
    sub s11, t0, ra
    li t0, 64
    min s11, s11, t0
    masklanes s11
    slli t0, ra, 2
    add t5, t4, t0               # PV chunk
    li t6, UB_X
    add t6, t6, t0               # X chunk
    vcfgr t2, s6, 1, 1, 0, HD / 8, HD / 8, 1
    vmul.f32 t6, t3, t1, t2      # X = O * alpha
    vcfgr t2, s6, 1, 1, 1, HD / 8, HD / 8, HD / 8
    vadd.f32 t3, t6, t5, t2      # O = X + PV
    addi t3, t3, 256
    addi ra, ra, 64
    li t0, HD
    blt ra, t0, 3b
    set_flag V, FIX, 2 + \s * (PVF1 - 2)
.endm

    .text
    .globl attention
    .type attention, @function
attention:
    coreinfo s0, s1
    li t0, BR - 1
    add s3, a5, t0
    srli s3, s3, 6               # query blocks
    mul s3, s3, a4               # units
    bge s0, s3, 99f
.if CAUSAL
    bne a5, a6, 98f
.endif
    blt a6, zero, 98f
    beqz a6, 98f
    # ---- once: defined scratch, zeroed V slots in L1, causal bias ----
    maskall
    li t0, UB_O
    vcfg t1, 128                 # 32 KB
    vdup.f32 t0, zero, t1
    li t0, UB_PZ0
    vcfg t1, 64                  # both P slots
    vdup.f32 t0, zero, t1
    li t0, UB_M
    vcfg t1, (UB_STAT_END - UB_M) / 256
    vdup.f32 t0, zero, t1
.if CAUSAL
    li t0, UB_CB
    vcfg t1, 64
    vdup.f32 t0, zero, t1
    li t2, UB_CB
    li t3, NEGINF
    vcfg t1, 1
    li t4, 0
97: li t0, 2
    sll t0, t0, t4
    addi t0, t0, -1
    not t0, t0                   # lanes > row
    vmask t0, zero
    vdup.f32 t2, t3, t1
    addi t2, t2, 256
    addi t4, t4, 1
    li t0, 63
    blt t4, t0, 97b
    maskall
.endif
    set_flag V, MTE3, 3
    li t0, L1_V0
    li t1, UB_O
    dmaflat t2, t3, 0x8000
    wait_flag V, MTE3, 3
    mov.ub2l1.f32 t0, t1, t2, t3
    li t0, L1_K0
    mov.ub2l1.f32 t0, t1, t2, t3
    # both later users of the zeroed slots wait for it directly (MTE2 writes
    # them, MTE1 reads rows MTE2 never writes)
    set_flag MTE3, MTE2, 0
    wait_flag MTE3, MTE2, 0
    set_flag MTE3, MTE1, 3
    wait_flag MTE3, MTE1, 3
    # every "free" flag starts set
    set_flag M, MTE2, 2
    set_flag MTE1, MTE2, 0
    set_flag MTE1, MTE2, 1
    set_flag MTE1, MTE2, 2
    set_flag MTE1, MTE2, 3
    set_flag FIX, M, 0
    set_flag FIX, M, 1
    set_flag FIX, M, 2
    set_flag FIX, M, 3
    set_flag V, FIX, 0
    set_flag V, FIX, 1
    set_flag V, FIX, 2
.if NPV == 2
    set_flag V, FIX, 3
.endif
    set_flag MTE3, V, 0
    set_flag MTE3, V, 1
    set_flag MTE3, V, 2
    set_flag MTE1, MTE3, 0
    set_flag MTE1, MTE3, 1
    set_flag M, MTE1, 0
    set_flag M, MTE1, 1
    set_flag M, MTE1, 2
    set_flag M, MTE1, 3
    mv s2, s0
    li s9, 0
10: # ---- unit s2: (bh, query block) ----
    addi t0, a5, BR - 1
    srli t0, t0, 6
    divu s4, s2, t0
    remu s10, s2, t0
    # rotate the query block by the head index, so round-robin units do
    # not give one core the same (causal: same cost) block of every head
    add s10, s10, s4
    remu s10, s10, t0
    slli s5, s10, 6
    sub s6, a5, s5
    li t0, BR
    min s6, s6, t0               # nq
.if CAUSAL
    addi s7, s10, 1
.else
    addi s7, a6, BC - 1
    srli s7, s7, 6
.endif
    # Q rows -> L0A (ZZ: one nd2nz per 16 rows, fractals 512 B apart)
    mul t0, s4, a5
    add t0, t0, s5
    li t1, HD * 2
    mul t0, t0, t1
    add t0, a0, t0
    li t3, (512 << 32) | (HD * 2)
    li t4, L0A_Q
    mv t5, s6
    wait_flag M, MTE2, 2
11: li t1, 16
    min t6, t5, t1
    li t1, (HD * 2) << 16
    or t1, t1, t6
    mov.gm2l0a.nd2nz.f16 t4, t0, t1, t3
    addi t4, t4, KD1 * 512
    li t1, 16 * HD * 2
    add t0, t0, t1
    addi t5, t5, -16
    blt zero, t5, 11b
    set_flag MTE2, M, 2
    wait_flag MTE2, M, 2
    # V: m = -inf, l = 0, O = 0 (after the previous unit's store)
    wait_flag MTE3, V, 2
    maskall
    li t0, UB_M
    li t1, NEGINF
    vcfg t2, 1
    vdup.f32 t0, t1, t2
    li t0, UB_L
    vdup.f32 t0, zero, t2
    li t0, UB_O
    vcfg t2, HD                  # 64 rows x HD fp32 = HD repeats
    vdup.f32 t0, zero, t2
    # ---- the key tiles ----
    li s8, 0
    bnez s9, 12f
    qk 0, s8
    j 13f
12: qk 1, s8
13: # loop: sm(t), qk(t+1), pv(t), upd(t-1): the vector unit does the
    # next softmax before it needs this tile's P V
    bnez s9, 15f
    sm 0, s8
    addi s11, s8, 1
    bge s11, s7, 14f
    qk 1, s11
14: pv 0
.if NPV == 2
    beqz s8, 16f
    upd 1
.else
    upd 0
.endif
    j 16f
15: sm 1, s8
    addi s11, s8, 1
    bge s11, s7, 17f
    qk 0, s11
17: pv 1
.if NPV == 2
    beqz s8, 16f
    upd 0
.else
    upd 1
.endif
16: xori s9, s9, 1
    addi s8, s8, 1
    blt s8, s7, 13b
    set_flag M, MTE2, 2          # Q free once the last S is computed
.if NPV == 2
    # the last tile's update (slot of t = s7 - 1, now s9 ^ 1)
    bnez s9, 20f
    upd 1
    j 21f
20: upd 0
21:
.endif
    # ---- O /= l, cast, store ----
    addi t0, s6, 7
    srli t0, t0, 3
    vcfgr t5, t0
    li t1, UB_BRA
    li t6, UB_L
    vbrcb.f32 t1, t6, t5
    li t3, UB_O
    li t6, UB_X
    li t4, UB_O
    li ra, 0
18: li t0, HD
    sub s11, t0, ra
    li t0, 64
    min s11, s11, t0
    masklanes s11
    vcfgr t2, s6, 1, 1, 0, HD / 8, HD / 8, 1
    vdiv.f32 t6, t3, t1, t2      # X = O / l
    addi t3, t3, 256
    addi t6, t6, 256
    addi ra, ra, 64
    li t0, HD
    blt ra, t0, 18b
.if F32OUT == 0
    # fp16 rows (pitch HD*2) over O, once every chunk of O has been read
    li t6, UB_X
    li ra, 0
19: li t0, HD
    sub s11, t0, ra
    li t0, 64
    min s11, s11, t0
    masklanes s11
    vcfgr t2, s6, 1, 1, 1, HD / 16, HD / 8, 8
    vconv.f32.f16 t4, t6, t2
    addi t6, t6, 256
    addi t4, t4, 128
    addi ra, ra, 64
    li t0, HD
    blt ra, t0, 19b
.endif
    set_flag V, MTE3, 2
    mul t0, s4, a5
    add t0, t0, s5
    li t1, HD * OS
    mul t0, t0, t1
    add t0, a3, t0
    mul t2, s6, t1
    slli t1, t2, 16
    ori t1, t1, 1
    li t2, 0
.if F32OUT
    li t3, UB_X
.else
    li t3, UB_O
.endif
    wait_flag V, MTE3, 2
    mov.ub2gm.f16 t0, t3, t1, t2
    set_flag MTE3, V, 2
    add s2, s2, s1
    blt s2, s3, 10b
    # ---- wait every "free" flag once ----
    wait_flag M, MTE2, 2
    wait_flag MTE1, MTE2, 0
    wait_flag MTE1, MTE2, 1
    wait_flag MTE1, MTE2, 2
    wait_flag MTE1, MTE2, 3
    wait_flag FIX, M, 0
    wait_flag FIX, M, 1
    wait_flag FIX, M, 2
    wait_flag FIX, M, 3
    wait_flag V, FIX, 0
    wait_flag V, FIX, 1
    wait_flag V, FIX, 2
.if NPV == 2
    wait_flag V, FIX, 3
.endif
    wait_flag MTE3, V, 0
    wait_flag MTE3, V, 1
    wait_flag MTE3, V, 2
    wait_flag MTE1, MTE3, 0
    wait_flag MTE1, MTE3, 1
    wait_flag M, MTE1, 0
    wait_flag M, MTE1, 1
    wait_flag M, MTE1, 2
    wait_flag M, MTE1, 3
99: halt
98: trap 1                       # causal needs Sq == Sk; Sk >= 1
    .size attention, . - attention
