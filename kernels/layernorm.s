# layernorm.s — layer normalisation over the last axis:
#   y[r, j] = (x[r, j] - mean_r) / sqrt(var_r + eps) * gamma[j] + beta[j]
#   mean_r = sum_j x[r, j] / len,  var_r = sum_j (x[r, j] - mean_r)^2 / len
#
#   a0 = x (GM, rows x len, row-major)   a1 = gamma (len)   a2 = beta (len)
#   a3 = y (rows x len)                   a4 = rows          a5 = len (1..8192)
#   a6 = eps as fp32 bits (e.g. 0x3727c5ac = 1e-5)
#   -D F16=1: fp16 x, gamma, beta, y (computed in fp32 in UB); default fp32.
#
# Tiling, split and synchronisation are those of softmax.s: contiguous row
# ranges per core, tiles of whole rows (up to 40 KB, fp16 24 KB) through
# two UB buffers, rows loaded with .pad at a 16-element pitch, counter-mode
# masks for the tail. The variance is two-pass (centre first, then square), so it
# does not cancel. 1/len is never rounded: len is converted to fp32 on the
# vector unit (exact) and the sums are divided by it.
#
# Per tile, with p = tile & 1:
#   MTE2: wait MTE3->MTE2 p | load buf p | set MTE2->V p
#   V   : wait MTE2->V p    | rows       | set V->MTE3 p
#   MTE3: wait V->MTE3 p    | store      | set MTE3->MTE2 p
# gamma and beta are loaded once before the loop (MTE2 -> V flag 2).

    .include "npu.inc"

.ifndef F16
    .equ F16, 0
.endif
.if F16
    .equ ES, 2
.else
    .equ ES, 4
.endif
    .equ LMAX, 8192             # 128 fp32 repeats: counter mode allows 255
# No vector op works in place (a write into the bank group of a read costs
# a cycle per beat): the chain alternates between the row and a partner
# 256 bytes off modulo 512 (UB block q is in bank group q % 16).
.if F16
    .equ BUFB, 0x6000           # one tile buffer: 24 KB of fp16
    .equ UB_BUF0, 0x00000
    .equ UB_BUF1, 0x06000
    .equ UB_WORK, 0x0c000       # the row in fp32 (W1), 32 KB
    .equ UB_W2, 0x14100         # the partner of W1
    .equ UB_GAMMA, 0x1c280      # gamma in fp32, 32 KB
.else
    .equ BUFB, 0xa000           # one tile buffer: 40 KB
    .equ UB_BUF0, 0x00000
    .equ UB_BUF1, 0x0a000
    .equ UB_WORK, 0x14000       # scratch row (+ up to 512 B of offset)
    .equ UB_GAMMA, 0x1c280      # gamma in fp32, 32 KB
.endif
# gamma and beta sit at 128 modulo 512 (the fp16 work rows at 0 and 256,
# so neither is in the bank group an op writes) and off the work rows'
# banks (bank = block % 48)
    .equ UB_BETA, UB_GAMMA + 0x8000 + 0x200     # beta in fp32
    .equ UB_RED0, UB_BETA + 0x8000 + 0x200      # reduction partials: 8 per repeat (4 KB)
    .equ UB_RED1, UB_RED0 + 0x1000              # (pong)
    .equ UB_BRC, UB_RED1 + 0x100                # 8 blocks: block 0 = broadcast value
    .equ UB_LEN, UB_BRC + 0x100                 # len as s32, then as fp32 (lane 0)
.if UB_LEN + 0x100 > 0x30000
    .error "UB layout does not fit 192 KB"
.endif

# reduce x: sum of the fp32 row at register x (len elements) into lane 0
# of the scratch at t4: vcgadd per 32-byte block (1 cycle a repeat, 8
# partials per repeat), then vcadd over the partials until one is left.
# t3, t5 and t0 are clobbered.
.macro reduce x
    vmaskc a5
    li t4, UB_RED0
    vcgadd.f32 t4, \x, s8
    slli t3, s10, 3
    li t5, UB_RED1
3:  li t0, 1
    ble t3, t0, 4f
    vmaskc t3
    vcadd.f32 t5, t4, s8
    addi t3, t3, 63
    srli t3, t3, 6
    mv t0, t4
    mv t4, t5
    mv t5, t0
    j 3b
4:
.endm

# lane 0 of t4 := lane 0 of t4 / len; broadcast it into block 0 of UB_BRC
.macro mean_bcast
    li t0, 1
    vmaskc t0
    li t0, UB_LEN
    vdiv.f32 t4, t4, t0, s8
.endm
.macro bcast
    li t0, UB_BRC
    vcfg t1, 1
    vbrcb.f32 t0, t4, t1
.endm

# layernorm of the fp32 row at register x in place, with the partner row
# at register y (clobbered)
.macro row x, y
    reduce \x
    mean_bcast
    bcast
    li t0, UB_BRC
    vmaskc a5
    vsub.f32 \y, \x, t0, s9       # y = x - mean
    vmul.f32 \x, \y, \y, s8       # x = y^2
    reduce \x
    mean_bcast
    li t0, 1
    vmaskc t0
    vadds.f32 t4, t4, a6, s8
    vrsqrt.f32 t4, t4, s8
    bcast
    li t0, UB_BRC
    vmaskc a5
    vmul.f32 \x, \y, t0, s9       # x = y * rstd
    li t0, UB_GAMMA
    vmul.f32 \y, \x, t0, s8       # y = x * gamma
    li t0, UB_BETA
    vadd.f32 \x, \y, t0, s8       # x = y + beta
.endm

# One tile of rows [s6, s6 + n) through UB buffer \buf with flag id \id.
.macro tile id, buf
    sub t0, s7, s6
    min gp, t0, s5              # gp: rows in this tile
    mul t0, s6, s4
    add tp, a0, t0              # tp: GM source
    add ra, a3, t0              # ra: GM destination
    li a7, \buf
    slli t1, s4, 16
    or t1, t1, gp
    slli t2, s3, 32
    or t2, t2, s4
    wait_flag MTE3, MTE2, \id
.if F16
    mov.gm2ub.pad.f16 a7, tp, t1, t2
.else
    mov.gm2ub.pad.f32 a7, tp, t1, t2
.endif
    set_flag MTE2, V, \id
    wait_flag MTE2, V, \id
    li t6, 0
    mv s11, a7
5:
.if F16
    li t2, UB_WORK
    li s2, UB_W2
    vmaskc a5
    vcfg t1, 1, 1, 1, 1, 8, 4, 8
    vconv.f16.f32 t2, s11, t1
    row t2, s2
    vmaskc a5
    vcfg t1, 1, 1, 1, 1, 4, 8, 8
    vconv.f32.f16 s11, t2, t1
.else
    addi s2, s11, 256
    andi s2, s2, 511
    addi s2, s2, UB_WORK        # s2: scratch, 256 B off the row modulo 512
    row s11, s2
.endif
    add s11, s11, s3
    addi t6, t6, 1
    blt t6, gp, 5b
    set_flag V, MTE3, \id
    slli t1, s4, 16
    or t1, t1, gp
    slli t2, s4, 32
    or t2, t2, s3
    wait_flag V, MTE3, \id
.if F16
    mov.ub2gm.f16 ra, a7, t1, t2
.else
    mov.ub2gm.f32 ra, a7, t1, t2
.endif
    set_flag MTE3, MTE2, \id
    add s6, s6, gp
.endm

# load a parameter vector (GM at register g, len elements) to fp32 at UB \dst
.macro loadvec g, dst
    li t0, \dst
    li t2, 0
    slli t1, s4, 16
    ori t1, t1, 1
.if F16
    li t0, UB_WORK
    mov.gm2ub.pad.f16 t0, \g, t1, t2
    set_flag MTE2, V, 2
    wait_flag MTE2, V, 2
    li t3, \dst
    vmaskc a5
    vcfg t1, 1, 1, 1, 1, 8, 4, 8
    vconv.f16.f32 t3, t0, t1
    # the next load into UB_WORK must wait for this conversion
    set_flag V, MTE2, 2
    wait_flag V, MTE2, 2
.else
    mov.gm2ub.pad.f32 t0, \g, t1, t2
.endif
.endm

# Registers kept over the kernel:
#   s0 core id      s1 cores       s2 LP (padded len)   s3 UB row pitch
#   s4 GM row bytes s5 rows/tile   s6 next row          s7 end row
#   s8 vcfg contiguous              s9 vcfg broadcast src1
#   s10 ceil(len/64) (first-level partials)

    .text
    .globl layernorm
    .type layernorm, @function
layernorm:
    coreinfo s0, s1
    li t0, LMAX
    bgt a5, t0, 9f
    blt a5, zero, 9f
    beqz a5, 8f
    addi s2, a5, 15
    andi s2, s2, -16
    li t0, ES
    mul s3, s2, t0
    mul s4, a5, t0
    li t0, BUFB
    divu s5, t0, s3
    add t0, a4, s1
    addi t0, t0, -1
    divu t0, t0, s1
    mul s6, t0, s0
    add s7, s6, t0
    min s7, s7, a4
    bge s6, s7, 8f
    vcfg s8, 1
    vcfg s9, 1, 1, 1, 0, 8, 8, 0
    addi s10, a5, 63
    srli s10, s10, 6
    li t0, -1
    vmask t0, t0
    # defined scratch (vbrcb reads 8 lanes), len in fp32 at UB_LEN
    li t0, UB_RED0
    vcfg t1, (UB_LEN - UB_RED0) / 256
    vdup.f32 t0, zero, t1
    li t0, UB_LEN
    vcfg t1, 1
    vdup.s32 t0, a5, t1
    vconv.s32.f32 t0, t0, t1
    loadvec a1, UB_GAMMA
    loadvec a2, UB_BETA
.if F16 == 0
    set_flag MTE2, V, 2
    wait_flag MTE2, V, 2
.endif
    set_flag MTE3, MTE2, 0
    set_flag MTE3, MTE2, 1
1:  tile 0, UB_BUF0
    bge s6, s7, 2f
    tile 1, UB_BUF1
    blt s6, s7, 1b
2:  wait_flag MTE3, MTE2, 0
    wait_flag MTE3, MTE2, 1
8:  halt
9:  trap 1                      # len out of range
    .size layernorm, . - layernorm
