/* gm.c — global memory: sparse pages inside an allocation table.
 *
 * Why allocations and not a flat address space: a kernel that overruns a
 * tensor by one burst would silently corrupt its neighbour on a flat
 * memory; with every tensor its own allocation and unmapped guard bytes
 * between them, the overrun is a fault naming the tensor and by how much.
 *
 * Why per-allocation page tables and not one global hash map: an access is
 * first matched to its allocation anyway (for the check), after which the
 * page is one array index away. Pages are allocated on first write; a read
 * of a never-written page yields zeros without allocating. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sim/sim_int.h"

void sim_gm_init(sim_gm *g)
{
    memset(g, 0, sizeof *g);
    g->next = SIM_GM_ALLOC_BASE;
}

static void alloc_free_pages(sim_gm_alloc *a)
{
    if (a->pages) {
        for (uint64_t i = 0; i < a->npages; i++)
            npu_free(a->pages[i]);
        npu_free(a->pages);
    }
    a->pages = NULL;
}

void sim_gm_free(sim_gm *g)
{
    for (size_t i = 0; i < g->n; i++)
        alloc_free_pages(&g->a[i]);
    npu_free(g->a);
    memset(g, 0, sizeof *g);
    g->next = SIM_GM_ALLOC_BASE;
}

static const char *kind_word(const sim_gm_alloc *a)
{
    switch (a->kind) {
    case SIM_GM_SEG: return "segment";
    case SIM_GM_PARAM: return "the";
    default: return "tensor";
    }
}

/* "tensor C [0x200000000, +4096)" */
static void alloc_desc(const sim_gm_alloc *a, char *buf, size_t n)
{
    snprintf(buf, n, "%s %s [0x%" PRIx64 ", +%" PRIu64 ")", kind_word(a), a->name, a->addr,
             a->size);
}

/* Index of the last allocation with addr <= x, or -1. */
static long find_le(const sim_gm *g, uint64_t x)
{
    long lo = 0, hi = (long)g->n - 1, r = -1;
    while (lo <= hi) {
        long mid = (lo + hi) / 2;
        if (g->a[mid].addr <= x) {
            r = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return r;
}

static int contains(const sim_gm_alloc *a, uint64_t addr, uint64_t len)
{
    return addr >= a->addr && len <= a->size && addr - a->addr <= a->size - len;
}

/* The allocation containing [addr, addr+len), or NULL; *hint is a lookup
 * cache (an allocation index), tried first and updated on a hit. */
static sim_gm_alloc *lookup_hint(const sim_gm *g, size_t *hint, uint64_t addr, uint64_t len)
{
    if (*hint < g->n && contains(&g->a[*hint], addr, len))
        return &g->a[*hint];
    long i = find_le(g, addr);
    if (i >= 0 && contains(&g->a[i], addr, len)) {
        *hint = (size_t)i;
        return &g->a[i];
    }
    return NULL;
}

static sim_gm_alloc *lookup(sim_gm *g, uint64_t addr, uint64_t len)
{
    return lookup_hint(g, &g->last, addr, len);
}

const sim_gm_alloc *sim_gm_find(sim_gm *g, uint64_t addr, uint64_t len)
{
    return lookup(g, addr, len);
}

/* Beyond this distance from every allocation, "K bytes past the end of X"
 * stops helping: the address is simply wild. */
#define SIM_GM_NEAR (1ull << 20)

/* The message for an access that is not inside one allocation. */
static npu_status bad_access(const sim_gm *g, const char *what, uint64_t addr, uint64_t len,
                             npu_diag *d)
{
    char desc[160];
    if (g->n) {
        long j = find_le(g, addr);
        const sim_gm_alloc *lo = j >= 0 ? &g->a[j] : NULL;
        const sim_gm_alloc *hi = (size_t)(j + 1) < g->n ? &g->a[j + 1] : NULL;
        uint64_t dlo = lo ? (addr >= lo->addr + lo->size ? addr - (lo->addr + lo->size) : 0)
                          : UINT64_MAX;
        uint64_t dhi = hi ? hi->addr - addr : UINT64_MAX;
        if (dlo >= SIM_GM_NEAR && dhi >= SIM_GM_NEAR) {
            alloc_desc(dlo <= dhi ? lo : hi, desc, sizeof desc);
            return npu_errf(d, NPU_EFAULT,
                            "GM %s [0x%" PRIx64 ", +%" PRIu64 ") outside any allocation (the "
                            "nearest is %s)",
                            what, addr, len, desc);
        }
    }
    if (g->n == 0)
        return npu_errf(d, NPU_EFAULT,
                        "GM %s [0x%" PRIx64 ", +%" PRIu64 ") outside any allocation (GM is empty)",
                        what, addr, len);
    long i = find_le(g, addr);
    if (i >= 0) {
        const sim_gm_alloc *a = &g->a[i];
        uint64_t end = a->addr + a->size;
        if (addr < end) { /* starts inside, runs past the end */
            alloc_desc(a, desc, sizeof desc);
            return npu_errf(d, NPU_EFAULT,
                            "GM %s [0x%" PRIx64 ", +%" PRIu64 ") runs %" PRIu64
                            " bytes past the end of %s",
                            what, addr, len, addr + len - end, desc);
        }
        /* in a gap: name the nearer of the two neighbours */
        if ((size_t)i + 1 < g->n) {
            const sim_gm_alloc *b = &g->a[i + 1];
            if (b->addr - addr < addr - end) {
                alloc_desc(b, desc, sizeof desc);
                return npu_errf(d, NPU_EFAULT,
                                "GM %s [0x%" PRIx64 ", +%" PRIu64 ") is %" PRIu64
                                " bytes before the start of %s",
                                what, addr, len, b->addr - addr, desc);
            }
        }
        alloc_desc(a, desc, sizeof desc);
        return npu_errf(d, NPU_EFAULT,
                        "GM %s [0x%" PRIx64 ", +%" PRIu64 ") is %" PRIu64
                        " bytes past the end of %s",
                        what, addr, len, addr - end, desc);
    }
    alloc_desc(&g->a[0], desc, sizeof desc);
    return npu_errf(d, NPU_EFAULT,
                    "GM %s [0x%" PRIx64 ", +%" PRIu64 ") is %" PRIu64 " bytes before the start of %s",
                    what, addr, len, g->a[0].addr - addr, desc);
}

/* guard: the bytes that must stay unmapped around the new allocation (the
 * ELF's own segments are laid out by the assembler and may be adjacent). */
static npu_status insert(sim_gm *g, uint64_t addr, uint64_t size, sim_gm_kind kind, int readonly,
                         const char *name, uint64_t guard, npu_diag *d)
{
    if (size == 0)
        size = 1; /* an empty tensor still gets an address of its own */
    if (addr + size < addr || addr + size > SIM_GM_LIMIT)
        return npu_errf(d, NPU_ENOMEM,
                        "GM: %s [0x%" PRIx64 ", +%" PRIu64 ") does not fit in the address space "
                        "(limit 0x%" PRIx64 ")",
                        name, addr, size, (uint64_t)SIM_GM_LIMIT);
    long i = find_le(g, addr);
    /* overlap or guard violation with the neighbours */
    for (long j = i; j <= i + 1; j++) {
        if (j < 0 || (size_t)j >= g->n)
            continue;
        const sim_gm_alloc *a = &g->a[j];
        uint64_t lo = a->addr >= guard ? a->addr - guard : 0;
        uint64_t hi = a->addr + a->size + guard;
        if (addr < hi && addr + size > lo) {
            char desc[160];
            alloc_desc(a, desc, sizeof desc);
            return npu_errf(d, NPU_EINVAL,
                            "GM: %s [0x%" PRIx64 ", +%" PRIu64 ") overlaps %s or its guard zone",
                            name, addr, size, desc);
        }
    }
    if (g->n == g->cap) {
        size_t nc = g->cap ? g->cap * 2 : 16;
        sim_gm_alloc *na = npu_realloc(g->a, nc * sizeof *na);
        if (!na)
            return npu_errf(d, NPU_ENOMEM, "GM: out of memory for the allocation table");
        g->a = na;
        g->cap = nc;
    }
    uint64_t npages = (size + SIM_GM_PAGE - 1) >> SIM_GM_PAGE_SHIFT;
    uint8_t **pages = npu_calloc((size_t)npages, sizeof *pages);
    if (!pages)
        return npu_errf(d, NPU_ENOMEM, "GM: out of memory for the page table of %s", name);
    size_t pos = (size_t)(i + 1);
    memmove(&g->a[pos + 1], &g->a[pos], (g->n - pos) * sizeof *g->a);
    sim_gm_alloc *a = &g->a[pos];
    memset(a, 0, sizeof *a);
    a->addr = addr;
    a->size = size;
    a->kind = kind;
    a->readonly = readonly;
    snprintf(a->name, sizeof a->name, "%s", name);
    a->pages = pages;
    a->npages = npages;
    g->n++;
    g->last = pos;
    return NPU_OK;
}

npu_status sim_gm_map(sim_gm *g, uint64_t addr, uint64_t size, sim_gm_kind kind, int readonly,
                      const char *name, npu_diag *d)
{
    return insert(g, addr, size, kind, readonly, name, kind == SIM_GM_SEG ? 0 : SIM_GM_GUARD, d);
}

npu_status sim_gm_alloc_new(sim_gm *g, uint64_t size, sim_gm_kind kind, const char *name,
                            uint64_t *addr, npu_diag *d)
{
    /* above every existing allocation and its guard zone */
    uint64_t at = g->next;
    if (g->n) {
        const sim_gm_alloc *l = &g->a[g->n - 1];
        uint64_t after = l->addr + l->size + SIM_GM_GUARD;
        if (after > at)
            at = after;
    }
    at = (at + SIM_GM_ALLOC_ALIGN - 1) & ~(SIM_GM_ALLOC_ALIGN - 1);
    npu_status st = insert(g, at, size, kind, 0, name, SIM_GM_GUARD, d);
    if (st)
        return st;
    *addr = at;
    g->next = at + (size ? size : 1) + SIM_GM_GUARD;
    return NPU_OK;
}

void sim_gm_zero(sim_gm *g, uint64_t addr)
{
    sim_gm_alloc *a = lookup(g, addr, 1);
    if (!a || a->addr != addr)
        return;
    for (uint64_t i = 0; i < a->npages; i++) {
        if (a->pages[i]) {
            npu_free(a->pages[i]);
            a->pages[i] = NULL;
            g->touched -= SIM_GM_PAGE;
        }
    }
}

void sim_gm_drop_kind(sim_gm *g, sim_gm_kind kind)
{
    size_t w = 0;
    for (size_t r = 0; r < g->n; r++) {
        if (g->a[r].kind == kind) {
            alloc_free_pages(&g->a[r]);
            continue;
        }
        g->a[w++] = g->a[r];
    }
    g->n = w;
    g->last = 0;
    g->next = SIM_GM_ALLOC_BASE;
}

npu_status sim_gm_read(sim_gm *g, uint64_t addr, void *dst, uint64_t len, npu_diag *d)
{
    if (len == 0)
        return NPU_OK;
    sim_gm_alloc *a = lookup(g, addr, len);
    if (!a)
        return bad_access(g, "read", addr, len, d);
    uint64_t off = addr - a->addr;
    uint8_t *out = dst;
    while (len) {
        uint64_t pg = off >> SIM_GM_PAGE_SHIFT, po = off & (SIM_GM_PAGE - 1);
        uint64_t n = NPU_MIN(len, SIM_GM_PAGE - po);
        if (a->pages[pg])
            memcpy(out, a->pages[pg] + po, (size_t)n);
        else
            memset(out, 0, (size_t)n);
        out += n;
        off += n;
        len -= n;
    }
    return NPU_OK;
}

static npu_status readonly_err(const sim_gm_alloc *a, uint64_t addr, uint64_t len, npu_diag *d)
{
    char desc[160];
    alloc_desc(a, desc, sizeof desc);
    return npu_errf(d, NPU_EFAULT, "GM write [0x%" PRIx64 ", +%" PRIu64 ") into read-only %s", addr,
                    len, desc);
}

npu_status sim_gm_check(const sim_gm *g, size_t *hint, uint64_t addr, uint64_t len, int is_write,
                        npu_diag *d)
{
    if (len == 0)
        return NPU_OK;
    const sim_gm_alloc *a = lookup_hint(g, hint, addr, len);
    if (!a)
        return bad_access(g, is_write ? "write" : "read", addr, len, d);
    return is_write && a->readonly ? readonly_err(a, addr, len, d) : NPU_OK;
}

static npu_status do_write(sim_gm *g, uint64_t addr, const void *src, uint64_t len, int init,
                           npu_diag *d)
{
    if (len == 0)
        return NPU_OK;
    sim_gm_alloc *a = lookup(g, addr, len);
    if (!a)
        return bad_access(g, "write", addr, len, d);
    if (a->readonly && !init)
        return readonly_err(a, addr, len, d);
    uint64_t off = addr - a->addr;
    const uint8_t *in = src;
    while (len) {
        uint64_t pg = off >> SIM_GM_PAGE_SHIFT, po = off & (SIM_GM_PAGE - 1);
        uint64_t n = NPU_MIN(len, SIM_GM_PAGE - po);
        if (!a->pages[pg]) {
            a->pages[pg] = npu_calloc(1, SIM_GM_PAGE);
            if (!a->pages[pg])
                return npu_errf(d, NPU_ENOMEM, "GM: out of memory for a page of %s", a->name);
            g->touched += SIM_GM_PAGE;
        }
        memcpy(a->pages[pg] + po, in, (size_t)n);
        in += n;
        off += n;
        len -= n;
    }
    return NPU_OK;
}

npu_status sim_gm_write(sim_gm *g, uint64_t addr, const void *src, uint64_t len, npu_diag *d)
{
    return do_write(g, addr, src, len, 0, d);
}

npu_status sim_gm_write_init(sim_gm *g, uint64_t addr, const void *src, uint64_t len,
                             npu_diag *d)
{
    return do_write(g, addr, src, len, 1, d);
}

static npu_status if_read(void *gm, uint64_t addr, void *dst, uint64_t len, npu_diag *d)
{
    return sim_gm_read(gm, addr, dst, len, d);
}

static npu_status if_write(void *gm, uint64_t addr, const void *src, uint64_t len, npu_diag *d)
{
    return sim_gm_write(gm, addr, src, len, d);
}

sim_gm_if sim_gm_iface(sim_gm *g)
{
    sim_gm_if f = {g, if_read, if_write};
    return f;
}
