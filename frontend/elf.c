/* elf.c — kernel ELF writer and strict loader (docs/elf.md).
 *
 * The loader treats the file as hostile: every offset and size is checked
 * against the file length with overflow-safe arithmetic before it is used,
 * every string is checked for termination inside its table, and each failure
 * names the problem and the byte offset. Fields are read byte by byte so the
 * host's endianness and alignment never matter. */
#include "frontend/elf.h"

#include <string.h>

/* ---- ELF constants (only what we use; no <elf.h> so that the format is
 * spelled out here) ---------------------------------------------------------- */
enum {
    EHDR_SIZE = 64, PHDR_SIZE = 56, SHDR_SIZE = 64, SYM_SIZE = 24,
    ET_EXEC = 2, EV_CURRENT = 1, ELFCLASS64 = 2, ELFDATA2LSB = 1,
    PT_LOAD = 1, PF_X = 1, PF_W = 2, PF_R = 4,
    SHT_NULL = 0, SHT_PROGBITS = 1, SHT_SYMTAB = 2, SHT_STRTAB = 3, SHT_NOBITS = 8,
    SHF_WRITE = 1, SHF_ALLOC = 2, SHF_EXECINSTR = 4,
    STB_LOCAL = 0, STB_GLOBAL = 1, STT_NOTYPE = 0, STT_OBJECT = 1, STT_FUNC = 2,
    STT_SECTION = 3, STT_FILE = 4, SHN_UNDEF = 0, SHN_ABS = 0xfff1,
};

/* Section header indices of the files we write. */
enum { SI_NULL, SI_TEXT, SI_RODATA, SI_DATA, SI_BSS, SI_SYMTAB, SI_STRTAB, SI_SHSTRTAB, SI_COUNT };
static const char *const sec_names[SI_COUNT] = {
    "", ".text", ".rodata", ".data", ".bss", ".symtab", ".strtab", ".shstrtab",
};

/* ---- little-endian helpers ---------------------------------------------- */
static void put16(uint8_t *p, uint64_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint64_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static void put64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static uint64_t get16(const uint8_t *p) { return (uint64_t)p[0] | (uint64_t)p[1] << 8; }
static uint64_t get32(const uint8_t *p) { uint64_t v = 0; for (int i = 3; i >= 0; i--) v = v << 8 | p[i]; return v; }
static uint64_t get64(const uint8_t *p) { uint64_t v = 0; for (int i = 7; i >= 0; i--) v = v << 8 | p[i]; return v; }

static uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) & ~(a - 1); }

/* ---- writer -------------------------------------------------------------- */

static int sec_index_of(int asm_sec)
{
    switch (asm_sec) {
    case ASM_SEC_TEXT: return SI_TEXT;
    case ASM_SEC_RODATA: return SI_RODATA;
    case ASM_SEC_DATA: return SI_DATA;
    case ASM_SEC_BSS: return SI_BSS;
    default: return -1;
    }
}

static int pad_to(npu_buf *b, uint64_t off)
{
    static const uint8_t zeros[64];
    while (b->len < off) {
        size_t n = NPU_MIN((size_t)(off - b->len), sizeof zeros);
        if (npu_buf_append(b, zeros, n))
            return -1;
    }
    return 0;
}

npu_status elf_write_mem(const asm_output *o, npu_buf *b, npu_diag *d)
{
    memset(b, 0, sizeof *b);
    if (!o->ntext)
        return npu_errf(d, NPU_EINVAL, "elf: the kernel has no instructions in .text");
    if (o->entry >= o->ntext * 8 || (o->entry & 7))
        return npu_errf(d, NPU_EINVAL, "elf: entry 0x%llx is outside .text",
                        (unsigned long long)o->entry);

    /* string tables */
    npu_buf strtab = {0}, shstr = {0};
    uint32_t shname[SI_COUNT];
    for (int i = 0; i < SI_COUNT; i++) {
        shname[i] = (uint32_t)shstr.len;
        npu_buf_append(&shstr, sec_names[i], strlen(sec_names[i]) + 1);
    }
    npu_buf_append(&strtab, "", 1);

    /* symbols: null, then the section symbols, then locals, then globals
     * (ELF requires locals before globals; sh_info = first global) */
    size_t nsym = 1 + 4;
    for (size_t i = 0; i < o->nsyms; i++)
        if (sec_index_of(o->syms[i].section) >= 0)
            nsym++;
    uint8_t *symtab = npu_calloc(nsym, SYM_SIZE);
    if (!symtab) {
        npu_buf_free(&strtab);
        npu_buf_free(&shstr);
        return npu_errf(d, NPU_ENOMEM, "elf: out of memory");
    }
    size_t k = 1;
    for (int s = SI_TEXT; s <= SI_BSS; s++, k++) {
        uint8_t *e = symtab + k * SYM_SIZE;
        e[4] = (STB_LOCAL << 4) | STT_SECTION;
        put16(e + 6, (uint64_t)s);
        put64(e + 8, s == SI_TEXT ? 0 : o->data[s - SI_TEXT].addr);
    }
    size_t first_global = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1)
            first_global = k;
        for (size_t i = 0; i < o->nsyms; i++) {
            const asm_sym *sy = &o->syms[i];
            int si = sec_index_of(sy->section);
            if (si < 0 || (sy->global != 0) != (pass == 1))
                continue;
            uint8_t *e = symtab + k++ * SYM_SIZE;
            put32(e, strtab.len);
            npu_buf_append(&strtab, sy->name, strlen(sy->name) + 1);
            int type = sy->type == ASM_SYM_FUNC ? STT_FUNC : sy->type == ASM_SYM_OBJECT ? STT_OBJECT : STT_NOTYPE;
            e[4] = (uint8_t)(((sy->global ? STB_GLOBAL : STB_LOCAL) << 4) | type);
            put16(e + 6, (uint64_t)si);
            put64(e + 8, sy->addr);
            put64(e + 16, sy->size);
        }
    }
    if (!first_global)
        first_global = k;

    /* layout */
    uint64_t sec_off[SI_COUNT] = {0}, sec_size[SI_COUNT] = {0}, sec_addr[SI_COUNT] = {0};
    sec_size[SI_TEXT] = o->ntext * 8;
    for (int s = SI_RODATA; s <= SI_BSS; s++) {
        sec_size[s] = o->data[s - SI_TEXT].size;
        sec_addr[s] = o->data[s - SI_TEXT].addr;
    }
    sec_size[SI_SYMTAB] = nsym * SYM_SIZE;
    sec_size[SI_STRTAB] = strtab.len;
    sec_size[SI_SHSTRTAB] = shstr.len;
    int nph = 0;
    for (int s = SI_TEXT; s <= SI_BSS; s++)
        if (sec_size[s])
            nph++;
    uint64_t off = EHDR_SIZE + (uint64_t)nph * PHDR_SIZE;
    for (int s = SI_TEXT; s < SI_COUNT; s++) {
        off = align_up(off, 8);
        sec_off[s] = off;
        if (s != SI_BSS)
            off += sec_size[s];
    }
    uint64_t shoff = align_up(off, 8);

    /* ELF header */
    uint8_t eh[EHDR_SIZE] = {0x7f, 'E', 'L', 'F', ELFCLASS64, ELFDATA2LSB, EV_CURRENT, 0};
    put16(eh + 16, ET_EXEC);
    put16(eh + 18, ELF_EM_NPU);
    put32(eh + 20, EV_CURRENT);
    put64(eh + 24, o->entry);
    put64(eh + 32, EHDR_SIZE);
    put64(eh + 40, shoff);
    put32(eh + 48, ELF_NPU_FLAGS);
    put16(eh + 52, EHDR_SIZE);
    put16(eh + 54, PHDR_SIZE);
    put16(eh + 56, (uint64_t)nph);
    put16(eh + 58, SHDR_SIZE);
    put16(eh + 60, SI_COUNT);
    put16(eh + 62, SI_SHSTRTAB);
    npu_buf_append(b, eh, sizeof eh);

    static const uint32_t pflags[SI_COUNT] = {0, PF_R | PF_X, PF_R, PF_R | PF_W, PF_R | PF_W};
    for (int s = SI_TEXT; s <= SI_BSS; s++) {
        if (!sec_size[s])
            continue;
        uint8_t ph[PHDR_SIZE] = {0};
        put32(ph, PT_LOAD);
        put32(ph + 4, pflags[s]);
        put64(ph + 8, sec_off[s]);
        put64(ph + 16, sec_addr[s]);
        put64(ph + 24, sec_addr[s]);
        put64(ph + 32, s == SI_BSS ? 0 : sec_size[s]);
        put64(ph + 40, sec_size[s]);
        put64(ph + 48, 8);
        npu_buf_append(b, ph, sizeof ph);
    }
    for (int s = SI_TEXT; s < SI_COUNT; s++) {
        if (s == SI_BSS)
            continue;
        pad_to(b, sec_off[s]);
        if (s == SI_TEXT) {
            for (size_t i = 0; i < o->ntext; i++) {
                uint8_t w[8];
                put64(w, o->text[i]);
                npu_buf_append(b, w, 8);
            }
        } else if (s == SI_RODATA || s == SI_DATA) {
            if (sec_size[s])
                npu_buf_append(b, o->data[s - SI_TEXT].bytes, sec_size[s]);
        } else if (s == SI_SYMTAB) {
            npu_buf_append(b, symtab, sec_size[s]);
        } else if (s == SI_STRTAB) {
            npu_buf_append(b, strtab.data, strtab.len);
        } else {
            npu_buf_append(b, shstr.data, shstr.len);
        }
    }
    pad_to(b, shoff);
    static const uint32_t stype[SI_COUNT] = {SHT_NULL, SHT_PROGBITS, SHT_PROGBITS, SHT_PROGBITS,
                                             SHT_NOBITS, SHT_SYMTAB, SHT_STRTAB, SHT_STRTAB};
    static const uint64_t sflags[SI_COUNT] = {0, SHF_ALLOC | SHF_EXECINSTR, SHF_ALLOC,
                                              SHF_ALLOC | SHF_WRITE, SHF_ALLOC | SHF_WRITE, 0, 0, 0};
    for (int s = 0; s < SI_COUNT; s++) {
        uint8_t sh[SHDR_SIZE] = {0};
        if (s) {
            put32(sh, shname[s]);
            put32(sh + 4, stype[s]);
            put64(sh + 8, sflags[s]);
            put64(sh + 16, sec_addr[s]);
            put64(sh + 24, sec_off[s]);
            put64(sh + 32, sec_size[s]);
            if (s == SI_SYMTAB) {
                put32(sh + 40, SI_STRTAB);
                put32(sh + 44, first_global);
                put64(sh + 56, SYM_SIZE);
            }
            put64(sh + 48, s >= SI_STRTAB ? 1 : 8);
        }
        npu_buf_append(b, sh, sizeof sh);
    }
    npu_free(symtab);
    int oom = b->oom || strtab.oom || shstr.oom;
    npu_buf_free(&strtab);
    npu_buf_free(&shstr);
    if (oom) {
        npu_buf_free(b);
        return npu_errf(d, NPU_ENOMEM, "elf: out of memory");
    }
    return NPU_OK;
}

npu_status elf_write(const char *path, const asm_output *o, npu_diag *d)
{
    npu_buf b;
    npu_status s = elf_write_mem(o, &b, d);
    if (s) {
        npu_diag_prefix(d, "%s", path);
        return s;
    }
    s = npu_write_file_atomic(path, b.data, b.len, d);
    npu_buf_free(&b);
    return s;
}

/* ---- loader -------------------------------------------------------------- */

typedef struct shdr {
    uint64_t name, type, flags, addr, off, size, link, info, align, entsize;
} shdr;

typedef struct lctx {
    const uint8_t *p;
    uint64_t len;
    const char *name;
    npu_diag *d;
} lctx;

/* [off, off+size) inside the file, without overflow. */
static int in_file(const lctx *c, uint64_t off, uint64_t size)
{
    return off <= c->len && size <= c->len - off;
}

#define FAIL(...) return npu_errf(c->d, NPU_EFORMAT, __VA_ARGS__)

/* A NUL-terminated string at offset o of a string table section. */
static const char *str_at(const lctx *c, const shdr *st, uint64_t o)
{
    if (o >= st->size)
        return NULL;
    const uint8_t *s = c->p + st->off + o;
    if (!memchr(s, 0, st->size - o))
        return NULL;
    return (const char *)s;
}

void elf_free(elf_image *img)
{
    if (!img)
        return;
    npu_free(img->text);
    for (size_t i = 0; i < img->nsegs; i++)
        npu_free(img->segs[i].data);
    npu_free(img->segs);
    for (size_t i = 0; i < img->nsyms; i++)
        npu_free(img->syms[i].name);
    npu_free(img->syms);
    memset(img, 0, sizeof *img);
}

static npu_status load(lctx *c, elf_image *img)
{
    const uint8_t *p = c->p;
    const char *nm = c->name;
    if (c->len < 16)
        FAIL("%s: truncated ELF identification (%llu bytes, need 16)", nm, (unsigned long long)c->len);
    if (memcmp(p, "\177ELF", 4) != 0)
        FAIL("%s: not an ELF file (bad magic at offset 0)", nm);
    if (p[4] != ELFCLASS64)
        FAIL("%s: ELF class %u at offset 4 is not ELFCLASS64 (2)", nm, p[4]);
    if (p[5] != ELFDATA2LSB)
        FAIL("%s: ELF data encoding %u at offset 5 is not little-endian (1)", nm, p[5]);
    if (p[6] != EV_CURRENT)
        FAIL("%s: ELF identification version %u at offset 6 is not 1", nm, p[6]);
    if (c->len < EHDR_SIZE)
        FAIL("%s: truncated ELF header (%llu bytes, need 64)", nm, (unsigned long long)c->len);
    if (get16(p + 16) != ET_EXEC)
        FAIL("%s: e_type %llu at offset 16 is not ET_EXEC (2)", nm, (unsigned long long)get16(p + 16));
    if (get16(p + 18) != ELF_EM_NPU)
        FAIL("%s: e_machine 0x%llx at offset 18 is not the NPU (0x%x)", nm,
             (unsigned long long)get16(p + 18), ELF_EM_NPU);
    if (get32(p + 20) != EV_CURRENT)
        FAIL("%s: e_version %llu at offset 20 is not 1", nm, (unsigned long long)get32(p + 20));
    uint64_t entry = get64(p + 24), phoff = get64(p + 32), shoff = get64(p + 40);
    uint64_t ehsize = get16(p + 52), phentsize = get16(p + 54), phnum = get16(p + 56);
    uint64_t shentsize = get16(p + 58), shnum = get16(p + 60), shstrndx = get16(p + 62);
    if (ehsize != EHDR_SIZE)
        FAIL("%s: e_ehsize %llu at offset 52 is not 64", nm, (unsigned long long)ehsize);
    if (phnum && phentsize != PHDR_SIZE)
        FAIL("%s: e_phentsize %llu at offset 54 is not 56", nm, (unsigned long long)phentsize);
    if (shentsize != SHDR_SIZE)
        FAIL("%s: e_shentsize %llu at offset 58 is not 64", nm, (unsigned long long)shentsize);
    if (!phnum)
        FAIL("%s: no program headers (e_phnum is 0)", nm);
    if (!in_file(c, phoff, phnum * PHDR_SIZE))
        FAIL("%s: program headers at offset %llu (%llu x 56 bytes) extend past the end of the file (%llu bytes)",
             nm, (unsigned long long)phoff, (unsigned long long)phnum, (unsigned long long)c->len);
    if (shnum < 2)
        FAIL("%s: e_shnum %llu: a kernel needs section headers", nm, (unsigned long long)shnum);
    if (!in_file(c, shoff, shnum * SHDR_SIZE))
        FAIL("%s: section headers at offset %llu (%llu x 64 bytes) extend past the end of the file (%llu bytes)",
             nm, (unsigned long long)shoff, (unsigned long long)shnum, (unsigned long long)c->len);
    if (shstrndx == 0 || shstrndx >= shnum)
        FAIL("%s: e_shstrndx %llu at offset 62 is not a section (e_shnum %llu)", nm,
             (unsigned long long)shstrndx, (unsigned long long)shnum);

    shdr sh[64];
    if (shnum > NPU_ARRAY_LEN(sh))
        FAIL("%s: %llu sections: more than the %zu a kernel may have", nm, (unsigned long long)shnum,
             NPU_ARRAY_LEN(sh));
    for (uint64_t i = 0; i < shnum; i++) {
        const uint8_t *q = p + shoff + i * SHDR_SIZE;
        shdr *s = &sh[i];
        s->name = get32(q); s->type = get32(q + 4); s->flags = get64(q + 8); s->addr = get64(q + 16);
        s->off = get64(q + 24); s->size = get64(q + 32); s->link = get32(q + 40);
        s->info = get32(q + 44); s->align = get64(q + 48); s->entsize = get64(q + 56);
        if (s->type != SHT_NOBITS && s->type != SHT_NULL && !in_file(c, s->off, s->size))
            FAIL("%s: section %llu (header at offset %llu): data at offset %llu size %llu extends past the end of the file (%llu bytes)",
                 nm, (unsigned long long)i, (unsigned long long)(shoff + i * SHDR_SIZE),
                 (unsigned long long)s->off, (unsigned long long)s->size, (unsigned long long)c->len);
        if ((s->flags & SHF_ALLOC) && s->addr + s->size < s->addr)
            FAIL("%s: section %llu: address range 0x%llx + %llu wraps around", nm,
                 (unsigned long long)i, (unsigned long long)s->addr, (unsigned long long)s->size);
    }
    const shdr *shs = &sh[shstrndx];
    if (shs->type != SHT_STRTAB)
        FAIL("%s: section name table (section %llu) is not SHT_STRTAB", nm, (unsigned long long)shstrndx);
    int idx_text = -1, idx_sec[ASM_SEC_COUNT] = {-1, -1, -1, -1}, idx_symtab = -1;
    static const char *const want[ASM_SEC_COUNT] = {".text", ".rodata", ".data", ".bss"};
    for (uint64_t i = 1; i < shnum; i++) {
        const char *sn = str_at(c, shs, sh[i].name);
        if (!sn)
            FAIL("%s: section %llu: name offset %llu is outside the section name table or unterminated",
                 nm, (unsigned long long)i, (unsigned long long)sh[i].name);
        for (int k = 0; k < ASM_SEC_COUNT; k++)
            if (!strcmp(sn, want[k])) {
                if (idx_sec[k] >= 0)
                    FAIL("%s: two %s sections", nm, sn);
                idx_sec[k] = (int)i;
                int want_type = k == ASM_SEC_BSS ? SHT_NOBITS : SHT_PROGBITS;
                if (sh[i].type != (uint64_t)want_type || !(sh[i].flags & SHF_ALLOC))
                    FAIL("%s: section %s has type %llu / flags 0x%llx, expected an allocated %s", nm, sn,
                         (unsigned long long)sh[i].type, (unsigned long long)sh[i].flags,
                         k == ASM_SEC_BSS ? "SHT_NOBITS" : "SHT_PROGBITS");
            }
        if (sh[i].type == SHT_SYMTAB) {
            if (idx_symtab >= 0)
                FAIL("%s: more than one symbol table", nm);
            idx_symtab = (int)i;
        }
    }
    idx_text = idx_sec[ASM_SEC_TEXT];
    if (idx_text < 0)
        FAIL("%s: no .text section", nm);
    const shdr *tx = &sh[idx_text];
    if (tx->addr != 0)
        FAIL("%s: .text at address 0x%llx, must be 0", nm, (unsigned long long)tx->addr);
    if (tx->size == 0 || tx->size % 8)
        FAIL("%s: .text size %llu is not a non-zero multiple of 8 (one 8-byte word per instruction)", nm,
             (unsigned long long)tx->size);
    if (entry >= tx->size || entry % 8)
        FAIL("%s: entry point 0x%llx (offset 24) is outside .text (0..0x%llx) or not 8-aligned", nm,
             (unsigned long long)entry, (unsigned long long)tx->size);
    /* allocated sections must not overlap in address space */
    for (int a = 0; a < ASM_SEC_COUNT; a++)
        for (int b2 = a + 1; b2 < ASM_SEC_COUNT; b2++) {
            if (idx_sec[a] < 0 || idx_sec[b2] < 0)
                continue;
            const shdr *x = &sh[idx_sec[a]], *y = &sh[idx_sec[b2]];
            if (x->size && y->size && x->addr < y->addr + y->size && y->addr < x->addr + x->size)
                FAIL("%s: sections %s and %s overlap", nm, want[a], want[b2]);
        }

    /* program headers: PT_LOADs in bounds, not overlapping, and each
     * allocated section covered by one with the right file bytes */
    uint64_t lv[64], lm[64], lo[64], lf[64];
    size_t nload = 0;
    for (uint64_t i = 0; i < phnum; i++) {
        const uint8_t *q = p + phoff + i * PHDR_SIZE;
        uint64_t q_off = phoff + i * PHDR_SIZE;
        if (get32(q) != PT_LOAD)
            continue;
        uint64_t off = get64(q + 8), va = get64(q + 16), fsz = get64(q + 32), msz = get64(q + 40);
        if (fsz > msz)
            FAIL("%s: program header %llu (offset %llu): p_filesz %llu > p_memsz %llu", nm,
                 (unsigned long long)i, (unsigned long long)q_off, (unsigned long long)fsz,
                 (unsigned long long)msz);
        if (!in_file(c, off, fsz))
            FAIL("%s: program header %llu (offset %llu): segment at file offset %llu size %llu extends past the end of the file (%llu bytes)",
                 nm, (unsigned long long)i, (unsigned long long)q_off, (unsigned long long)off,
                 (unsigned long long)fsz, (unsigned long long)c->len);
        if (va + msz < va)
            FAIL("%s: program header %llu: address range 0x%llx + %llu wraps around", nm,
                 (unsigned long long)i, (unsigned long long)va, (unsigned long long)msz);
        if (nload == NPU_ARRAY_LEN(lv))
            FAIL("%s: more than %zu PT_LOAD segments", nm, NPU_ARRAY_LEN(lv));
        for (size_t j = 0; j < nload; j++)
            if (msz && lm[j] && va < lv[j] + lm[j] && lv[j] < va + msz)
                FAIL("%s: program header %llu: segment 0x%llx..0x%llx overlaps an earlier segment 0x%llx..0x%llx",
                     nm, (unsigned long long)i, (unsigned long long)va, (unsigned long long)(va + msz),
                     (unsigned long long)lv[j], (unsigned long long)(lv[j] + lm[j]));
        lv[nload] = va; lm[nload] = msz; lo[nload] = off; lf[nload] = fsz;
        nload++;
    }
    for (int k = 0; k < ASM_SEC_COUNT; k++) {
        if (idx_sec[k] < 0 || !sh[idx_sec[k]].size)
            continue;
        const shdr *s = &sh[idx_sec[k]];
        int ok = 0;
        for (size_t j = 0; j < nload && !ok; j++) {
            if (s->addr < lv[j] || s->addr + s->size > lv[j] + lm[j])
                continue;
            uint64_t rel = s->addr - lv[j];
            if (k == ASM_SEC_BSS)
                ok = rel >= lf[j];
            else
                ok = rel + s->size <= lf[j] && lo[j] + rel == s->off;
        }
        if (!ok)
            FAIL("%s: section %s (0x%llx, %llu bytes) is not loaded by any PT_LOAD segment", nm, want[k],
                 (unsigned long long)s->addr, (unsigned long long)s->size);
    }

    /* symbol table */
    const shdr *sy = NULL, *ss = NULL;
    if (idx_symtab >= 0) {
        sy = &sh[idx_symtab];
        if (sy->entsize != SYM_SIZE || sy->size % SYM_SIZE)
            FAIL("%s: .symtab entry size %llu / size %llu: entries must be 24 bytes", nm,
                 (unsigned long long)sy->entsize, (unsigned long long)sy->size);
        if (sy->link == 0 || sy->link >= shnum || sh[sy->link].type != SHT_STRTAB)
            FAIL("%s: .symtab links to section %llu, which is not a string table", nm,
                 (unsigned long long)sy->link);
        ss = &sh[sy->link];
    }

    /* everything is checked that bounds reads; now copy out */
    img->text = npu_malloc(tx->size);
    if (!img->text)
        return npu_errf(c->d, NPU_ENOMEM, "%s: out of memory", nm);
    img->ntext = tx->size / 8;
    for (size_t i = 0; i < img->ntext; i++)
        img->text[i] = get64(p + tx->off + 8 * i);
    img->text_addr = 0;
    img->entry = entry;
    img->segs = npu_calloc(ASM_SEC_COUNT, sizeof *img->segs);
    if (!img->segs)
        return npu_errf(c->d, NPU_ENOMEM, "%s: out of memory", nm);
    for (int k = ASM_SEC_RODATA; k < ASM_SEC_COUNT; k++) {
        if (idx_sec[k] < 0 || !sh[idx_sec[k]].size)
            continue;
        const shdr *s = &sh[idx_sec[k]];
        elf_seg *g = &img->segs[img->nsegs++];
        g->addr = s->addr;
        g->size = s->size;
        g->kind = k;
        if (k != ASM_SEC_BSS) {
            g->filesz = s->size;
            g->data = npu_malloc(s->size);
            if (!g->data)
                return npu_errf(c->d, NPU_ENOMEM, "%s: out of memory", nm);
            memcpy(g->data, p + s->off, s->size);
        }
    }
    if (sy) {
        size_t n = sy->size / SYM_SIZE;
        img->syms = npu_calloc(n ? n : 1, sizeof *img->syms);
        if (!img->syms)
            return npu_errf(c->d, NPU_ENOMEM, "%s: out of memory", nm);
        for (size_t i = 1; i < n; i++) {
            const uint8_t *e = p + sy->off + i * SYM_SIZE;
            uint64_t e_off = sy->off + i * SYM_SIZE;
            int type = e[4] & 15, bind = e[4] >> 4;
            uint64_t shn = get16(e + 6), val = get64(e + 8), size = get64(e + 16);
            if (type == STT_SECTION || type == STT_FILE)
                continue;
            const char *sname = str_at(c, ss, get32(e));
            if (!sname)
                FAIL("%s: symbol %zu (offset %llu): name offset %llu is outside .strtab or unterminated", nm,
                     i, (unsigned long long)e_off, (unsigned long long)get32(e));
            if (type != STT_NOTYPE && type != STT_OBJECT && type != STT_FUNC)
                FAIL("%s: symbol %s: unsupported type %d", nm, sname, type);
            if (bind != STB_LOCAL && bind != STB_GLOBAL)
                FAIL("%s: symbol %s: unsupported binding %d", nm, sname, bind);
            if (shn == SHN_ABS)
                continue;
            int kind = -1;
            for (int k = 0; k < ASM_SEC_COUNT; k++)
                if (idx_sec[k] >= 0 && (uint64_t)idx_sec[k] == shn)
                    kind = k;
            if (kind < 0)
                FAIL("%s: symbol %s: section index %llu is not .text/.rodata/.data/.bss", nm, sname,
                     (unsigned long long)shn);
            const shdr *s = &sh[idx_sec[kind]];
            if (val < s->addr || val - s->addr > s->size || size > s->size - (val - s->addr))
                FAIL("%s: symbol %s: 0x%llx size %llu lies outside its section %s", nm, sname,
                     (unsigned long long)val, (unsigned long long)size, want[kind]);
            elf_sym *o = &img->syms[img->nsyms];
            o->name = npu_strdup(sname);
            if (!o->name)
                return npu_errf(c->d, NPU_ENOMEM, "%s: out of memory", nm);
            img->nsyms++;
            o->addr = val;
            o->size = size;
            o->is_func = type == STT_FUNC;
            o->is_global = bind == STB_GLOBAL;
            o->section = kind;
        }
    }
    return NPU_OK;
}

npu_status elf_load_mem(const void *buf, size_t len, const char *name, elf_image *img, npu_diag *d)
{
    memset(img, 0, sizeof *img);
    lctx c = {buf, len, name ? name : "(memory)", d};
    npu_status s = load(&c, img);
    if (s)
        elf_free(img);
    return s;
}

npu_status elf_load_file(const char *path, elf_image *img, npu_diag *d)
{
    memset(img, 0, sizeof *img);
    uint8_t *data;
    size_t len;
    npu_status s = npu_read_file(path, 0, 0, &data, &len, d);
    if (s)
        return s;
    s = elf_load_mem(data, len, path, img, d);
    npu_free(data);
    return s;
}

const elf_sym *elf_find_sym(const elf_image *img, const char *name)
{
    /* prefer a global of that name over a local one */
    const elf_sym *best = NULL;
    for (size_t i = 0; i < img->nsyms; i++)
        if (!strcmp(img->syms[i].name, name) && (!best || (img->syms[i].is_global && !best->is_global)))
            best = &img->syms[i];
    return best;
}

const elf_sym *elf_sym_at(const elf_image *img, uint64_t pc, uint64_t *offset)
{
    const elf_sym *in = NULL, *before = NULL;
    for (size_t i = 0; i < img->nsyms; i++) {
        const elf_sym *s = &img->syms[i];
        if (s->section != ASM_SEC_TEXT || s->addr > pc)
            continue;
        if (pc - s->addr < s->size) {
            /* innermost: the smallest containing; on a tie the later
             * (local label inside a function of the same extent) */
            if (!in || s->size < in->size || (s->size == in->size && s->addr >= in->addr))
                in = s;
        } else if (!before || s->addr > before->addr ||
                   (s->addr == before->addr && s->is_func && !before->is_func)) {
            before = s;
        }
    }
    const elf_sym *r = in ? in : before;
    if (r && offset)
        *offset = pc - r->addr;
    return r;
}
