# elementwise.s — z = x + y, z = gelu(x) or z = silu(x) over a 1-D tensor
# of n fp16 or fp32 elements (any n), GM -> UB -> vector -> GM, SPMD and
# double-buffered. docs/kernels.md has the diagram and the numbers.
#
#   npusim asm kernels/elementwise.s -I kernels/include -D OP=2 -D F32=0 -o ew.elf
#   (or: npusim ref elementwise --op gelu --dtype f16 --len N -o DIR)
#
# Defines:
#   OP    1 add (args x, y, z, n), 2 gelu (tanh form), 3 silu (args x, z, n)
#   F32   1: fp32 tensors, 0: fp16 (default)
#   TILE  elements per tile (default 8192): a multiple of 64, at most 16320
#         (one vector instruction of <= 255 fp32 repeats per operation) and
#         what fits the UB: 12160 for fp32 add and for gelu/silu
#
# Work split: the tensor is cut into ceil(n / TILE) tiles; core c takes
# tiles c, c + corenum, c + 2 corenum, ... (round robin), the last tile
# being short. The vector unit runs in counter mask mode (vmaskc cnt), so a
# short tile needs no special code: the repeat count follows the count.
#
# GELU, tanh form, written as a logistic (same function, no tanh needed):
#   gelu(x) = 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)),
#   u = sqrt(2/pi) (x + 0.044715 x^3)
# SiLU: silu(x) = x / (1 + exp(-x)). Both are computed in fp32; fp16
# inputs are widened (exact) and the result is rounded once to fp16.
#
# Pipeline (slot s = local tile index & 1; flags are per slot):
#   MTE2:  wait MTE3->MTE2[s] | gm2ub x[s] (,y[s]) | set MTE2->V[s]
#   V:     wait MTE2->V[s]    | compute into x[s]  | set V->MTE3[s]
#   MTE3:  wait V->MTE3[s]    | ub2gm z <- x[s]    | set MTE3->MTE2[s]
# The two MTE3->MTE2 flags are set once before the loop (both slots start
# free) and waited once after it, so no flag is left set.

    .include "npu.inc"

.ifndef OP
    .equ OP, 1
.endif
.ifndef F32
    .equ F32, 0
.endif
.ifndef TILE
    .equ TILE, 8192
.endif
.if (OP < 1) || (OP > 3)
    .error "OP must be 1 (add), 2 (gelu) or 3 (silu)"
.endif
.if (TILE % 64) || (TILE < 64) || (TILE > 16320)
    .error "TILE must be a multiple of 64 in 64..16320"
.endif

.if F32
    .equ ESZ, 4
    .equ LOGESZ, 2
.else
    .equ ESZ, 2
    .equ LOGESZ, 1
.endif
    .equ TB, TILE * ESZ                 # bytes of one tile
.if OP == 1
    .equ SLOT, 2 * TB                   # x, y
.else
    .equ SLOT, TB                       # x (the result overwrites it)
.endif
# gelu/silu fp32 work buffers (shared by the slots: only V touches them):
# XF (fp32 copy of an fp16 x) and two temporaries T1, T2 that the steps
# ping-pong between, so no step updates a buffer in place. Each starts one
# 32-byte block later in the UB bank cycle than the one before (48 banks in
# 16 groups): in every beat the written block's bank group then differs
# from the read blocks' (docs/vector.md), where an in-place operation pays
# a bank-group conflict on every beat.
    .equ F32B, (4 * TILE + 511) / 512 * 512
    .equ SLOTS, (2 * SLOT + 511) / 512 * 512
.if F32
    .equ T1, SLOTS + 32
.else
    .equ XF, SLOTS + 32
    .equ T1, XF + F32B + 32
.endif
    .equ T2, T1 + F32B + 32
.if OP == 1
    .equ UB_END, 2 * SLOT               # add needs no work buffers
.else
    .equ UB_END, T2 + F32B
.endif
.ifndef UB_SIZE
    .equ UB_SIZE, 196608
.endif
.if UB_END > UB_SIZE
    .error "TILE too large for the UB"
.endif

    .equ C_A,   0x3d372713              # 0.044715f
    .equ C_B,   0xbfcc422a              # -2 sqrt(2/pi) = -1.5957691f
    .equ C_ONE, 0x3f800000              # 1.0f
    .equ C_M1,  0xbf800000              # -1.0f

# Register map (callee state of the whole kernel):
#   s0 coreid  s1 corenum  s2 x  s3 y  s4 z  s5 n  s6 ntiles  s7 tile index
#   s8 this tile's element count  s9 byte offset of the tile  s10 DMA config
#   s11 0 (DMA strides: one burst)  t0..t6 scratch

# One tile in slot \s.
.macro tile s
    # cnt = min(TILE, n - t*TILE); offset = t*TILE*ESZ; one burst of cnt*ESZ bytes
    li t0, TILE
    mul t1, s7, t0
    sub s8, s5, t1
    min s8, s8, t0
    slli s9, t1, LOGESZ
    slli t2, s8, LOGESZ
    slli s10, t2, 16
    ori s10, s10, 1
    li t3, \s * SLOT                    # x[s] in UB
    add t4, s2, s9
    wait_flag MTE3, MTE2, \s            # slot free: its last store finished
    mov.gm2ub t3, t4, s10, s11
.if OP == 1
    li t5, \s * SLOT + TB               # y[s]
    add t4, s3, s9
    mov.gm2ub t5, t4, s10, s11
.endif
    set_flag MTE2, V, \s
    wait_flag MTE2, V, \s
    vmaskc s8
.if OP == 1
    vcfg t0, 1
  .if F32
    vadd.f32 t3, t3, t5, t0
  .else
    vadd.f16 t3, t3, t5, t0
  .endif
.else
    vcfg t0, 1
  .if F32
    mv t5, t3                           # x (fp32) in place
  .else
    li t5, XF
    vcfg t1, 1, 1, 1, 1, 8, 4           # f16 -> f32: src 4 blocks a repeat
    vconv.f16.f32 t5, t3, t1
  .endif
    li t6, T1
    li t4, T2
  .if OP == 2
    vmul.f32 t6, t5, t5, t0             # T1 = x^2
    vmul.f32 t4, t6, t5, t0             # T2 = x^3
    li t2, C_A
    vmuls.f32 t6, t4, t2, t0            # T1 = 0.044715 x^3
    vadd.f32 t4, t6, t5, t0             # T2 = x + 0.044715 x^3
    li t2, C_B
    vmuls.f32 t6, t4, t2, t0            # T1 = -2u
  .else
    li t2, C_M1
    vmuls.f32 t6, t5, t2, t0            # T1 = -x
  .endif
    vexp.f32 t4, t6, t0                 # T2 = exp(.)
    li t2, C_ONE
    vadds.f32 t6, t4, t2, t0            # T1 = 1 + exp(.)
  .if F32
    vdiv.f32 t3, t5, t6, t0             # x / (1 + exp(.)) into x[s]
  .else
    vdiv.f32 t4, t5, t6, t0             # T2 = x / (1 + exp(.))
    vcfg t1, 1, 1, 1, 1, 4, 8           # f32 -> f16: dst 4 blocks a repeat
    vconv.f32.f16 t3, t4, t1
  .endif
.endif
    set_flag V, MTE3, \s
    wait_flag V, MTE3, \s
    add t4, s4, s9
    mov.ub2gm t4, t3, s10, s11
    set_flag MTE3, MTE2, \s
.endm

    .text
    .globl main
    .type main, @function
main:
    coreinfo s0, s1
    mv s2, a0
.if OP == 1
    mv s3, a1
    mv s4, a2
    mv s5, a3
.else
    mv s4, a1
    mv s5, a2
.endif
    li s11, 0
    li t0, TILE
    addi s6, s5, TILE - 1
    divu s6, s6, t0                     # ntiles = ceil(n / TILE)
    set_flag MTE3, MTE2, 0              # both slots start free
    set_flag MTE3, MTE2, 1
    mv s7, s0
.Lloop:
    bge s7, s6, .Ldone
    tile 0
    add s7, s7, s1
    bge s7, s6, .Ldone
    tile 1
    add s7, s7, s1
    j .Lloop
.Ldone:
    wait_flag MTE3, MTE2, 0
    wait_flag MTE3, MTE2, 1
    halt
    .size main, . - main
