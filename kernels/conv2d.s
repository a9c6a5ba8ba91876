# conv2d.s — 2-D convolution through the hardware img2col path (fp16 in,
# fp32 accumulate, fp16 or fp32 out):
#   y[n, co, ho, wo] = sum_{ci, i, j} x[n, ci, ho*SH - PT + i*DH, wo*SW - PL + j*DW] * w[co, ci, i, j]
# (taps outside the image read zero).
#
#   a0 = x  (GM, NC1HWC0 fp16: [N][C1][H][W][16], channel c at c1 = c/16, c0 = c%16)
#   a1 = w  (GM, the cube's L0B fractal layout, fp16: [KB][CO1][16 co][16 k],
#            KB = C1*KH*KW k-blocks in img2col order kb = (c1*KH + i)*KW + j;
#            element [kb][o1][r][c] = w[o1*16 + r, kb/(KH*KW)*16 + c, i, j])
#   a2 = y  (GM, NC1HWC0 with C0 = 16: [N][CO1][HO][WO][16], fp16 or fp32)
#
# Geometry is compile-time (-D): N C1 H W CO1 KH KW SH SW DH DW PT PB PL PR,
# F32OUT (1: fp32 output), RB (output rows per row block; default all),
# tiles TM (output pixels, multiple of 16, <= 128 with KC = 8), TN (output
# channels, multiple of 16) and KC (k-blocks per cube step). Padding must be
# smaller than the dilated kernel (img2col).
#
# Work: units (n, row block, pixel tile, channel tile), split across cores
# in contiguous ranges, so a core changes row block rarely. A row block is
# RB output rows; its input rows (with the halo of the kernel, padding
# clipped to the image) go to L1 as a sub-image with its own top/bottom
# padding, so any image height fits. Weights stream from GM straight into
# L0B per k-step (their GM layout is the L0B layout). Data:
#   GM x --MTE2--> L1 rows[2] --MTE1 img2col.l0a--> L0A[2] \
#   GM w --MTE2 mov.gm2l0b------------------------> L0B[2] -> M (mmad) -> L0C[2] --FIX .nd--> GM y
# Flags (p: row-block buffer, s: L0A/L0B slot per k-step, q: L0C slot per unit):
#   MTE2 -> MTE1 p    rows p loaded          MTE1 -> MTE2 p   rows p free
#   MTE1 -> M s       L0A slot s filled      M -> MTE1 s      L0A slot s consumed
#   MTE2 -> M s       L0B slot s filled      M -> MTE2 s      L0B slot s consumed
#   M -> FIX q        L0C slot q complete    FIX -> M q       L0C slot q drained
# Every "free" flag is set once at the start and waited once at the end.

    .include "npu.inc"

.macro dflt name, v
.ifndef \name
    .equ \name, \v
.endif
.endm
    dflt N, 1
    dflt C1, 1
    dflt H, 8
    dflt W, 8
    dflt CO1, 1
    dflt KH, 3
    dflt KW, 3
    dflt SH, 1
    dflt SW, 1
    dflt DH, 1
    dflt DW, 1
    dflt PT, 0
    dflt PB, 0
    dflt PL, 0
    dflt PR, 0
    dflt F32OUT, 0
    dflt RB, 65535
    dflt TM, 128
    dflt TN, 128
    dflt KC, 8

    .equ EH, DH * (KH - 1) + 1
    .equ EW, DW * (KW - 1) + 1
    .equ HO, (H + PT + PB - EH) / SH + 1
    .equ WO, (W + PL + PR - EW) / SW + 1
    .equ HOWO, HO * WO
    .equ KB, C1 * KH * KW
    .equ TN1, TN / 16
    .equ PTN, (HOWO + TM - 1) / TM          # pixel tiles
    .equ CTN, (CO1 + TN1 - 1) / TN1         # channel tiles
    .equ RBE, RB - (RB > HO) * (RB - HO)    # output rows per block (<= HO)
    .equ RBN, (HO + RBE - 1) / RBE          # row blocks per image
    .equ PTB, (RBE * WO + TM - 1) / TM      # pixel tiles per row block
    .equ UNITS, N * RBN * PTB * CTN
    .equ HPX, (RBE - 1) * SH + EH           # input rows of a block (before clipping)
    .equ HPM, HPX - (HPX > H) * (HPX - H)
    .equ FMAPS, (C1 * HPM * W * 32 + 511) / 512 * 512
.if F32OUT
    .equ OS, 4
.else
    .equ OS, 2
.endif
    .equ L1_F0, 0
    .equ L1_F1, FMAPS
    .equ L0A_HALF, 0x8000
    .equ L0B_HALF, 0x8000
    .equ L0C_HALF, 0x10000

.if (TM % 16) || TM < 16 || (TN % 16) || TN < 16 || KC < 1
    .error "TM and TN must be multiples of 16, KC >= 1"
.endif
.if TM * KC * 32 > L0A_HALF
    .error "TM * KC k-blocks do not fit half of L0A (32 KB)"
.endif
.if KC * TN * 32 > L0B_HALF
    .error "KC * TN do not fit half of L0B (32 KB)"
.endif
.if TM * TN * 4 > L0C_HALF
    .error "TM * TN fp32 do not fit half of L0C (64 KB)"
.endif
.if 2 * FMAPS > 512 * 1024
    .error "two row blocks do not fit L1 (512 KB): lower RB"
.endif
.if PT >= EH || PB >= EH || PL >= EW || PR >= EW || PT > 15 || PB > 15 || PL > 15 || PR > 15
    .error "padding must be < the dilated kernel and <= 15"
.endif
.if HO < 1 || WO < 1
    .error "the dilated kernel is larger than the padded image"
.endif

# Registers over the kernel:
#   a0 x  a1 w  a2 y   s0 core id  s1 cores  s2 unit  s3 end unit
#   s4 row block in L1 (n*RBN + rb; -1: none)  s5 its buffer p  s6 slot s
#   s7 L0C slot q  s8 IMG_FMAP  s9 IMG_KERNEL of that block
# Per unit: a3 rows L1 base, a4 L0C base, a5 n, a6 P0 (pixel in the block),
# a7 NP, gp first pixel of the block, tp block key, ra row block,
# s10 first channel block, s11 channel blocks, t6 k-block.

# one k-step (KC k-blocks from t6) through slot \id
.macro kstep id
    li t0, KB
    sub t0, t0, t6
    li t1, KC
    min t5, t0, t1              # t5: k-blocks this step
    # IMG_POS = P0 | NP << 16 | kb0 << 32 | nkb << 48
    slli t0, a7, 16
    or t0, t0, a6
    slli t1, t6, 32
    or t0, t0, t1
    slli t1, t5, 48
    or t0, t0, t1
    li t1, \id * L0A_HALF
    wait_flag M, MTE1, \id
    img2col.l0a.f16 t1, a3, s8, s9, t0
    set_flag MTE1, M, \id
    # MTE2: weights, nkb bursts of s11 fractals, k-block rows CO1 fractals apart
    li t0, CO1
    mul t0, t6, t0
    add t0, t0, s10
    slli t0, t0, 9
    add t0, a1, t0              # GM source
    slli t2, s11, 9             # burst bytes
    slli t3, t2, 16
    or t3, t3, t5               # DMA_CFG
    slli t4, t2, 32
    ori t4, t4, CO1 * 512       # DMA_STRIDES: src CO1*512, dst burst
    li t1, \id * L0B_HALF
    wait_flag M, MTE2, \id
    mov.gm2l0b.f16 t1, t0, t3, t4
    set_flag MTE2, M, \id
    # MM_CFG = m | k << 16 | n << 32 | init << 48 (init on the first step)
    slli t0, t5, 20             # k = nkb * 16
    or t0, t0, a7
    slli t1, s11, 36            # n = blocks * 16
    or t0, t0, t1
    sltiu t1, t6, 1             # init = (kb0 == 0)
    slli t1, t1, 48
    or t0, t0, t1
    li t1, \id * L0A_HALF
    li t2, \id * L0B_HALF
    wait_flag MTE1, M, \id
    wait_flag MTE2, M, \id
    mmad.f16.f32 a4, t1, t2, t0
    set_flag M, MTE1, \id
    set_flag M, MTE2, \id
    add t6, t6, t5
.endm

# load the input rows of row block ra of image a5 into buffer \nid, and
# set s8/s9 to that sub-image (its height and its own top/bottom padding)
.macro load_block nid
    li t0, RBE * SH
    mul t0, ra, t0
    addi t0, t0, -PT            # t0: top input row (may be < 0)
    max t1, t0, zero            # t1: r0
    sub t2, t1, t0              # t2: top padding of the block
    li t3, RBE
    mul t3, ra, t3
    li t4, HO
    sub t4, t4, t3
    li t5, RBE
    min t4, t4, t5              # rows of this block
    addi t4, t4, -1
    li t5, SH
    mul t4, t4, t5
    add t4, t4, t0
    addi t4, t4, EH             # t4: bottom (exclusive)
    li t5, H
    min t5, t5, t4              # t5: r1
    sub t4, t4, t5              # t4: bottom padding of the block
    sub t3, t5, t1              # t3: rows in L1
    imgkernel s9, KW, KH, SW, SH, DW, DH, PL, PR, 0, 0
    slli t2, t2, 56
    or s9, s9, t2
    slli t4, t4, 60
    or s9, s9, t4
    imgfmap s8, W, 0, C1
    slli t2, t3, 16
    or s8, s8, t2
    # GM x + ((n*C1*H + r0) * W * 32): C1 bursts of rows*W*32 bytes
    li t0, C1 * H
    mul t0, a5, t0
    add t0, t0, t1
    li t2, W * 32
    mul t0, t0, t2
    add t0, a0, t0
    mul t3, t3, t2              # burst bytes
    slli t1, t3, 16
    ori t1, t1, C1
    slli t2, t3, 32
    ori t2, t2, H * W * 32      # src stride: one channel block of the image
    li a3, L1_F0 + \nid * FMAPS
    wait_flag MTE1, MTE2, \nid
    mov.gm2l1.f16 a3, t0, t1, t2
    set_flag MTE2, MTE1, \nid
    wait_flag MTE2, MTE1, \nid
.endm

# drain L0C slot \id: one FIX per 16-channel block into NC1HWC0
.macro drain id
    set_flag M, FIX, \id
    wait_flag M, FIX, \id
    addi t0, a7, 15
    srli t0, t0, 4
    slli t5, t0, 10             # t5: L0C column-block pitch (M1 * 1024)
    # dst = y + ((n*CO1 + cb)*HOWO + P0) * 16 * OS
    li t0, CO1
    mul t0, a5, t0
    add t0, t0, s10
    li t1, HOWO
    mul t0, t0, t1
    add t0, t0, gp
    add t0, t0, a6
    slli t0, t0, 4
    li t1, OS
    mul t0, t0, t1
    add t0, a2, t0
    li t1, 16
    slli t1, t1, 16
    or t1, t1, a7               # FIX_SHAPE m = NP, n = 16
    li t2, 16 * OS
    slli t2, t2, 32
    or t2, t2, t5               # FIX_PITCH
    mv t3, a4
    li t4, 0
3:
.if F32OUT
    fix.l0c2gm.nd.f32.f32 t0, t3, t1, t2, zero
.else
    fix.l0c2gm.nd.f32.f16 t0, t3, t1, t2, zero
.endif
    add t3, t3, t5
    li t6, HOWO * 16 * OS
    add t0, t0, t6
    addi t4, t4, 1
    blt t4, s11, 3b
    set_flag FIX, M, \id
.endm

.macro unit_body q
    wait_flag FIX, M, \q
    li a4, \q * L0C_HALF
    li t6, 0
6:  bnez s6, 7f
    kstep 0
    j 8f
7:  kstep 1
8:  xori s6, s6, 1
    li t0, KB
    blt t6, t0, 6b
    drain \q
.endm

    .text
    .globl conv2d
    .type conv2d, @function
conv2d:
    coreinfo s0, s1
    li t0, UNITS
    add t1, t0, s1
    addi t1, t1, -1
    divu t1, t1, s1
    mul s2, t1, s0
    add s3, s2, t1
    min s3, s3, t0
    bge s2, s3, 19f
    li s4, -1
    li s5, 1
    li s6, 0
    li s7, 0
    # every buffer starts free
    set_flag MTE1, MTE2, 0
    set_flag MTE1, MTE2, 1
    set_flag M, MTE1, 0
    set_flag M, MTE1, 1
    set_flag M, MTE2, 0
    set_flag M, MTE2, 1
    set_flag FIX, M, 0
    set_flag FIX, M, 1
11: # unit s2: n, row block, pixel tile, channel tile
    li t0, RBN * PTB * CTN
    divu a5, s2, t0
    remu t1, s2, t0
    li t0, PTB * CTN
    divu ra, t1, t0             # row block
    remu t1, t1, t0
    li t0, CTN
    divu t2, t1, t0             # pixel tile in the block
    remu t3, t1, t0             # channel tile
    li t0, RBE
    mul t4, ra, t0              # first output row of the block
    li t5, HO
    sub t5, t5, t4
    min t5, t5, t0              # its rows
    li t0, WO
    mul gp, t4, t0              # first pixel of the block
    mul t5, t5, t0              # pixels of the block
    li t0, TM
    mul a6, t2, t0              # P0
    bge a6, t5, 17f             # a tile past a short last block: nothing to do
    sub t0, t5, a6
    li t1, TM
    min a7, t0, t1              # NP
    li t0, TN1
    mul s10, t3, t0             # first channel block
    li t1, CO1
    sub t1, t1, s10
    min s11, t1, t0             # channel blocks
    li t0, RBN
    mul tp, a5, t0
    add tp, tp, ra              # block key
    beq tp, s4, 14f
    # a new row block: release the old buffer (if any), load into the other
    blt s4, zero, 12f
    bnez s5, 15f
    set_flag MTE1, MTE2, 0
    j 12f
15: set_flag MTE1, MTE2, 1
12: xori s5, s5, 1
    mv s4, tp
    bnez s5, 15f
    load_block 0
    j 14f
15: load_block 1
14: li a3, L1_F0
    li t0, FMAPS
    mul t0, t0, s5
    add a3, a3, t0
    bnez s7, 15f
    unit_body 0
    j 16f
15: unit_body 1
16: xori s7, s7, 1
17: addi s2, s2, 1
    blt s2, s3, 11b
    # release the last block, wait every "free" flag once
    blt s4, zero, 12f
    bnez s5, 15f
    set_flag MTE1, MTE2, 0
    j 12f
15: set_flag MTE1, MTE2, 1
12: wait_flag MTE1, MTE2, 0
    wait_flag MTE1, MTE2, 1
    wait_flag M, MTE1, 0
    wait_flag M, MTE1, 1
    wait_flag M, MTE2, 0
    wait_flag M, MTE2, 1
    wait_flag FIX, M, 0
    wait_flag FIX, M, 1
19: halt
    .size conv2d, . - conv2d
