# softmax.s — row softmax: y[r, :] = exp(x[r, :] - max_r) / sum(exp(x[r, :] - max_r))
#
#   a0 = x (GM, ROWS x LEN, row-major, dtype of DT)   a1 = y (same shape)
#   a2 = rows                                           a3 = len (>= 1)
#   -D F16=1: fp16 in/out (computed in fp32 in UB), default fp32.
#
# Rows are split across cores in contiguous ranges (ceil(rows/cores) each).
# A core moves tiles of whole rows (as many as fit in 64 KB) through two UB
# buffers: MTE2 loads tile t+1 while V computes tile t and MTE3 stores
# tile t-1. Rows are loaded with .pad, so a row of any length lands on a
# 32-byte boundary (pitch LP = len rounded up to 16 elements); V works in
# counter mask mode (vmaskc len), so the pad lanes are never read.
# Rows longer than 8192 elements take a two-pass path over chunks of 8192
# (one chunk per buffer): pass 1 keeps a running max m and sum s (online
# softmax: s = s * exp(m - m') + sum exp(x - m')), pass 2 reloads each chunk
# and writes exp(x - m) / s. Pass 1 stores nothing, so its chunks free
# their buffer through V -> MTE3 -> MTE2 (the same free flag as pass 2).
#
# Per tile, with p = tile & 1 (flag id = buffer):
#   MTE2: wait MTE3->MTE2 p | load buf p | set MTE2->V p
#   V   : wait MTE2->V p    | rows       | set V->MTE3 p
#   MTE3: wait V->MTE3 p    | store      | set MTE3->MTE2 p
# MTE3->MTE2 0 and 1 are set once at the start (both buffers free) and
# waited once at the end, so no flag is left set. See docs/kernels.md.

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
# a cycle per beat): each op reads one buffer and writes another whose
# blocks are 256 bytes further modulo 512 (UB block q is in bank group
# q % 16). fp32: the row and a scratch row placed at that offset; fp16: two
# fp32 work rows 256 bytes apart modulo 512.
.if F16
    .equ BUFB, 0x8000           # one tile buffer: 32 KB of fp16
    .equ UB_BUF0, 0x00000
    .equ UB_BUF1, 0x08000
    .equ UB_W1, 0x10000         # the row in fp32
    .equ UB_W2, 0x18100         # its partner
.else
    .equ BUFB, 0x10000          # one tile buffer: 64 KB
    .equ UB_BUF0, 0x00000
    .equ UB_BUF1, 0x10000
    .equ UB_T, 0x20000          # scratch row (+ up to 512 B of offset)
.endif
    .equ UB_RED0, 0x29000       # reduction partials: 8 per repeat (4 KB)
    .equ UB_RED1, 0x2a000       # (pong)
    .equ UB_BRC, 0x2b000        # 8 blocks: block 0 = the row's max / sum
    .equ UB_SM, 0x2b100         # long rows: running max (lane 0)
    .equ UB_SS, 0x2b200         # running sum
    .equ UB_SA, 0x2b300         # rescale factor
    .equ UB_SN, 0x2b400         # new max
    .equ UB_RED_END, 0x2b500
    .equ NEGINF, 0xff800000

# Registers kept over the kernel:
#   s0 core id      s1 cores       s2 LP (padded len)   s3 UB row pitch
#   s4 GM row bytes s5 rows/tile   s6 next row          s7 end row
#   s8 vcfg contiguous (f32)       s9 vcfg broadcast src1
#   s10 ceil(len/64) (first-level partials)

# reduce gop, op, x: the fp32 row at register x (len elements) to one
# value, broadcast into block 0 of UB_BRC. First per 32-byte block (vcgmax /
# vcgadd: 1 cycle a repeat, 8 partials per repeat), then whole repeats
# (vcmax / vcadd) over the partials until one is left.
#   t3: partial count; t4/t5: ping-pong scratch addresses
.macro reduce gop, op, x, cnt=a3, nrep=s10
    vmaskc \cnt
    li t4, UB_RED0
    \gop t4, \x, s8
    slli t3, \nrep, 3
    li t5, UB_RED1
3:  li t0, 1
    ble t3, t0, 4f
    vmaskc t3
    \op t5, t4, s8
    addi t3, t3, 63
    srli t3, t3, 6
    mv t0, t4
    mv t4, t5
    mv t5, t0
    j 3b
4:  li t0, UB_BRC
    vcfg t1, 1
    vbrcb.f32 t0, t4, t1
.endm

# One tile of rows [s6, s6 + n) through UB buffer \buf with flag id \id.
.macro tile id, buf
    sub t0, s7, s6
    min a4, t0, s5              # a4: rows in this tile
    mul t0, s6, s4
    add a5, a0, t0              # a5: GM source
    add a6, a1, t0              # a6: GM destination
    li a7, \buf
    # MTE2: load a4 rows of s4 bytes, padded to the UB pitch s3
    slli t1, s4, 16
    or t1, t1, a4
    slli t2, s3, 32
    or t2, t2, s4
    wait_flag MTE3, MTE2, \id
.if F16
    mov.gm2ub.pad.f16 a7, a5, t1, t2
.else
    mov.gm2ub.pad.f32 a7, a5, t1, t2
.endif
    set_flag MTE2, V, \id
    wait_flag MTE2, V, \id
    li t6, 0
    mv s11, a7
5:
.if F16
    li t2, UB_W1
    li gp, UB_W2
    vmaskc a3
    vcfg t1, 1, 1, 1, 1, 8, 4, 8
    vconv.f16.f32 t2, s11, t1
    row t2, gp
    vmaskc a3
    vcfg t1, 1, 1, 1, 1, 4, 8, 8
    vconv.f32.f16 s11, gp, t1
.else
    addi gp, s11, 256
    andi gp, gp, 511
    addi gp, gp, UB_T           # gp: scratch row, 256 B off s11 modulo 512
    row s11, gp
    vmaskc a3
    vmov.f32 s11, gp, s8
.endif
    add s11, s11, s3
    addi t6, t6, 1
    blt t6, a4, 5b
    set_flag V, MTE3, \id
    # MTE3: store a4 rows from pitch s3 to the dense GM rows
    slli t1, s4, 16
    or t1, t1, a4
    slli t2, s4, 32
    or t2, t2, s3
    wait_flag V, MTE3, \id
.if F16
    mov.ub2gm.f16 a6, a7, t1, t2
.else
    mov.ub2gm.f32 a6, a7, t1, t2
.endif
    set_flag MTE3, MTE2, \id
    add s6, s6, a4
.endm

# softmax of one fp32 row in place at register x
# softmax of the fp32 row at register x into the row at register y
# (x is clobbered)
.macro row x, y
    reduce vcgmax.f32, vcmax.f32, \x
    li t0, UB_BRC
    vmaskc a3
    vsub.f32 \y, \x, t0, s9
    vexp.f32 \x, \y, s8
    reduce vcgadd.f32, vcadd.f32, \x
    li t0, UB_BRC
    vmaskc a3
    vdiv.f32 \y, \x, t0, s9
.endm

# broadcast lane 0 of UB \src into block 0 of UB_BRC
.macro bcast src
    li t0, UB_BRC
    li t1, \src
    vcfg t2, 1
    vbrcb.f32 t0, t1, t2
.endm

# One chunk [s2, s2 + n) of row s6 through buffer \buf (flag id \id), pass s5
.macro lchunk id, buf
    sub t0, a3, s2
    li t1, LMAX
    min a4, t0, t1              # a4: elements in the chunk
    addi s10, a4, 63
    srli s10, s10, 6
    mul t0, s6, a3
    add t0, t0, s2
    li t1, ES
    mul t0, t0, t1
    add a5, a0, t0              # GM source
    add a6, a1, t0              # GM destination
    li a7, \buf
    mul t2, a4, t1              # bytes
    slli t1, t2, 16
    ori t1, t1, 1
    li t2, 0
    wait_flag MTE3, MTE2, \id
.if F16
    mov.gm2ub.pad.f16 a7, a5, t1, t2
.else
    mov.gm2ub.pad.f32 a7, a5, t1, t2
.endif
    set_flag MTE2, V, \id
    wait_flag MTE2, V, \id
.if F16
    li s11, UB_W1
    li gp, UB_W2
    vmaskc a4
    vcfg t1, 1, 1, 1, 1, 8, 4, 8
    vconv.f16.f32 s11, a7, t1
.else
    mv s11, a7
    li gp, UB_T + 256           # the buffers are 0 modulo 512
.endif
    bnez s5, 6f
    # pass 1: m' = max(m, max chunk); s = s * exp(m - m') + sum exp(x - m')
    reduce vcgmax.f32, vcmax.f32, s11, a4, s10
    li t0, 1
    vmaskc t0
    li t1, UB_SN
    li t2, UB_SM
    vmax.f32 t1, t2, t4, s8
    li t3, UB_SA
    vsub.f32 t3, t2, t1, s8
    li t5, UB_RED1
    vexp.f32 t5, t3, s8
    li t3, UB_SS
    li t6, UB_SA
    vmul.f32 t6, t3, t5, s8
    vmov.f32 t2, t1, s8
    bcast UB_SM
    vmaskc a4
    li t0, UB_BRC
    vsub.f32 gp, s11, t0, s9
    vexp.f32 s11, gp, s8
    reduce vcgadd.f32, vcadd.f32, s11, a4, s10
    li t0, 1
    vmaskc t0
    li t3, UB_SS
    li t6, UB_SA
    vadd.f32 t3, t6, t4, s8
    # nothing to store: free the buffer through MTE3
    set_flag V, MTE3, \id
    wait_flag V, MTE3, \id
    set_flag MTE3, MTE2, \id
    j 7f
6:  # pass 2: y = exp(x - m) / s
    bcast UB_SM
    vmaskc a4
    li t0, UB_BRC
    vsub.f32 gp, s11, t0, s9
    vexp.f32 s11, gp, s8
    bcast UB_SS
    vmaskc a4
    li t0, UB_BRC
    vdiv.f32 gp, s11, t0, s9
.if F16
    vcfg t1, 1, 1, 1, 1, 4, 8, 8
    vconv.f32.f16 a7, gp, t1
.else
    vmov.f32 a7, gp, s8
.endif
    set_flag V, MTE3, \id
    li t1, ES
    mul t2, a4, t1
    slli t1, t2, 16
    ori t1, t1, 1
    li t2, 0
    wait_flag V, MTE3, \id
.if F16
    mov.ub2gm.f16 a6, a7, t1, t2
.else
    mov.ub2gm.f32 a6, a7, t1, t2
.endif
    set_flag MTE3, MTE2, \id
7:
.endm

    .text
    .globl softmax
    .type softmax, @function
softmax:
    coreinfo s0, s1
    blt a3, zero, 9f
    beqz a3, 8f
    # this core's rows [s6, s7)
    add t0, a2, s1
    addi t0, t0, -1
    divu t0, t0, s1
    mul s6, t0, s0
    add s7, s6, t0
    min s7, s7, a2
    bge s6, s7, 8f
    vcfg s8, 1
    vcfg s9, 1, 1, 1, 0, 8, 8, 0
    # the reduction scratch is read 8 elements at a time by vbrcb: give it
    # defined contents once
    li t0, -1
    vmask t0, t0
    li t0, UB_RED0
    vcfg t1, (UB_RED_END - UB_RED0) / 256
    vdup.f32 t0, zero, t1
    set_flag MTE3, MTE2, 0
    set_flag MTE3, MTE2, 1
    li t0, LMAX
    bgt a3, t0, 20f
    addi s2, a3, 15
    andi s2, s2, -16
    li t0, ES
    mul s3, s2, t0
    mul s4, a3, t0
    li t0, BUFB
    divu s5, t0, s3
    addi s10, a3, 63
    srli s10, s10, 6
1:  tile 0, UB_BUF0
    bge s6, s7, 2f
    tile 1, UB_BUF1
    blt s6, s7, 1b
2:  wait_flag MTE3, MTE2, 0
    wait_flag MTE3, MTE2, 1
8:  halt
9:  trap 1                      # len < 0
20: # ---- rows longer than LMAX: two passes over chunks ----
    li tp, 0                    # buffer parity
21: li t3, 1
    vmaskc t3
    vcfg t2, 1
    li t0, UB_SM
    li t1, NEGINF
    vdup.f32 t0, t1, t2         # m = -inf
    li t0, UB_SS
    vdup.f32 t0, zero, t2       # s = 0
    li s5, 0                    # pass
22: li s2, 0                    # first element of the chunk
23: bnez tp, 24f
    lchunk 0, UB_BUF0
    j 25f
24: lchunk 1, UB_BUF1
25: xori tp, tp, 1
    li t0, LMAX
    add s2, s2, t0
    blt s2, a3, 23b
    addi s5, s5, 1
    li t0, 2
    blt s5, t0, 22b
    addi s6, s6, 1
    blt s6, s7, 21b
    j 2b
    .size softmax, . - softmax
