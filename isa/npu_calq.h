/* npu_calq.h — the event queue of the timing engine (sim/timing.c) and of
 * the memory system (memmodel/mem_sys.c): events in (time, creation
 * sequence) order, the order one binary heap would give, at a few dozen
 * host instructions a push and pop.
 *
 * Why a calendar: both models handle an event or two per GM request
 * (millions in a large GEMM) and nearly all of them fall within a few
 * hundred cycles of the last one taken. Those go to a calendar of
 * NPU_CALQ_W one-cycle slots over the window [base, base + W), each slot a
 * FIFO (a slot holds one cycle, so appending keeps creation order), with a
 * bit per non-empty slot; the rest (far ahead, or before base) go to a
 * binary heap. A pop takes the least (time, sequence) of the earliest slot
 * and the heap's top, so the order is exactly the heap's alone. The window
 * only moves up, to the time of what was taken (or to npu_calq_advance's
 * time): then every slotted event is still inside it, and no two cycles of
 * it share a slot.
 *
 * An event carries two 64-bit words of the caller's (a, b). Header-only:
 * the push and pop are inlined into the event loops. */
#ifndef NPU_CALQ_H
#define NPU_CALQ_H

#include <stdint.h>
#include <string.h>

#include "isa/npu_util.h"

#define NPU_CALQ_W 1024u          /* slots (a power of two) */
#define NPU_CALQ_NIL UINT32_MAX
#define NPU_CALQ_NONE UINT64_MAX

typedef struct npu_cev {
    uint64_t t, seq;
    uint64_t a, b;                /* the caller's */
} npu_cev;

typedef struct npu_calq_node {
    npu_cev e;
    uint32_t next;                /* next in its slot's FIFO, or in the free list */
} npu_calq_node;

typedef struct npu_calq {
    uint64_t base;                /* every slotted event has base <= t < base + W */
    uint64_t seq;                 /* sequence of the next event */
    uint64_t min;                 /* least slotted t (NPU_CALQ_NONE: none) */
    size_t nslot;                 /* slotted events */
    npu_calq_node *pool;
    uint32_t npool, cappool, free;
    uint32_t head[NPU_CALQ_W], tail[NPU_CALQ_W];
    uint64_t bits[NPU_CALQ_W / 64];   /* non-empty slots */
    npu_cev *heap;                /* events outside the window */
    size_t nheap, capheap;
} npu_calq;

static inline void npu_calq_init(npu_calq *q)
{
    memset(q, 0, sizeof *q);
    q->free = NPU_CALQ_NIL;
    q->min = NPU_CALQ_NONE;
    for (uint32_t i = 0; i < NPU_CALQ_W; i++)
        q->head[i] = NPU_CALQ_NIL;
}

static inline void npu_calq_free(npu_calq *q)
{
    npu_free(q->pool);
    npu_free(q->heap);
    q->pool = NULL;
    q->heap = NULL;
}

static inline int npu_calq_less(const npu_cev *x, const npu_cev *y)
{
    return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

/* (heap part) -1 when out of memory */
static inline int npu_calq_heap_push(npu_calq *q, const npu_cev *e)
{
    if (q->nheap == q->capheap) {
        size_t nc = q->capheap ? q->capheap * 2 : 256;
        npu_cev *n = npu_realloc(q->heap, nc * sizeof *n);
        if (!n)
            return -1;
        q->heap = n;
        q->capheap = nc;
    }
    size_t i = q->nheap++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!npu_calq_less(e, &q->heap[p]))
            break;
        q->heap[i] = q->heap[p];
        i = p;
    }
    q->heap[i] = *e;
    return 0;
}

static inline npu_cev npu_calq_heap_pop(npu_calq *q)
{
    npu_cev top = q->heap[0], last = q->heap[--q->nheap];
    size_t i = 0, n = q->nheap;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const npu_cev *mv = &last;
        if (l < n && npu_calq_less(&q->heap[l], mv)) { m = l; mv = &q->heap[l]; }
        if (r < n && npu_calq_less(&q->heap[r], mv)) m = r;
        if (m == i)
            break;
        q->heap[i] = q->heap[m];
        i = m;
    }
    if (n)
        q->heap[i] = last;
    return top;
}

/* Queue an event at t: 0, or -1 when out of memory. */
static inline int npu_calq_push(npu_calq *q, uint64_t t, uint64_t a, uint64_t b)
{
    npu_cev e = { t, q->seq++, a, b };
    if (t < q->base || t - q->base >= NPU_CALQ_W)
        return npu_calq_heap_push(q, &e);
    uint32_t i = q->free;
    if (i != NPU_CALQ_NIL) {
        q->free = q->pool[i].next;
    } else {
        if (q->npool == q->cappool) {
            uint32_t nc = q->cappool ? q->cappool * 2 : 256;
            npu_calq_node *np = npu_realloc(q->pool, (size_t)nc * sizeof *np);
            if (!np)
                return -1;
            q->pool = np;
            q->cappool = nc;
        }
        i = q->npool++;
    }
    q->pool[i].e = e;
    q->pool[i].next = NPU_CALQ_NIL;
    uint32_t sl = (uint32_t)(t & (NPU_CALQ_W - 1));
    if (q->head[sl] == NPU_CALQ_NIL) {
        q->head[sl] = i;
        q->bits[sl / 64] |= 1ull << (sl % 64);
    } else {
        q->pool[q->tail[sl]].next = i;
    }
    q->tail[sl] = i;
    q->nslot++;
    if (t < q->min)
        q->min = t;
    return 0;
}

/* The least event time, or NPU_CALQ_NONE when empty. */
static inline uint64_t npu_calq_next(const npu_calq *q)
{
    uint64_t h = q->nheap ? q->heap[0].t : NPU_CALQ_NONE;
    return q->min < h ? q->min : h;
}

static inline size_t npu_calq_size(const npu_calq *q) { return q->nslot + q->nheap; }

/* The window starts at t if nothing earlier is queued (pushes near t then
 * go to slots, not the heap); an event pushed before the window later
 * still comes out in order, from the heap. */
static inline void npu_calq_advance(npu_calq *q, uint64_t t)
{
    if (t > q->base && t <= npu_calq_next(q))
        q->base = t;
}

/* Take the least event into *e: 1, or 0 when empty. */
static inline int npu_calq_pop(npu_calq *q, npu_cev *e)
{
    if (q->nslot) {
        uint32_t sl = (uint32_t)(q->min & (NPU_CALQ_W - 1));
        uint32_t i = q->head[sl];
        if (!q->nheap || npu_calq_less(&q->pool[i].e, &q->heap[0])) {
            *e = q->pool[i].e;
            q->head[sl] = q->pool[i].next;
            q->pool[i].next = q->free;
            q->free = i;
            q->base = e->t;
            if (--q->nslot == 0) {
                q->bits[sl / 64] &= ~(1ull << (sl % 64));
                q->min = NPU_CALQ_NONE;
            } else if (q->head[sl] == NPU_CALQ_NIL) {
                /* the next non-empty slot, at most a window ahead */
                q->bits[sl / 64] &= ~(1ull << (sl % 64));
                uint32_t w = sl / 64;
                uint64_t m = q->bits[w] & (~0ull << (sl % 64));
                while (!m) {
                    w = (w + 1) % (NPU_CALQ_W / 64);
                    m = q->bits[w];
                }
                uint32_t s2 = w * 64 + (uint32_t)__builtin_ctzll(m);
                q->min = e->t + ((s2 - sl) & (NPU_CALQ_W - 1));
            }
            return 1;
        }
    } else if (!q->nheap) {
        return 0;
    }
    *e = npu_calq_heap_pop(q);
    /* e is the least event, so every slotted one is at e->t or later */
    if (e->t > q->base)
        q->base = e->t;
    return 1;
}

#endif
