/* asm.c — the NPU assembler (docs/asm.md).
 *
 * One pass over the source, after macro / .rept / .include / .if expansion,
 * lays out every statement: every instruction is 8 bytes and every
 * pseudo-instruction expands to a fixed count, so addresses are known as
 * soon as a statement is read. Operand expressions that name a symbol not
 * defined yet are kept as trees and evaluated in a final pass, once the data
 * sections are placed in GM; everything else is evaluated at once (so .set
 * counters inside .rept bodies mean what they say at that point).
 *
 * Operands are parsed by walking the format's syntax string from
 * formats.def; suffixes by the format's suffix letters and the row's
 * modifier class. There is no per-instruction code here. */
#include "frontend/asm_int.h"
#include "isa/isa_fp.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- context -------------------------------------------------------------- */

typedef struct line { const char *text; const char *file; int lineno; } line;

enum { FR_FILE, FR_MACRO, FR_REPT };
typedef struct frame {
    int kind;
    line *lines;
    size_t n, pos;
    long reps_left;           /* FR_REPT: further passes over the body */
    const char *path;         /* FR_FILE: path as opened (cycle detection) */
    const char *macro;        /* FR_MACRO */
    const char *call_file;
    int call_line;
    size_t cond_base;         /* .if depth when the frame was entered */
} frame;

enum { SY_UNDEF, SY_LABEL, SY_EQU, SY_SET, SY_COUNTER };
typedef struct sym {
    char *name;
    int kind;
    asm_val val;              /* SY_LABEL: (section, offset); SY_EQU/SET: value */
    asm_expr *lazy;           /* SY_EQU whose value needed later symbols */
    int evaluating;           /* cycle guard for lazy */
    int global, type;         /* .globl, .type (-1 unset) */
    int has_size;
    asm_expr *size_expr;
    asm_loc size_loc;
    asm_loc def;              /* where defined (or first .globl) */
    int emit;                 /* goes into the ELF symbol table */
    struct sym *next;         /* hash chain */
    size_t order;
} sym;

typedef struct macro {
    char *name;
    char **params;
    char **defaults;          /* NULL entry: required */
    size_t nparams;
    line *body;
    size_t nbody;
    asm_loc def;
    struct macro *next;
} macro;

typedef struct cond {
    int parent_active;
    int taken;                /* some branch already taken */
    int active;               /* this branch is active */
    int seen_else;
    asm_loc loc;
} cond;

/* An instruction whose immediate is not known yet, or a data value. */
typedef struct fixup {
    int is_data;
    size_t index;             /* text word index, or byte offset in section */
    int sec;                  /* data: section */
    int size;                 /* data: bytes */
    int kind;                 /* data: 'i' integer, 's', 'u' */
    int tok;                  /* insn: immediate token kind (TK_*) */
    uint64_t pc;
    asm_expr *e;
    asm_val known;            /* when e is NULL: a relocatable value */
    asm_loc loc;
} fixup;

typedef struct chunk { struct chunk *next; size_t used, cap; char data[]; } chunk;

typedef struct asm_ctx {
    const asm_opts *opts;
    asm_output *out;
    int max_errors;
    int stop;                 /* too many errors */
    chunk *arena;
    frame frames[ASM_MAX_DEPTH];
    size_t nframes;
    size_t total_lines;
    sym *buckets[1024];
    size_t nsyms_order;
    macro *macros;
    long macro_counter;
    cond *conds;
    size_t nconds, capconds;
    int sec;                  /* current section */
    /* .text */
    uint64_t *text;
    size_t ntext, captext;
    uint32_t *text_line;
    isa_insn *insns;          /* decoded form of each word, finished in the final pass */
    asm_loc *insn_loc;
    /* data sections */
    npu_buf data[ASM_SEC_COUNT];
    uint64_t bss_size;
    uint64_t align[ASM_SEC_COUNT];
    fixup *fix;
    size_t nfix, capfix;
    asm_loc cur;              /* location of the statement being processed */
    int final;                /* evaluating in the final pass */
    int fixcol;               /* inside a pseudo expansion: its mnemonic's column */
    const int *colmap;        /* ... and the source column of each expansion byte */
    size_t colmap_n;
    uint64_t base[ASM_SEC_COUNT];
} asm_ctx;

/* ---- arena (every string and tree of one run; freed at once) ----------- */

static void *arena_alloc(asm_ctx *c, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!c->arena || c->arena->used + n > c->arena->cap) {
        size_t cap = n > 65536 ? n : 65536;
        chunk *k = npu_malloc(sizeof *k + cap);
        if (!k)
            return NULL;
        k->next = c->arena;
        k->used = 0;
        k->cap = cap;
        c->arena = k;
    }
    void *p = c->arena->data + c->arena->used;
    c->arena->used += n;
    memset(p, 0, n);
    return p;
}

static char *arena_strndup(asm_ctx *c, const char *s, size_t n)
{
    char *p = arena_alloc(c, n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = 0;
    }
    return p;
}

static char *arena_strdup(asm_ctx *c, const char *s) { return arena_strndup(c, s, strlen(s)); }

/* ---- diagnostics --------------------------------------------------------- */

static void add_msg(asm_ctx *c, const asm_loc *l, int warn, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void add_msg(asm_ctx *c, const asm_loc *l, int warn, const char *fmt, ...)
{
    asm_output *o = c->out;
    if (c->stop)
        return;
    if (!warn && (int)o->nerrors >= c->max_errors) {
        c->stop = 1;
        return;
    }
    asm_msg *m = npu_realloc(o->msgs, (o->nmsgs + 1) * sizeof *m);
    if (!m) {
        c->stop = 1;
        return;
    }
    o->msgs = m;
    m = &o->msgs[o->nmsgs];
    memset(m, 0, sizeof *m);
    char buf[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (l && l->macro) {
        size_t k = strlen(buf);
        snprintf(buf + k, sizeof buf - k, " (in macro '%s' called at %s:%d)", l->macro,
                 l->call_file ? l->call_file : "?", l->call_line);
    }
    /* a pseudo-instruction's operand appears in each instruction it expands
     * to: report a problem with it once */
    if (o->nmsgs && l) {
        const asm_msg *p = &o->msgs[o->nmsgs - 1];
        if (p->line == l->line && p->col == l->col && p->msg && !strcmp(p->msg, buf) && p->file &&
            l->file && !strcmp(p->file, l->file))
            return;
    }
    m->msg = npu_strdup(buf);
    m->file = npu_strdup(l && l->file ? l->file : "<input>");
    m->line = l ? l->line : 0;
    m->col = l ? l->col : 0;
    m->src = l && l->src ? npu_strdup(l->src) : NULL;
    m->is_warning = warn;
    o->nmsgs++;
    if (!warn)
        o->nerrors++;
    if (!warn && (int)o->nerrors >= c->max_errors) {
        /* one closing note so the user knows the list was cut */
        c->stop = 1;
    }
}

#define ERR(l, ...) add_msg(c, (l), 0, __VA_ARGS__)

static asm_loc loc_at(asm_ctx *c, int col)
{
    asm_loc l = c->cur;
    l.col = col;
    if (c->fixcol) {
        /* expansion columns are 1 + the byte's index in the expansion */
        l.col = col >= 1 && (size_t)(col - 1) < c->colmap_n ? c->colmap[col - 1] : c->fixcol;
        l.colfixed = 1;
    }
    return l;
}

void asm_msg_format(const asm_msg *m, npu_buf *b)
{
    if (m->col)
        npu_buf_printf(b, "%s:%d:%d: %s: %s\n", m->file, m->line, m->col,
                       m->is_warning ? "warning" : "error", m->msg);
    else
        npu_buf_printf(b, "%s:%d: %s: %s\n", m->file, m->line, m->is_warning ? "warning" : "error",
                       m->msg);
    if (m->src) {
        npu_buf_printf(b, "  %s\n  ", m->src);
        for (int i = 1; i < m->col && m->src[i - 1]; i++)
            npu_buf_printf(b, "%c", m->src[i - 1] == '\t' ? '\t' : ' ');
        npu_buf_printf(b, "^\n");
    }
}

/* ---- symbols -------------------------------------------------------------- */

static unsigned hash(const char *s)
{
    unsigned h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static sym *sym_find(asm_ctx *c, const char *name)
{
    for (sym *s = c->buckets[hash(name) % NPU_ARRAY_LEN(c->buckets)]; s; s = s->next)
        if (!strcmp(s->name, name))
            return s;
    return NULL;
}

static sym *sym_get(asm_ctx *c, const char *name)
{
    sym *s = sym_find(c, name);
    if (s)
        return s;
    s = arena_alloc(c, sizeof *s);
    if (!s)
        return NULL;
    s->name = arena_strdup(c, name);
    s->type = -1;
    s->kind = SY_UNDEF;
    s->val.sec = -1;
    s->order = c->nsyms_order++;
    unsigned h = hash(name) % NPU_ARRAY_LEN(c->buckets);
    s->next = c->buckets[h];
    c->buckets[h] = s;
    return s;
}

/* Numeric local labels "N:" become hidden symbols "\1N#k"; "Nb" names the
 * latest k, "Nf" the next one. */
static void numeric_name(asm_ctx *c, const char *digits, size_t n, int dir, char *out, size_t outlen)
{
    char key[48];
    snprintf(key, sizeof key, "\001cnt%.*s", (int)n, digits);
    sym *cnt = sym_get(c, key);
    long k = cnt ? (long)cnt->val.v : 0;
    if (dir < 0)
        k--;
    snprintf(out, outlen, "\001%.*s#%ld", (int)n, digits, k);
}

/* ---- lexing helpers ----------------------------------------------------- */

static int is_id0(int ch) { return isalpha(ch) || ch == '_' || ch == '.' || ch == '$'; }
static int is_id(int ch) { return isalnum(ch) || ch == '_' || ch == '.' || ch == '$'; }
static const char *skipws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\r')
        p++;
    return p;
}

/* ---- expressions ---------------------------------------------------------- */

typedef struct eparse {
    asm_ctx *c;
    const char *start;        /* statement start (for columns) */
    int col0;                 /* column of start */
    const char *p;
    int err;
} eparse;

enum { OP_SHL = 256, OP_SHR, OP_LE, OP_GE, OP_EQ, OP_NE, OP_LAND, OP_LOR };

static int ecol(eparse *e, const char *at) { return e->col0 + (int)(at - e->start); }

static asm_expr *enode(eparse *e, int kind, const char *at)
{
    asm_expr *x = arena_alloc(e->c, sizeof *x);
    if (!x) {
        e->err = 1;
        return NULL;
    }
    x->kind = kind;
    x->col = ecol(e, at);
    x->val.sec = -1;
    return x;
}

static void eerror(eparse *e, const char *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void eerror(eparse *e, const char *at, const char *fmt, ...)
{
    if (e->err)
        return;
    e->err = 1;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    asm_loc l = loc_at(e->c, ecol(e, at));
    add_msg(e->c, &l, 0, "%s", buf);
}

static asm_expr *parse_cond(eparse *e);

static asm_expr *parse_primary(eparse *e)
{
    asm_ctx *c = e->c;
    e->p = skipws(e->p);
    const char *p = e->p;
    if (*p == '(') {
        e->p++;
        asm_expr *x = parse_cond(e);
        if (e->err)
            return NULL;
        e->p = skipws(e->p);
        if (*e->p != ')') {
            eerror(e, e->p, "expected ')' to close the '(' at column %d", ecol(e, p));
            return NULL;
        }
        e->p++;
        return x;
    }
    if (*p == '-' || *p == '+' || *p == '~' || *p == '!') {
        e->p++;
        asm_expr *a = parse_primary(e);
        if (e->err)
            return NULL;
        if (*p == '+')
            return a;
        asm_expr *x = enode(e, EX_UN, p);
        if (x) {
            x->op = *p;
            x->a = a;
        }
        return x;
    }
    if (isdigit((unsigned char)*p)) {
        /* numeric local label reference: 1b / 1f */
        const char *q = p;
        while (isdigit((unsigned char)*q))
            q++;
        if ((*q == 'b' || *q == 'f') && !is_id(q[1]) && !(q == p + 1 && *p == '0' && *q == 'b' && isdigit((unsigned char)q[1]))) {
            char nm[64];
            numeric_name(c, p, (size_t)(q - p), *q == 'b' ? -1 : 1, nm, sizeof nm);
            asm_expr *x = enode(e, EX_SYM, p);
            if (x)
                x->sym = arena_strdup(c, nm);
            e->p = q + 1;
            return x;
        }
        int base = 10;
        const char *s = p;
        if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) base = 16, s = p + 2;
        else if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B')) base = 2, s = p + 2;
        else if (p[0] == '0' && (p[1] == 'o' || p[1] == 'O')) base = 8, s = p + 2;
        uint64_t v = 0;
        int nd = 0, over = 0;
        for (;; s++) {
            int ch = (unsigned char)*s, dv;
            if (ch == '_' && nd)
                continue;
            if (isdigit(ch)) dv = ch - '0';
            else if (ch >= 'a' && ch <= 'f') dv = ch - 'a' + 10;
            else if (ch >= 'A' && ch <= 'F') dv = ch - 'A' + 10;
            else break;
            if (dv >= base) {
                eerror(e, s, "digit '%c' is not valid in a base-%d number", ch, base);
                return NULL;
            }
            if (v > (UINT64_MAX - (uint64_t)dv) / (uint64_t)base)
                over = 1;
            v = v * (uint64_t)base + (uint64_t)dv;
            nd++;
        }
        if (!nd) {
            eerror(e, p, "expected digits after '%.2s'", p);
            return NULL;
        }
        if (over) {
            eerror(e, p, "number %.*s does not fit in 64 bits", (int)(s - p), p);
            return NULL;
        }
        if (is_id(*s) || *s == '.') {
            eerror(e, s, "unexpected '%c' after the number %.*s", *s, (int)(s - p), p);
            return NULL;
        }
        e->p = s;
        asm_expr *x = enode(e, EX_NUM, p);
        if (x)
            x->val.v = (int64_t)v;
        return x;
    }
    if (*p == '\'') {
        int ch;
        const char *q = p + 1;
        if (*q == '\\') {
            q++;
            switch (*q) {
            case 'n': ch = '\n'; break;
            case 't': ch = '\t'; break;
            case '0': ch = 0; break;
            case '\\': ch = '\\'; break;
            case '\'': ch = '\''; break;
            default: eerror(e, q, "unknown escape '\\%c'", *q ? *q : ' '); return NULL;
            }
            q++;
        } else if (*q && *q != '\'') {
            ch = (unsigned char)*q++;
        } else {
            eerror(e, p, "empty character literal");
            return NULL;
        }
        if (*q != '\'') {
            eerror(e, q, "expected ' to close the character literal");
            return NULL;
        }
        e->p = q + 1;
        asm_expr *x = enode(e, EX_NUM, p);
        if (x)
            x->val.v = ch;
        return x;
    }
    if (*p == '.' && !is_id(p[1])) {
        /* the location counter */
        e->p++;
        asm_expr *x = enode(e, EX_NUM, p);
        if (x) {
            if (c->sec == ASM_SEC_TEXT) {
                x->val.v = (int64_t)(c->ntext * 8);
            } else {
                x->val.sec = c->sec;
                x->val.v = (int64_t)(c->sec == ASM_SEC_BSS ? c->bss_size : c->data[c->sec].len);
            }
        }
        return x;
    }
    if (is_id0((unsigned char)*p)) {
        const char *q = p;
        while (is_id((unsigned char)*q))
            q++;
        e->p = q;
        asm_expr *x = enode(e, EX_SYM, p);
        if (x)
            x->sym = arena_strndup(c, p, (size_t)(q - p));
        return x;
    }
    if (!*p)
        eerror(e, p, "expected an expression, found the end of the line");
    else
        eerror(e, p, "expected an expression, found '%c'", *p);
    return NULL;
}

/* Binary operators by precedence level (C's). */
static int binop(const char *p, int *len)
{
    *len = 2;
    if (p[0] == '<' && p[1] == '<') return OP_SHL;
    if (p[0] == '>' && p[1] == '>') return OP_SHR;
    if (p[0] == '<' && p[1] == '=') return OP_LE;
    if (p[0] == '>' && p[1] == '=') return OP_GE;
    if (p[0] == '=' && p[1] == '=') return OP_EQ;
    if (p[0] == '!' && p[1] == '=') return OP_NE;
    if (p[0] == '&' && p[1] == '&') return OP_LAND;
    if (p[0] == '|' && p[1] == '|') return OP_LOR;
    *len = 1;
    if (strchr("*/%+-<>&^|", p[0]) && p[0])
        return p[0];
    return 0;
}

static int prec(int op)
{
    switch (op) {
    case '*': case '/': case '%': return 10;
    case '+': case '-': return 9;
    case OP_SHL: case OP_SHR: return 8;
    case '<': case '>': case OP_LE: case OP_GE: return 7;
    case OP_EQ: case OP_NE: return 6;
    case '&': return 5;
    case '^': return 4;
    case '|': return 3;
    case OP_LAND: return 2;
    case OP_LOR: return 1;
    default: return 0;
    }
}

static asm_expr *parse_bin(eparse *e, int minprec)
{
    asm_expr *l = parse_primary(e);
    while (!e->err) {
        e->p = skipws(e->p);
        int len, op = binop(e->p, &len);
        if (!op || prec(op) < minprec)
            break;
        const char *at = e->p;
        e->p += len;
        asm_expr *r = parse_bin(e, prec(op) + 1);
        if (e->err)
            return NULL;
        asm_expr *x = enode(e, EX_BIN, at);
        if (!x)
            return NULL;
        x->op = op;
        x->a = l;
        x->b = r;
        x->col = l ? l->col : x->col;  /* a value is reported at its start */
        l = x;
    }
    return e->err ? NULL : l;
}

static asm_expr *parse_cond(eparse *e)
{
    asm_expr *x = parse_bin(e, 1);
    if (e->err)
        return NULL;
    e->p = skipws(e->p);
    if (*e->p != '?')
        return x;
    const char *at = e->p++;
    asm_expr *t = parse_cond(e);
    if (e->err)
        return NULL;
    e->p = skipws(e->p);
    if (*e->p != ':') {
        eerror(e, e->p, "expected ':' of the '?' at column %d", ecol(e, at));
        return NULL;
    }
    e->p++;
    asm_expr *f = parse_cond(e);
    if (e->err)
        return NULL;
    asm_expr *n = enode(e, EX_COND, at);
    if (n) {
        n->a = x;
        n->b = t;
        n->c = f;
        n->col = x->col;
    }
    return n;
}

/* Parse one expression from *pp (a column base col0 for text at start).
 * NULL on error (already reported). */
static asm_expr *parse_expr(asm_ctx *c, const char *start, int col0, const char **pp)
{
    eparse e = {c, start, col0, *pp, 0};
    asm_expr *x = parse_cond(&e);
    *pp = e.p;
    return e.err ? NULL : x;
}

/* Evaluation result: 0 value known, 1 not known yet (a symbol is still
 * undefined, or a data address is used before layout), -1 error (reported). */
typedef struct evalctx {
    asm_ctx *c;
    const asm_loc *loc;
    const char *undef;        /* first undefined symbol met */
    int depth;
} evalctx;

static int eval(evalctx *ev, const asm_expr *x, asm_val *out);

static int eval_sym(evalctx *ev, const asm_expr *x, asm_val *out)
{
    asm_ctx *c = ev->c;
    sym *s = sym_find(c, x->sym);
    asm_loc l = *ev->loc;
    if (!l.colfixed)
        l.col = x->col;
    if (!s || s->kind == SY_UNDEF || s->kind == SY_COUNTER) {
        if (!ev->undef)
            ev->undef = x->sym;
        if (c->final) {
            const char *nm = x->sym;
            if (nm[0] == '\001') {
                char buf[64];
                snprintf(buf, sizeof buf, "%s", nm + 1);
                char *h = strchr(buf, '#');
                long k = h ? atol(h + 1) : 0;
                if (h) *h = 0;
                if (k < 0)
                    ERR(&l, "undefined local label %sb: no earlier '%s:'", buf, buf);
                else
                    ERR(&l, "undefined local label %sf: no later '%s:'", buf, buf);
            } else {
                ERR(&l, "undefined symbol '%s'", nm);
            }
            return -1;
        }
        return 1;
    }
    if (s->kind == SY_LABEL) {
        *out = s->val;
        if (s->val.sec < 0 || s->val.sec == ASM_SEC_TEXT) {
            out->sec = -1;
        } else if (c->final) {
            out->v = (int64_t)(c->base[s->val.sec] + (uint64_t)s->val.v);
            out->sec = -1;
        }
        return 0;
    }
    if (s->lazy) {
        if (s->evaluating) {
            ERR(&l, "symbol '%s' is defined in terms of itself", s->name);
            return -1;
        }
        if (ev->depth > 200) {
            ERR(&l, "symbol definitions nest too deeply at '%s'", s->name);
            return -1;
        }
        s->evaluating = 1;
        ev->depth++;
        int r = eval(ev, s->lazy, out);
        ev->depth--;
        s->evaluating = 0;
        if (r == 0 && (c->final || out->sec < 0)) {
            s->val = *out;
            s->lazy = NULL;
        }
        return r;
    }
    *out = s->val;
    if (c->final && out->sec > 0) {
        out->v = (int64_t)(c->base[out->sec] + (uint64_t)out->v);
        out->sec = -1;
    }
    return 0;
}

static int eval(evalctx *ev, const asm_expr *x, asm_val *out)
{
    asm_ctx *c = ev->c;
    asm_loc l = *ev->loc;
    if (!l.colfixed)
        l.col = x->col;
    out->sec = -1;
    out->v = 0;
    switch (x->kind) {
    case EX_NUM:
        *out = x->val;
        if (c->final && out->sec > 0) {
            out->v = (int64_t)(c->base[out->sec] + (uint64_t)out->v);
            out->sec = -1;
        }
        return 0;
    case EX_SYM:
        return eval_sym(ev, x, out);
    case EX_UN: {
        asm_val a;
        int r = eval(ev, x->a, &a);
        if (r)
            return r;
        if (a.sec >= 0)
            return 1;
        uint64_t u = (uint64_t)a.v;
        out->v = x->op == '-' ? (int64_t)(0 - u) : x->op == '~' ? (int64_t)~u : !a.v;
        return 0;
    }
    case EX_COND: {
        asm_val a;
        int r = eval(ev, x->a, &a);
        if (r)
            return r;
        if (a.sec >= 0)
            return 1;
        return eval(ev, a.v ? x->b : x->c, out);
    }
    default: break;
    }
    asm_val a, b;
    int ra = eval(ev, x->a, &a);
    if (ra < 0)
        return ra;
    int rb = eval(ev, x->b, &b);
    if (rb < 0)
        return rb;
    if (ra || rb)
        return 1;
    if (a.sec >= 0 || b.sec >= 0) {
        /* section-relative values: only +/- an absolute, or the difference
         * of two in the same section, are known before layout */
        if (x->op == '+' && (a.sec < 0 || b.sec < 0)) {
            out->sec = a.sec >= 0 ? a.sec : b.sec;
            out->v = (int64_t)((uint64_t)a.v + (uint64_t)b.v);
            return 0;
        }
        if (x->op == '-' && b.sec < 0) {
            out->sec = a.sec;
            out->v = (int64_t)((uint64_t)a.v - (uint64_t)b.v);
            return 0;
        }
        if (x->op == '-' && a.sec == b.sec) {
            out->v = (int64_t)((uint64_t)a.v - (uint64_t)b.v);
            return 0;
        }
        return 1;
    }
    uint64_t ua = (uint64_t)a.v, ub = (uint64_t)b.v;
    int64_t r = 0;
    switch (x->op) {
    case '+': r = (int64_t)(ua + ub); break;
    case '-': r = (int64_t)(ua - ub); break;
    case '*': r = (int64_t)(ua * ub); break;
    case '/': case '%':
        if (!b.v) {
            ERR(&l, "division by zero");
            return -1;
        }
        if (a.v == INT64_MIN && b.v == -1)
            r = x->op == '/' ? INT64_MIN : 0;
        else
            r = x->op == '/' ? a.v / b.v : a.v % b.v;
        break;
    case OP_SHL: r = ub >= 64 ? 0 : (int64_t)(ua << ub); break;
    case OP_SHR: r = ub >= 64 ? (a.v < 0 ? -1 : 0) : a.v < 0 ? (int64_t)~(~ua >> ub) : (int64_t)(ua >> ub); break;
    case '<': r = a.v < b.v; break;
    case '>': r = a.v > b.v; break;
    case OP_LE: r = a.v <= b.v; break;
    case OP_GE: r = a.v >= b.v; break;
    case OP_EQ: r = a.v == b.v; break;
    case OP_NE: r = a.v != b.v; break;
    case '&': r = (int64_t)(ua & ub); break;
    case '^': r = (int64_t)(ua ^ ub); break;
    case '|': r = (int64_t)(ua | ub); break;
    case OP_LAND: r = a.v && b.v; break;
    case OP_LOR: r = a.v || b.v; break;
    }
    out->v = r;
    return 0;
}

/* Evaluate now; a value that is not known yet is an error naming why. */
static int eval_now(asm_ctx *c, const asm_expr *x, const char *what, int64_t *v)
{
    evalctx ev = {c, &c->cur, NULL, 0};
    asm_val r;
    int st = eval(&ev, x, &r);
    asm_loc l = loc_at(c, x->col);
    if (st < 0)
        return -1;
    if (st > 0 || r.sec >= 0) {
        if (ev.undef && ev.undef[0] != '\001')
            ERR(&l, "%s must be a constant known here, but '%s' is not defined yet", what, ev.undef);
        else if (ev.undef)
            ERR(&l, "%s must be a constant known here, but a forward local label is not", what);
        else
            ERR(&l, "%s must be a constant known here, not a data address (placed at the end)", what);
        return -1;
    }
    *v = r.v;
    return 0;
}

/* Replace references to .set symbols by their current values, so that a
 * deferred expression means what it meant at its statement. */
static asm_expr *bind_sets(asm_ctx *c, asm_expr *x)
{
    if (!x)
        return NULL;
    if (x->kind == EX_SYM) {
        sym *s = sym_find(c, x->sym);
        if (s && s->kind == SY_SET) {
            asm_expr *n = arena_alloc(c, sizeof *n);
            if (!n)
                return x;
            *n = *x;
            n->kind = EX_NUM;
            n->val = s->val;
            return n;
        }
        return x;
    }
    asm_expr *a = bind_sets(c, x->a), *b = bind_sets(c, x->b), *cc = bind_sets(c, x->c);
    if (a == x->a && b == x->b && cc == x->c)
        return x;
    asm_expr *n = arena_alloc(c, sizeof *n);
    if (!n)
        return x;
    *n = *x;
    n->a = a;
    n->b = b;
    n->c = cc;
    return n;
}

/* ---- output buffers ------------------------------------------------------- */

static int emit_word(asm_ctx *c, const isa_insn *in)
{
    if (c->ntext >= ASM_MAX_TEXT) {
        ERR(&c->cur, ".text grows beyond %u instructions", ASM_MAX_TEXT);
        return -1;
    }
    if (c->ntext == c->captext) {
        size_t nc = c->captext ? c->captext * 2 : 256;
        uint64_t *t = npu_realloc(c->text, nc * sizeof *t);
        if (!t) return -1;
        c->text = t;
        uint32_t *tl = npu_realloc(c->text_line, nc * sizeof *tl);
        if (!tl) return -1;
        c->text_line = tl;
        isa_insn *ii = npu_realloc(c->insns, nc * sizeof *ii);
        if (!ii) return -1;
        c->insns = ii;
        asm_loc *lo = npu_realloc(c->insn_loc, nc * sizeof *lo);
        if (!lo) return -1;
        c->insn_loc = lo;
        c->captext = nc;
    }
    c->text[c->ntext] = 0;
    c->text_line[c->ntext] = (uint32_t)c->cur.line;
    c->insns[c->ntext] = *in;
    c->insn_loc[c->ntext] = c->cur;
    c->ntext++;
    return 0;
}

static fixup *add_fix(asm_ctx *c)
{
    if (c->nfix == c->capfix) {
        size_t nc = c->capfix ? c->capfix * 2 : 64;
        fixup *f = npu_realloc(c->fix, nc * sizeof *f);
        if (!f)
            return NULL;
        c->fix = f;
        c->capfix = nc;
    }
    fixup *f = &c->fix[c->nfix++];
    memset(f, 0, sizeof *f);
    return f;
}

/* ---- instructions ------------------------------------------------------------- */

enum { TK_RD, TK_RS1, TK_RS2, TK_RS3, TK_RS4, TK_IMM32, TK_IMM48, TK_IMM16, TK_OFF, TK_LABEL,
       TK_SPIPE, TK_DPIPE, TK_PIPE, TK_FID, TK_SREG, TK_NONE };
static const char *const tk_names[] = {"rd", "rs1", "rs2", "rs3", "rs4", "imm32", "imm48", "imm16",
                                       "off", "label", "spipe", "dpipe", "pipe", "fid", "sreg"};

static int tk_of(const char *s, size_t n)
{
    for (int i = 0; i < TK_NONE; i++)
        if (strlen(tk_names[i]) == n && !strncmp(tk_names[i], s, n))
            return i;
    return TK_NONE;
}

/* The allowed range of an immediate token of row ii. */
static void imm_range(const isa_info *ii, int tk, int64_t *lo, int64_t *hi)
{
    isa_field f = tk == TK_IMM48 ? ISA_FLD_IMM48 : tk == TK_IMM16 ? ISA_FLD_IMM16 : ISA_FLD_IMM32;
    int lsb, w, sg;
    isa_field_info(f, NULL, &lsb, &w, &sg);
    if (sg) {
        *lo = -(int64_t)(1ull << (w - 1));
        *hi = (int64_t)((1ull << (w - 1)) - 1);
    } else {
        *lo = 0;
        *hi = (int64_t)((1ull << w) - 1);
    }
    if (ii->flags & ISA_F_SHAMT) {
        *lo = 0;
        *hi = 63;
    }
}

/* Check and place an immediate value; 0 ok. */
static int place_imm(asm_ctx *c, isa_insn *in, int tk, int64_t v, uint64_t pc, const asm_loc *l)
{
    const isa_info *ii = isa_info_of(in->op);
    if (tk == TK_LABEL) {
        int64_t off = (int64_t)((uint64_t)v - pc);
        int64_t lo, hi;
        imm_range(ii, TK_IMM32, &lo, &hi);
        if (v & 7) {
            ERR(l, "branch target 0x%llx is not an instruction address (a multiple of 8)",
                (unsigned long long)v);
            return -1;
        }
        if (off < lo || off > hi) {
            ERR(l, "branch target 0x%llx is out of reach: offset %lld outside %lld..%lld",
                (unsigned long long)v, (long long)off, (long long)lo, (long long)hi);
            return -1;
        }
        in->imm = off;
        return 0;
    }
    int64_t lo, hi;
    imm_range(ii, tk, &lo, &hi);
    if (v < lo || v > hi) {
        if (in->op == ISA_OP_LI)
            ERR(l, "immediate %lld (0x%llx) out of range %lld..%lld; use li64 for a 64-bit constant",
                (long long)v, (unsigned long long)v, (long long)lo, (long long)hi);
        else
            ERR(l, "immediate %lld out of range %lld..%lld", (long long)v, (long long)lo, (long long)hi);
        return -1;
    }
    in->imm = v;
    return 0;
}

static void list_dtypes(uint32_t mask, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = 0;
    for (int i = 0; i < ISA_DT_COUNT && n < len; i++)
        if (mask & (1u << i))
            n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? " " : "", isa_dtype_suffix(i));
}

static void list_mods(isa_modclass mc, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = 0;
    for (int i = 0; n < len; i++) {
        const char *t = isa_mod_token(mc, i, NULL, NULL, NULL);
        if (!t)
            break;
        n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? " " : "", t);
    }
}

/* Parse a register name at *pp. */
static int parse_reg(asm_ctx *c, const char *start, int col0, const char **pp, const char *what)
{
    const char *p = skipws(*pp);
    const char *q = p;
    while (is_id((unsigned char)*q) && *q != '.')
        q++;
    char nm[32];
    size_t n = (size_t)(q - p);
    asm_loc l = loc_at(c, col0 + (int)(p - start));
    if (!n || n >= sizeof nm) {
        if (!*p)
            ERR(&l, "expected a register for %s, found the end of the operands", what);
        else
            ERR(&l, "expected a register for %s (x0..x31 or an ABI name), found '%.*s'", what,
                (int)(strcspn(p, ", ()") ? strcspn(p, ", ()") : 1), p);
        return -1;
    }
    memcpy(nm, p, n);
    nm[n] = 0;
    int r = isa_reg_from_name(nm);
    if (r < 0) {
        ERR(&l, "expected a register for %s (x0..x31 or an ABI name), found '%s'", what, nm);
        return -1;
    }
    *pp = q;
    return r;
}

static int parse_pipe_tok(asm_ctx *c, const char *start, int col0, const char **pp, int allow_all)
{
    const char *p = skipws(*pp);
    const char *q = p;
    while (isalnum((unsigned char)*q))
        q++;
    char nm[16];
    size_t n = (size_t)(q - p);
    asm_loc l = loc_at(c, col0 + (int)(p - start));
    int v = -1;
    if (n && n < sizeof nm) {
        memcpy(nm, p, n);
        nm[n] = 0;
        v = isa_pipe_from_name(nm);
    }
    if (v < 0 || (!allow_all && v == ISA_PIPE_ALL)) {
        ERR(&l, "expected a pipe (S V M MTE1 MTE2 MTE3 FIX%s), found '%.*s'", allow_all ? " ALL" : "",
            (int)(n ? n : strcspn(p, ",")), p);
        return -1;
    }
    *pp = q;
    return v;
}

/* Suffixes after the base mnemonic: dtypes and modifier tokens. */
static int parse_suffixes(asm_ctx *c, isa_insn *in, const isa_info *ii, char **sfx, int *sfxcol, int nsfx)
{
    const char *spec = isa_fmt_suffixes(ii->fmt);
    int ndt_want = 0, want_mod = strchr(spec, 'm') != NULL;
    for (const char *p = spec; *p; p++)
        ndt_want += *p == 'd';
    int ndt = 0, modmask = 0, bad = 0;
    int dts[2] = {0, 0};
    char dl[256], ml[256];
    list_mods(ii->modclass, ml, sizeof ml);
    for (int i = 0; i < nsfx; i++) {
        asm_loc l = loc_at(c, sfxcol[i]);
        int dt = isa_dtype_from_suffix(sfx[i]);
        int v, m;
        if (dt >= 0) {
            if (ndt >= ndt_want) {
                if (!ndt_want)
                    ERR(&l, "%s takes no dtype suffix (found .%s)", ii->mnemonic, sfx[i]);
                else
                    ERR(&l, "%s takes %d dtype suffix%s, found another: .%s", ii->mnemonic, ndt_want,
                        ndt_want > 1 ? "es" : "", sfx[i]);
                bad = 1;
                continue;
            }
            uint32_t legal = ndt == 0 ? ii->dtypes : ii->dtypes2;
            if (!(legal & (1u << dt))) {
                list_dtypes(legal, dl, sizeof dl);
                ERR(&l, "dtype .%s is not legal for %s%s (legal: %s)", sfx[i], ii->mnemonic,
                    ndt_want > 1 ? (ndt == 0 ? " as source" : " as destination") : "", dl);
                bad = 1;
            }
            dts[ndt++] = dt;
        } else if (want_mod && isa_mod_lookup(ii->modclass, sfx[i], &v, &m) == 0) {
            if (modmask & m) {
                ERR(&l, "modifier .%s conflicts with an earlier modifier of %s", sfx[i], ii->mnemonic);
                bad = 1;
            }
            modmask |= m;
            in->mod = (uint8_t)((in->mod & ~m) | v);
        } else {
            list_dtypes(ii->dtypes, dl, sizeof dl);
            if (want_mod && ndt_want)
                ERR(&l, "unknown suffix .%s for %s (dtypes: %s; modifiers: %s)", sfx[i], ii->mnemonic, dl, ml);
            else if (want_mod)
                ERR(&l, "unknown suffix .%s for %s (modifiers: %s)", sfx[i], ii->mnemonic, ml);
            else if (ndt_want)
                ERR(&l, "bad dtype suffix .%s for %s (legal: %s)", sfx[i], ii->mnemonic, dl);
            else
                ERR(&l, "%s takes no suffixes (found .%s)", ii->mnemonic, sfx[i]);
            bad = 1;
        }
    }
    if (bad)
        return -1;
    if (ndt < ndt_want) {
        if (ndt == 0 && (ii->flags & ISA_F_DTOPT)) {
            dts[0] = ISA_DT_U8;
        } else {
            asm_loc l = loc_at(c, c->cur.col);
            list_dtypes(ndt == 0 ? ii->dtypes : ii->dtypes2, dl, sizeof dl);
            if (ndt_want == 2)
                ERR(&l, "%s needs two dtype suffixes, source then destination (next one of: %s)",
                    ii->mnemonic, dl);
            else
                ERR(&l, "%s needs a dtype suffix (one of: %s)", ii->mnemonic, dl);
            return -1;
        }
    }
    in->dt = (uint8_t)dts[0];
    in->dt2 = (uint8_t)dts[1];
    return 0;
}

/* Assemble one real instruction: ops is the operand text, opscol its column. */
static void do_insn(asm_ctx *c, isa_op op, char **sfx, int *sfxcol, int nsfx, const char *stmt,
                    int col0, const char *ops)
{
    const isa_info *ii = isa_info_of(op);
    isa_insn in;
    memset(&in, 0, sizeof in);
    in.op = op;
    int ok = parse_suffixes(c, &in, ii, sfx, sfxcol, nsfx) == 0;
    asm_expr *immx = NULL;
    int immtk = TK_NONE;
    const char *syn = isa_fmt_syntax(ii->fmt);
    const char *p = ops;
    uint64_t pc = c->ntext * 8;
    while (ok && *syn) {
        if (*syn == ' ') {
            syn++;
            continue;
        }
        if (*syn == ',' || *syn == '(' || *syn == ')') {
            p = skipws(p);
            if (*p != *syn) {
                asm_loc l = loc_at(c, col0 + (int)(p - stmt));
                if (!*p)
                    ERR(&l, "%s: too few operands, expected '%s'", ii->mnemonic, isa_fmt_syntax(ii->fmt));
                else
                    ERR(&l, "%s: expected '%c' here (operands: %s)", ii->mnemonic, *syn, isa_fmt_syntax(ii->fmt));
                ok = 0;
                break;
            }
            p++;
            syn++;
            continue;
        }
        const char *t = syn;
        while (*syn && *syn != ' ' && *syn != ',' && *syn != '(' && *syn != ')')
            syn++;
        int tk = tk_of(t, (size_t)(syn - t));
        p = skipws(p);
        int r;
        switch (tk) {
        case TK_RD: case TK_RS1: case TK_RS2: case TK_RS3: case TK_RS4:
            r = parse_reg(c, stmt, col0, &p, tk_names[tk]);
            if (r < 0) { ok = 0; break; }
            if (tk == TK_RD) in.rd = (uint8_t)r;
            else if (tk == TK_RS1) in.rs1 = (uint8_t)r;
            else if (tk == TK_RS2) in.rs2 = (uint8_t)r;
            else if (tk == TK_RS3) in.rs3 = (uint8_t)r;
            else in.rs4 = (uint8_t)r;
            break;
        case TK_OFF:
            /* "(rs1)" alone means offset 0 */
            if (*p == '(') {
                const char *q = skipws(p + 1), *q0 = q;
                while (is_id((unsigned char)*q))
                    q++;
                char nm[32];
                size_t n = (size_t)(q - q0);
                if (n && n < sizeof nm) {
                    memcpy(nm, q0, n);
                    nm[n] = 0;
                    if (isa_reg_from_name(nm) >= 0 && *skipws(q) == ')') {
                        in.imm = 0;
                        break;
                    }
                }
            }
            /* fallthrough */
        case TK_IMM32: case TK_IMM48: case TK_IMM16: case TK_LABEL: {
            const char *at = p;
            asm_expr *x = parse_expr(c, stmt, col0, &p);
            if (!x) { ok = 0; break; }
            immx = x;
            immtk = tk;
            (void)at;
            break;
        }
        case TK_SPIPE: case TK_DPIPE: case TK_PIPE:
            r = parse_pipe_tok(c, stmt, col0, &p, tk == TK_PIPE);
            if (r < 0) { ok = 0; break; }
            if (tk == TK_SPIPE) in.spipe = (uint8_t)r;
            else if (tk == TK_DPIPE) in.dpipe = (uint8_t)r;
            else in.pipe = (uint8_t)r;
            break;
        case TK_FID: {
            const char *at = p;
            asm_expr *x = parse_expr(c, stmt, col0, &p);
            int64_t v;
            if (!x || eval_now(c, x, "a flag id", &v)) { ok = 0; break; }
            if (v < 0 || v > 7) {
                asm_loc l = loc_at(c, col0 + (int)(at - stmt));
                ERR(&l, "flag id %lld out of range 0..7", (long long)v);
                ok = 0;
                break;
            }
            in.fid = (uint8_t)v;
            break;
        }
        case TK_SREG: {
            const char *at = p, *q = p;
            while (is_id((unsigned char)*q))
                q++;
            char nm[32];
            size_t n = (size_t)(q - p);
            int num = -1;
            if (n && n < sizeof nm) {
                memcpy(nm, p, n);
                nm[n] = 0;
                num = isa_sreg_from_name(nm);
            }
            sym *known = n && n < sizeof nm ? sym_find(c, nm) : NULL;
            if (num >= 0) {
                p = q;
            } else if (n && is_id0((unsigned char)*p) && (!known || known->kind == SY_UNDEF)) {
                num = -1;   /* a name that is neither a special register nor a constant */
            } else {
                asm_expr *x = parse_expr(c, stmt, col0, &p);
                int64_t v;
                if (!x || eval_now(c, x, "a special register number", &v)) { ok = 0; break; }
                num = (v >= 0 && v < 4096 && isa_sreg_name((int)v)) ? (int)v : -1;
            }
            asm_loc l = loc_at(c, col0 + (int)(at - stmt));
            if (num < 0) {
                ERR(&l, "expected a special register (coreid corenum cycle args nargs pmuctl pmusel0..3 pmucnt0..3), found '%.*s'",
                    (int)strcspn(at, ","), at);
                ok = 0;
                break;
            }
            if (op == ISA_OP_MTSR && !isa_sreg_writable(num)) {
                ERR(&l, "special register %s is read-only (mtsr writes pmuctl and pmusel0..3)", isa_sreg_name(num));
                ok = 0;
                break;
            }
            in.sreg = (uint16_t)num;
            break;
        }
        default:
            ok = 0;
            break;
        }
    }
    if (ok) {
        p = skipws(p);
        if (*p) {
            asm_loc l = loc_at(c, col0 + (int)(p - stmt));
            if (*p == ',')
                ERR(&l, "%s: too many operands, expected '%s'", ii->mnemonic, isa_fmt_syntax(ii->fmt));
            else
                ERR(&l, "%s: unexpected '%s' after the operands '%s'", ii->mnemonic, p, isa_fmt_syntax(ii->fmt));
            ok = 0;
        }
    }
    if (ok && (in.op == ISA_OP_SETF || in.op == ISA_OP_WAITF) && in.spipe == in.dpipe) {
        asm_loc l = loc_at(c, col0 + (int)(skipws(ops) - stmt));
        ERR(&l, "%s: the two pipes of a flag must differ", ii->mnemonic);
        ok = 0;
    }
    /* emit even on error, so later addresses stay right */
    size_t idx = c->ntext;
    if (emit_word(c, &in)) {
        c->stop = 1;
        return;
    }
    if (!ok) {
        c->insns[idx].op = ISA_OP_INVALID;
        return;
    }
    if (immx) {
        asm_loc l = loc_at(c, immx->col);
        c->insn_loc[idx] = l;
        evalctx ev = {c, &l, NULL, 0};
        asm_val v;
        int st = eval(&ev, immx, &v);
        if (st < 0) {
            c->insns[idx].op = ISA_OP_INVALID;
        } else if (st == 0 && v.sec < 0) {
            if (place_imm(c, &c->insns[idx], immtk, v.v, pc, &l))
                c->insns[idx].op = ISA_OP_INVALID;
        } else {
            fixup *f = add_fix(c);
            if (!f) { c->stop = 1; return; }
            f->index = idx;
            f->tok = immtk;
            f->pc = pc;
            f->loc = l;
            if (st == 0)
                f->known = v;
            else
                f->e = bind_sets(c, immx);
        }
    }
}

/* ---- data ---------------------------------------------------------------- */

static int data_bytes(asm_ctx *c, const void *p, size_t n)
{
    if (c->sec == ASM_SEC_BSS) {
        if (p) {
            asm_loc l = c->cur;
            ERR(&l, ".bss holds no initialised data (use .zero, or another section)");
            return -1;
        }
        c->bss_size += n;
        return 0;
    }
    npu_buf *b = &c->data[c->sec];
    if (b->len + n > ASM_MAX_SECTION) {
        ERR(&c->cur, "section grows beyond %u bytes", ASM_MAX_SECTION);
        c->stop = 1;
        return -1;
    }
    if (p)
        return npu_buf_append(b, p, n) ? (c->stop = 1, -1) : 0;
    static const uint8_t z[256];
    while (n) {
        size_t k = NPU_MIN(n, sizeof z);
        if (npu_buf_append(b, z, k)) {
            c->stop = 1;
            return -1;
        }
        n -= k;
    }
    return 0;
}

static uint64_t sec_pos(asm_ctx *c)
{
    if (c->sec == ASM_SEC_TEXT) return c->ntext * 8;
    if (c->sec == ASM_SEC_BSS) return c->bss_size;
    return c->data[c->sec].len;
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static int int_fits(int64_t v, int size, int kind)
{
    if (size == 8)
        return 1;
    int64_t lo = -(int64_t)(1ull << (8 * size - 1)), hi = (int64_t)((1ull << (8 * size)) - 1);
    if (kind == 's') hi = (int64_t)((1ull << (8 * size - 1)) - 1);
    if (kind == 'u') lo = 0;
    return v >= lo && v <= hi;
}

static void int_range_msg(asm_ctx *c, const asm_loc *l, int64_t v, int size, int kind)
{
    long long lo = -(long long)(1ull << (8 * size - 1)), hi = (long long)((1ull << (8 * size)) - 1);
    if (kind == 's') hi = (long long)((1ull << (8 * size - 1)) - 1);
    if (kind == 'u') lo = 0;
    ERR(l, "value %lld does not fit in %d byte%s (range %lld..%lld)", (long long)v, size,
        size > 1 ? "s" : "", lo, hi);
}

/* Round a literal into a float dtype, ties to even (isa_fp_store, the
 * same conversion the simulator uses). Returns -1 when a finite value
 * overflows the format (it would become inf, or NaN for e4m3). */
static int fp_literal(int dt, double v, uint8_t *bytes)
{
    isa_fp_store((isa_dtype)dt, bytes, v, ISA_RM_RNE, 0);
    double back = isa_fp_load((isa_dtype)dt, bytes);
    if (isfinite(v) && !isfinite(back))
        return -1;
    if (isinf(v) && !isinf(back))
        return -1;  /* e4m3 has no infinity */
    return 0;
}

typedef struct datadir { const char *name; int size; int kind; int dt; } datadir;
static const datadir datadirs[] = {
    {".byte", 1, 'i', 0}, {".half", 2, 'i', 0}, {".short", 2, 'i', 0}, {".word", 4, 'i', 0},
    {".dword", 8, 'i', 0}, {".quad", 8, 'i', 0},
    {".s8", 1, 's', 0}, {".u8", 1, 'u', 0}, {".s16", 2, 's', 0}, {".u16", 2, 'u', 0},
    {".s32", 4, 's', 0}, {".u32", 4, 'u', 0}, {".s64", 8, 's', 0},
    {".f32", 4, 'f', ISA_DT_F32}, {".float", 4, 'f', ISA_DT_F32}, {".f16", 2, 'f', ISA_DT_F16},
    {".bf16", 2, 'f', ISA_DT_BF16}, {".e4m3", 1, 'f', ISA_DT_E4M3}, {".e5m2", 1, 'f', ISA_DT_E5M2},
};

/* Split s at top-level commas (outside parentheses and quotes). Returns the
 * count; starts[i] points at each piece, lens[i] its length. */
static int split_commas(const char *s, const char **starts, size_t *lens, int max)
{
    int n = 0, depth = 0, q = 0;
    const char *b = s;
    if (!*skipws(s))
        return 0;
    for (const char *p = s;; p++) {
        if (q) {
            if (*p == '\\' && p[1]) { p++; continue; }
            if (*p == q) q = 0;
            if (!*p) break;
            continue;
        }
        if (*p == '"' || *p == '\'') { q = *p; continue; }
        if (*p == '(') depth++;
        if (*p == ')') depth--;
        if ((*p == ',' && depth <= 0) || !*p) {
            if (n < max) {
                starts[n] = b;
                lens[n] = (size_t)(p - b);
            }
            n++;
            b = p + 1;
            if (!*p)
                break;
        }
    }
    return n;
}

static void do_data(asm_ctx *c, const datadir *dd, const char *stmt, int col0, const char *args)
{
    if (c->sec == ASM_SEC_TEXT) {
        ERR(&c->cur, "%s in .text: .text holds instructions only (put data in .rodata or .data)", dd->name);
        return;
    }
    if (c->sec == ASM_SEC_BSS) {
        ERR(&c->cur, "%s in .bss: .bss holds no initialised data (use .zero)", dd->name);
        return;
    }
    const char *p = args;
    for (;;) {
        p = skipws(p);
        asm_loc l = loc_at(c, col0 + (int)(p - stmt));
        if (!*p) {
            ERR(&l, "%s: expected a value", dd->name);
            return;
        }
        uint8_t bytes[8] = {0};
        if (dd->kind == 'f') {
            /* a floating literal (strtod syntax incl. inf/nan), else an
             * integer expression */
            char *end;
            errno = 0;
            double dv = strtod(p, &end);
            const char *e2 = skipws(end);
            int is_lit = end != p && (*e2 == ',' || !*e2);
            if (!is_lit) {
                const char *q = p;
                asm_expr *x = parse_expr(c, stmt, col0, &q);
                int64_t iv;
                if (!x || eval_now(c, x, "a float data value", &iv))
                    return;
                dv = (double)iv;
                end = (char *)q;
            }
            if (fp_literal(dd->dt, dv, bytes)) {
                ERR(&l, "value %g overflows %s (write inf explicitly where the format has one)", dv,
                    dd->name + 1);
                memset(bytes, 0, sizeof bytes);
            }
            data_bytes(c, bytes, (size_t)dd->size);
            p = end;
        } else {
            asm_expr *x = parse_expr(c, stmt, col0, &p);
            if (!x)
                return;
            evalctx ev = {c, &l, NULL, 0};
            asm_val v;
            int st = eval(&ev, x, &v);
            if (st < 0)
                return;
            if (st == 0 && v.sec < 0) {
                if (!int_fits(v.v, dd->size, dd->kind))
                    int_range_msg(c, &l, v.v, dd->size, dd->kind);
                put_le(bytes, (uint64_t)v.v, dd->size);
            } else {
                fixup *f = add_fix(c);
                if (!f) { c->stop = 1; return; }
                f->is_data = 1;
                f->sec = c->sec;
                f->index = c->data[c->sec].len;
                f->size = dd->size;
                f->kind = dd->kind;
                f->loc = l;
                if (st == 0)
                    f->known = v;
                else
                    f->e = bind_sets(c, x);
            }
            data_bytes(c, bytes, (size_t)dd->size);
        }
        p = skipws(p);
        if (!*p)
            return;
        if (*p != ',') {
            asm_loc l2 = loc_at(c, col0 + (int)(p - stmt));
            ERR(&l2, "%s: expected ',' between values, found '%c'", dd->name, *p);
            return;
        }
        p++;
    }
}

/* Parse a "string" with C escapes into buf; returns its length or -1. */
static long parse_string(asm_ctx *c, const char *stmt, int col0, const char **pp, char *buf, size_t cap)
{
    const char *p = skipws(*pp);
    asm_loc l = loc_at(c, col0 + (int)(p - stmt));
    if (*p != '"') {
        ERR(&l, "expected a string in double quotes");
        return -1;
    }
    p++;
    size_t n = 0;
    while (*p && *p != '"') {
        int ch = (unsigned char)*p++;
        if (ch == '\\') {
            switch (*p) {
            case 'n': ch = '\n'; p++; break;
            case 't': ch = '\t'; p++; break;
            case 'r': ch = '\r'; p++; break;
            case '0': ch = 0; p++; break;
            case '\\': ch = '\\'; p++; break;
            case '"': ch = '"'; p++; break;
            case 'x': {
                p++;
                int v = 0, k = 0;
                while (k < 2 && isxdigit((unsigned char)*p)) {
                    v = v * 16 + (isdigit((unsigned char)*p) ? *p - '0' : (tolower((unsigned char)*p) - 'a' + 10));
                    p++;
                    k++;
                }
                if (!k) {
                    asm_loc l2 = loc_at(c, col0 + (int)(p - stmt));
                    ERR(&l2, "\\x needs hex digits");
                    return -1;
                }
                ch = v;
                break;
            }
            default: {
                asm_loc l2 = loc_at(c, col0 + (int)(p - stmt));
                ERR(&l2, "unknown escape '\\%c' in string", *p ? *p : ' ');
                return -1;
            }
            }
        }
        if (n + 1 < cap)
            buf[n++] = (char)ch;
    }
    if (*p != '"') {
        ERR(&l, "unterminated string");
        return -1;
    }
    *pp = p + 1;
    buf[n] = 0;
    return (long)n;
}

/* ---- input frames --------------------------------------------------------- */

static int split_lines(asm_ctx *c, const char *text, size_t len, const char *file, line **out, size_t *n)
{
    size_t cap = 16, k = 0;
    line *ls = npu_malloc(cap * sizeof *ls);
    if (!ls)
        return -1;
    size_t i = 0;
    int lineno = 1;
    while (i < len) {
        size_t j = i;
        while (j < len && text[j] != '\n')
            j++;
        size_t e = j;
        if (e > i && text[e - 1] == '\r')
            e--;
        if (k == cap) {
            cap *= 2;
            line *nl = npu_realloc(ls, cap * sizeof *ls);
            if (!nl) {
                npu_free(ls);
                return -1;
            }
            ls = nl;
        }
        char *t = arena_strndup(c, text + i, e - i);
        if (!t) {
            npu_free(ls);
            return -1;
        }
        /* a NUL inside a line ends it for the parser; say so rather than
         * silently dropping the rest */
        ls[k].text = t;
        ls[k].file = file;
        ls[k].lineno = lineno++;
        k++;
        i = j + 1;
    }
    *out = ls;
    *n = k;
    return 0;
}

static frame *push_frame(asm_ctx *c, int kind)
{
    if (c->nframes >= ASM_MAX_DEPTH) {
        ERR(&c->cur, "expansion nested deeper than %d levels (runaway macro recursion or .include?)", ASM_MAX_DEPTH);
        return NULL;
    }
    frame *f = &c->frames[c->nframes++];
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->cond_base = c->nconds;
    if (c->nframes > 1) {
        frame *up = &c->frames[c->nframes - 2];
        f->macro = up->macro;
        f->call_file = up->call_file;
        f->call_line = up->call_line;
    }
    return f;
}

static void pop_frame(asm_ctx *c)
{
    frame *f = &c->frames[c->nframes - 1];
    if (f->kind == FR_FILE || f->kind == FR_MACRO)
        npu_free(f->lines);
    /* FR_REPT lines are owned by the arena too (copied pointers) */
    if (f->kind == FR_REPT)
        npu_free(f->lines);
    c->nframes--;
}

/* Next raw line of the innermost frame (only_top: do not leave it). */
static const line *next_line(asm_ctx *c, int only_top)
{
    while (c->nframes) {
        frame *f = &c->frames[c->nframes - 1];
        if (f->pos < f->n) {
            if (++c->total_lines > ASM_MAX_LINES) {
                if (c->total_lines == ASM_MAX_LINES + 1)
                    ERR(&c->cur, "more than %d lines after expansion: runaway .rept or macro?", ASM_MAX_LINES);
                c->stop = 1;
                return NULL;
            }
            return &f->lines[f->pos++];
        }
        if (f->kind == FR_REPT && f->reps_left > 0) {
            f->reps_left--;
            f->pos = 0;
            continue;
        }
        if (only_top)
            return NULL;
        if (f->kind == FR_FILE) {
            while (c->nconds > f->cond_base) {
                cond *cd = &c->conds[--c->nconds];
                ERR(&cd->loc, "unterminated .if: no .endif before the end of %s", f->path);
            }
        }
        pop_frame(c);
    }
    return NULL;
}

static void set_cur(asm_ctx *c, const line *ln)
{
    frame *f = c->nframes ? &c->frames[c->nframes - 1] : NULL;
    c->cur.file = ln->file;
    c->cur.line = ln->lineno;
    c->cur.col = 1;
    c->cur.src = ln->text;
    c->cur.macro = f ? f->macro : NULL;
    c->cur.call_file = f ? f->call_file : NULL;
    c->cur.call_line = f ? f->call_line : 0;
}

static int push_text(asm_ctx *c, const char *text, size_t len, const char *name)
{
    line *ls;
    size_t n;
    if (split_lines(c, text, len, name, &ls, &n)) {
        c->stop = 1;
        return -1;
    }
    frame *f = push_frame(c, FR_FILE);
    if (!f) {
        npu_free(ls);
        return -1;
    }
    f->lines = ls;
    f->n = n;
    f->path = name;
    f->macro = NULL;
    f->call_file = NULL;
    f->call_line = 0;
    return 0;
}

/* ---- statements --------------------------------------------------------- */

/* The first word of a statement (lowercase-insensitive directives are not
 * supported: directives and mnemonics are lowercase). */
static size_t word_len(const char *p)
{
    size_t n = 0;
    while (is_id((unsigned char)p[n]))
        n++;
    return n;
}

static int cond_active(asm_ctx *c) { return c->nconds == 0 || c->conds[c->nconds - 1].active; }

static cond *push_cond(asm_ctx *c)
{
    if (c->nconds == c->capconds) {
        size_t nc = c->capconds ? c->capconds * 2 : 16;
        cond *n = npu_realloc(c->conds, nc * sizeof *n);
        if (!n) {
            c->stop = 1;
            return NULL;
        }
        c->conds = n;
        c->capconds = nc;
    }
    cond *cd = &c->conds[c->nconds++];
    memset(cd, 0, sizeof *cd);
    cd->parent_active = c->nconds == 1 || c->conds[c->nconds - 2].active;
    cd->loc = c->cur;
    return cd;
}

static int is_word(const char *p, size_t n, const char *w) { return strlen(w) == n && !strncmp(p, w, n); }

static void define_label(asm_ctx *c, const char *name, int col)
{
    asm_loc l = loc_at(c, col);
    if (c->sec == ASM_SEC_TEXT && 0) {}
    sym *s = sym_get(c, name);
    if (!s) { c->stop = 1; return; }
    if (s->kind != SY_UNDEF) {
        ERR(&l, "duplicate label '%s' (first defined at %s:%d)", name[0] == '\001' ? name + 1 : name,
            s->def.file ? s->def.file : "?", s->def.line);
        return;
    }
    s->kind = SY_LABEL;
    s->val.sec = c->sec;
    s->val.v = (int64_t)sec_pos(c);
    s->def = l;
    s->emit = name[0] != '\001';
}

/* A .macro definition: collect the body up to the matching .endm. */
static void do_macro_def(asm_ctx *c, const char *stmt, int col0, const char *args)
{
    asm_loc at = c->cur;
    const char *p = skipws(args);
    size_t n = word_len(p);
    if (!n || !is_id0((unsigned char)*p)) {
        asm_loc l = loc_at(c, col0 + (int)(p - stmt));
        ERR(&l, ".macro: expected a macro name");
    }
    macro *m = arena_alloc(c, sizeof *m);
    if (!m) { c->stop = 1; return; }
    m->name = arena_strndup(c, p, n);
    m->def = at;
    p += n;
    const char *starts[64];
    size_t lens[64];
    int np = split_commas(p, starts, lens, 64);
    if (np > 64) {
        ERR(&at, ".macro %s: more than 64 parameters", m->name);
        np = 64;
    }
    m->params = arena_alloc(c, sizeof(char *) * (size_t)(np ? np : 1));
    m->defaults = arena_alloc(c, sizeof(char *) * (size_t)(np ? np : 1));
    int bad = 0;
    for (int i = 0; i < np && m->params; i++) {
        const char *s = skipws(starts[i]);
        size_t k = word_len(s);
        const char *eq = s + k;
        eq = skipws(eq);
        if (!k || !is_id0((unsigned char)*s) || (*eq && *eq != '=' && eq < starts[i] + lens[i])) {
            asm_loc l = loc_at(c, col0 + (int)(s - stmt));
            ERR(&l, ".macro %s: bad parameter '%.*s' (expected NAME or NAME=default)", m->name, (int)lens[i], starts[i]);
            bad = 1;
            continue;
        }
        m->params[m->nparams] = arena_strndup(c, s, k);
        if (*eq == '=' && eq < starts[i] + lens[i]) {
            const char *dv = skipws(eq + 1);
            size_t dl = (size_t)(starts[i] + lens[i] - dv);
            while (dl && (dv[dl - 1] == ' ' || dv[dl - 1] == '\t'))
                dl--;
            m->defaults[m->nparams] = arena_strndup(c, dv, dl);
        }
        m->nparams++;
    }
    /* body */
    size_t cap = 16, nb = 0;
    line *body = arena_alloc(c, cap * sizeof *body);
    int depth = 1;
    const line *ln;
    while ((ln = next_line(c, 1)) != NULL) {
        const char *q = skipws(ln->text);
        size_t k = word_len(q);
        if (is_word(q, k, ".macro"))
            depth++;
        else if (is_word(q, k, ".endm") && --depth == 0)
            break;
        if (nb == cap) {
            line *nbd = arena_alloc(c, cap * 2 * sizeof *nbd);
            if (!nbd) { c->stop = 1; return; }
            memcpy(nbd, body, nb * sizeof *nbd);
            body = nbd;
            cap *= 2;
        }
        body[nb++] = *ln;
    }
    if (!ln) {
        if (!c->stop)
            ERR(&at, "unterminated .macro %s: no .endm before the end of the file", m->name);
        return;
    }
    if (bad)
        return;
    for (macro *o = c->macros; o; o = o->next)
        if (!strcmp(o->name, m->name)) {
            ERR(&at, "macro '%s' is already defined (at %s:%d)", m->name, o->def.file, o->def.line);
            return;
        }
    if (isa_op_from_mnemonic(m->name) != ISA_OP_INVALID) {
        ERR(&at, "macro '%s' would hide the instruction of that name", m->name);
        return;
    }
    m->body = body;
    m->nbody = nb;
    m->next = c->macros;
    c->macros = m;
}

static macro *find_macro(asm_ctx *c, const char *name, size_t n)
{
    for (macro *m = c->macros; m; m = m->next)
        if (strlen(m->name) == n && !strncmp(m->name, name, n))
            return m;
    return NULL;
}

/* Expand a macro call: substitute \param, \@ and \() in each body line. */
static void do_macro_call(asm_ctx *c, macro *m, const char *stmt, int col0, const char *args)
{
    const char *starts[64];
    size_t lens[64];
    int na = split_commas(args, starts, lens, 64);
    const char *val[64] = {0};
    size_t vlen[64] = {0};
    int set[64] = {0};
    if (na > 64) {
        ERR(&c->cur, "macro %s: more than 64 arguments", m->name);
        return;
    }
    int positional = 0;
    for (int i = 0; i < na; i++) {
        const char *s = skipws(starts[i]);
        size_t L = (size_t)(starts[i] + lens[i] - s);
        while (L && (s[L - 1] == ' ' || s[L - 1] == '\t'))
            L--;
        size_t k = word_len(s);
        const char *eq = skipws(s + k);
        int idx = -1;
        if (k && *eq == '=' && eq[1] != '=' && eq < s + L) {
            for (size_t j = 0; j < m->nparams; j++)
                if (strlen(m->params[j]) == k && !strncmp(m->params[j], s, k))
                    idx = (int)j;
            if (idx < 0) {
                asm_loc l = loc_at(c, col0 + (int)(s - stmt));
                ERR(&l, "macro %s has no parameter '%.*s'", m->name, (int)k, s);
                return;
            }
            const char *v = skipws(eq + 1);
            val[idx] = v;
            vlen[idx] = (size_t)(s + L - v);
        } else {
            if (positional >= (int)m->nparams) {
                asm_loc l = loc_at(c, col0 + (int)(s - stmt));
                ERR(&l, "macro %s takes %zu argument%s, found more", m->name, m->nparams,
                    m->nparams == 1 ? "" : "s");
                return;
            }
            idx = positional++;
            val[idx] = s;
            vlen[idx] = L;
        }
        if (set[idx]) {
            asm_loc l = loc_at(c, col0 + (int)(s - stmt));
            ERR(&l, "macro %s: argument '%s' given twice", m->name, m->params[idx]);
            return;
        }
        set[idx] = 1;
    }
    for (size_t j = 0; j < m->nparams; j++)
        if (!set[j] || (vlen[j] == 0 && m->defaults[j])) {
            if (m->defaults[j]) {
                val[j] = m->defaults[j];
                vlen[j] = strlen(m->defaults[j]);
            } else if (!set[j]) {
                ERR(&c->cur, "macro %s: missing argument '%s'", m->name, m->params[j]);
                return;
            }
        }
    long id = c->macro_counter++;
    line *ls = npu_malloc((m->nbody ? m->nbody : 1) * sizeof *ls);
    if (!ls) { c->stop = 1; return; }
    npu_buf b = {0};
    for (size_t i = 0; i < m->nbody; i++) {
        b.len = 0;
        for (const char *p = m->body[i].text; *p; p++) {
            if (*p == '\\' && p[1] == '@') {
                npu_buf_printf(&b, "%ld", id);
                p++;
            } else if (*p == '\\' && p[1] == '(' && p[2] == ')') {
                p += 2;
            } else if (*p == '\\' && is_id0((unsigned char)p[1])) {
                size_t k = word_len(p + 1);
                int hit = -1;
                /* longest parameter name that matches */
                for (size_t j = 0; j < m->nparams; j++) {
                    size_t pl = strlen(m->params[j]);
                    if (pl <= k && !strncmp(m->params[j], p + 1, pl) && pl == k)
                        hit = (int)j;
                }
                if (hit >= 0) {
                    npu_buf_append(&b, val[hit], vlen[hit]);
                    p += k;
                } else {
                    npu_buf_append(&b, p, 1);
                }
            } else {
                npu_buf_append(&b, p, 1);
            }
        }
        ls[i].text = arena_strndup(c, b.len ? (const char *)b.data : "", b.len);
        ls[i].file = m->body[i].file;
        ls[i].lineno = m->body[i].lineno;
        if (!ls[i].text || b.oom) {
            npu_buf_free(&b);
            npu_free(ls);
            c->stop = 1;
            return;
        }
    }
    npu_buf_free(&b);
    asm_loc call = c->cur;
    frame *f = push_frame(c, FR_MACRO);
    if (!f) {
        npu_free(ls);
        c->stop = 1;
        return;
    }
    f->lines = ls;
    f->n = m->nbody;
    f->macro = m->name;
    f->call_file = call.file;
    f->call_line = call.line;
}

static void do_rept(asm_ctx *c, const char *stmt, int col0, const char *args)
{
    asm_loc at = c->cur;
    const char *p = args;
    int64_t n = 0;
    int ok = 1;
    asm_expr *x = parse_expr(c, stmt, col0, &p);
    if (!x || eval_now(c, x, ".rept count", &n))
        ok = 0;
    else if (n < 0 || n > ASM_MAX_REPT) {
        asm_loc l = loc_at(c, x->col);
        ERR(&l, ".rept count %lld out of range 0..%d", (long long)n, ASM_MAX_REPT);
        ok = 0;
    }
    size_t cap = 16, nb = 0;
    line *body = npu_malloc(cap * sizeof *body);
    if (!body) { c->stop = 1; return; }
    int depth = 1;
    const line *ln;
    while ((ln = next_line(c, 1)) != NULL) {
        const char *q = skipws(ln->text);
        size_t k = word_len(q);
        if (is_word(q, k, ".rept"))
            depth++;
        else if (is_word(q, k, ".endr") && --depth == 0)
            break;
        if (nb == cap) {
            line *nl = npu_realloc(body, cap * 2 * sizeof *nl);
            if (!nl) { npu_free(body); c->stop = 1; return; }
            body = nl;
            cap *= 2;
        }
        body[nb++] = *ln;
    }
    if (!ln) {
        npu_free(body);
        if (!c->stop)
            ERR(&at, "unterminated .rept: no .endr before the end of the file");
        return;
    }
    if (!ok || n == 0 || nb == 0) {
        npu_free(body);
        return;
    }
    frame *f = push_frame(c, FR_REPT);
    if (!f) {
        npu_free(body);
        c->stop = 1;
        return;
    }
    f->lines = body;
    f->n = nb;
    f->reps_left = (long)n - 1;
}

static char *dirname_of(asm_ctx *c, const char *path)
{
    const char *s = strrchr(path, '/');
    if (!s)
        return arena_strdup(c, ".");
    return arena_strndup(c, path, (size_t)(s - path));
}

static void do_include(asm_ctx *c, const char *stmt, int col0, const char *args)
{
    char name[1024];
    const char *p = args;
    if (parse_string(c, stmt, col0, &p, name, sizeof name) < 0)
        return;
    if (*skipws(p)) {
        asm_loc l = loc_at(c, col0 + (int)(skipws(p) - stmt));
        ERR(&l, ".include: unexpected text after the file name");
        return;
    }
    /* search: the including file's directory, then -I paths in order */
    char path[2048];
    int found = 0;
    const char *cands[130];
    size_t nc = 0;
    if (name[0] == '/') {
        cands[nc++] = "";
    } else {
        cands[nc++] = dirname_of(c, c->cur.file ? c->cur.file : ".");
        for (size_t i = 0; c->opts && i < c->opts->nincdirs && nc < NPU_ARRAY_LEN(cands); i++)
            cands[nc++] = c->opts->incdirs[i];
    }
    uint8_t *data = NULL;
    size_t len = 0;
    for (size_t i = 0; i < nc && !found; i++) {
        if (cands[i][0] && strcmp(cands[i], "."))
            snprintf(path, sizeof path, "%s/%s", cands[i], name);
        else
            snprintf(path, sizeof path, "%s", name);
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        fclose(f);
        npu_diag d2;
        if (npu_read_file(path, 0, 64u << 20, &data, &len, &d2) == NPU_OK)
            found = 1;
    }
    asm_loc l = loc_at(c, col0 + (int)(skipws(args) - stmt));
    if (!found) {
        ERR(&l, ".include \"%s\": file not found (searched the including file's directory%s)", name,
            c->opts && c->opts->nincdirs ? " and the -I paths" : "; add -I DIR");
        /* fatal, as in cpp: what follows would only report the missing
         * file's macros and symbols as unknown, dozens of times */
        c->stop = 1;
        return;
    }
    /* cycle: the same path already on the include stack */
    for (size_t i = 0; i < c->nframes; i++)
        if (c->frames[i].kind == FR_FILE && c->frames[i].path && !strcmp(c->frames[i].path, path)) {
            ERR(&l, ".include cycle: %s includes itself (through the files above it)", path);
            npu_free(data);
            return;
        }
    char *p2 = arena_strdup(c, path);
    if (memchr(data, 0, len))
        ERR(&l, "%s contains a NUL byte: not a text file", path);
    else if (p2)
        push_text(c, (const char *)data, len, p2);
    npu_free(data);
}

static int parse_sym_name(asm_ctx *c, const char *stmt, int col0, const char **pp, char *out, size_t cap, const char *dir)
{
    const char *p = skipws(*pp);
    size_t n = word_len(p);
    if (!n || !is_id0((unsigned char)*p) || n >= cap) {
        asm_loc l = loc_at(c, col0 + (int)(p - stmt));
        ERR(&l, "%s: expected a symbol name", dir);
        return -1;
    }
    memcpy(out, p, n);
    out[n] = 0;
    *pp = p + n;
    return 0;
}

static int expect_comma(asm_ctx *c, const char *stmt, int col0, const char **pp, const char *dir)
{
    const char *p = skipws(*pp);
    if (*p != ',') {
        asm_loc l = loc_at(c, col0 + (int)(p - stmt));
        ERR(&l, "%s: expected ','", dir);
        return -1;
    }
    *pp = p + 1;
    return 0;
}

static int expect_end(asm_ctx *c, const char *stmt, int col0, const char *p, const char *dir)
{
    p = skipws(p);
    if (*p) {
        asm_loc l = loc_at(c, col0 + (int)(p - stmt));
        ERR(&l, "%s: unexpected '%s'", dir, p);
        return -1;
    }
    return 0;
}

static void do_equ(asm_ctx *c, const char *stmt, int col0, const char *args, int is_set, const char *dir)
{
    char name[256];
    const char *p = args;
    if (parse_sym_name(c, stmt, col0, &p, name, sizeof name, dir))
        return;
    const char *np = skipws(args);
    if (expect_comma(c, stmt, col0, &p, dir))
        return;
    asm_expr *x = parse_expr(c, stmt, col0, &p);
    if (!x || expect_end(c, stmt, col0, p, dir))
        return;
    sym *s = sym_get(c, name);
    if (!s) { c->stop = 1; return; }
    asm_loc l = loc_at(c, col0 + (int)(np - stmt));
    if (s->kind == SY_LABEL || s->kind == SY_EQU || (s->kind == SY_SET && !is_set)) {
        if (s->def.file && !strcmp(s->def.file, "<command line>"))
            ERR(&l, "'%s' is already defined by -D on the command line (use .ifndef %s to give a default)",
                name, name);
        else
            ERR(&l, "'%s' is already defined (at %s:%d)%s", name, s->def.file ? s->def.file : "?",
                s->def.line, s->kind == SY_SET ? "; use .set to change it" : "");
        return;
    }
    evalctx ev = {c, &l, NULL, 0};
    asm_val v;
    int st = eval(&ev, x, &v);
    if (st < 0)
        return;
    if (st > 0 && is_set) {
        ERR(&l, ".set %s: the value must be known here ('%s' is not defined yet); .equ may refer ahead",
            name, ev.undef ? ev.undef : "?");
        return;
    }
    s->kind = is_set ? SY_SET : SY_EQU;
    s->def = l;
    if (st == 0)
        s->val = v;
    else
        s->lazy = bind_sets(c, x);
}

static void do_if(asm_ctx *c, const char *stmt, int col0, const char *dir, size_t dl, const char *args)
{
    if (is_word(dir, dl, ".if") || is_word(dir, dl, ".ifdef") || is_word(dir, dl, ".ifndef")) {
        cond *cd = push_cond(c);
        if (!cd)
            return;
        if (!cd->parent_active)
            return;
        int v = 0;
        if (is_word(dir, dl, ".if")) {
            const char *p = args;
            asm_expr *x = parse_expr(c, stmt, col0, &p);
            int64_t iv = 0;
            if (x && !eval_now(c, x, ".if condition", &iv))
                expect_end(c, stmt, col0, p, ".if");
            v = iv != 0;
        } else {
            char name[256];
            const char *p = args;
            if (!parse_sym_name(c, stmt, col0, &p, name, sizeof name, ".ifdef")) {
                sym *s = sym_find(c, name);
                int def = (s && s->kind != SY_UNDEF) || find_macro(c, name, strlen(name));
                v = is_word(dir, dl, ".ifdef") ? def : !def;
            }
        }
        cd->active = v;
        cd->taken = v;
        return;
    }
    if (!c->nconds) {
        ERR(&c->cur, "%.*s without .if", (int)dl, dir);
        return;
    }
    cond *cd = &c->conds[c->nconds - 1];
    if (is_word(dir, dl, ".endif")) {
        c->nconds--;
        return;
    }
    if (cd->seen_else) {
        ERR(&c->cur, "%.*s after .else (the .if is at line %d)", (int)dl, dir, cd->loc.line);
        return;
    }
    if (is_word(dir, dl, ".else")) {
        cd->seen_else = 1;
        cd->active = cd->parent_active && !cd->taken;
        cd->taken = 1;
        return;
    }
    /* .elif */
    if (!cd->parent_active || cd->taken) {
        cd->active = 0;
        return;
    }
    const char *p = args;
    asm_expr *x = parse_expr(c, stmt, col0, &p);
    int64_t iv = 0;
    if (x && !eval_now(c, x, ".elif condition", &iv))
        expect_end(c, stmt, col0, p, ".elif");
    cd->active = iv != 0;
    cd->taken = cd->active;
}

/* Pseudo-instruction table. */
typedef struct pseudo { const char *name, *operands, *expansion, *doc; } pseudo;
static const pseudo pseudos[] = {
#define PSEUDO(name, ops, exp, doc) {#name, ops, exp, doc},
#include "frontend/asm_pseudo.def"
#undef PSEUDO
};

static void do_statement(asm_ctx *c, char *stmt, int col0);

static void do_pseudo(asm_ctx *c, const pseudo *ps, const char *stmt, int col0, const char *args, int nsfx, int sfxcol)
{
    if (nsfx) {
        asm_loc l = loc_at(c, sfxcol);
        ERR(&l, "%s takes no suffixes", ps->name);
        return;
    }
    const char *pn[8], *av[8];
    size_t pl[8], al[8];
    int np = split_commas(ps->operands, pn, pl, 8);
    int na = split_commas(args, av, al, 8);
    if (na != np) {
        asm_loc l = loc_at(c, col0 + (int)(args - stmt));
        ERR(&l, "%s: expected %d operand%s '%s', found %d", ps->name, np, np == 1 ? "" : "s", ps->operands, na);
        return;
    }
    npu_buf b = {0};
    /* map[i]: the source column of expansion byte i (an operand's own
     * column for substituted text, the mnemonic's for the template) */
    size_t cap = 256, n = 0;
    int *map = npu_malloc(cap * sizeof *map);
    int col = c->cur.col;
    if (!map) {
        c->stop = 1;
        return;
    }
#define PUT(ptr, len, srccol_expr)                                            \
    do {                                                                       \
        npu_buf_append(&b, (ptr), (len));                                      \
        for (size_t q_ = 0; q_ < (len); q_++) {                                \
            if (n == cap) {                                                    \
                int *nm_ = npu_realloc(map, cap * 2 * sizeof *nm_);            \
                if (!nm_) { b.oom = 1; break; }                                \
                map = nm_;                                                     \
                cap *= 2;                                                      \
            }                                                                  \
            map[n++] = (srccol_expr);                                          \
        }                                                                      \
    } while (0)
    for (const char *p = ps->expansion; *p;) {
        if (is_id0((unsigned char)*p)) {
            size_t k = word_len(p);
            int hit = -1;
            for (int i = 0; i < np; i++) {
                const char *s = skipws(pn[i]);
                size_t L = word_len(s);
                if (L == k && !strncmp(s, p, k))
                    hit = i;
            }
            if (hit >= 0) {
                const char *s = skipws(av[hit]);
                size_t L = (size_t)(av[hit] + al[hit] - s);
                int c0 = col0 + (int)(s - stmt);
                PUT(s, L, c0 + (int)q_);
            } else {
                PUT(p, k, col);
            }
            p += k;
        } else {
            PUT(p, (size_t)1, col);
            p++;
        }
    }
#undef PUT
    npu_buf_append(&b, "", 1);
    if (b.oom) {
        npu_buf_free(&b);
        npu_free(map);
        c->stop = 1;
        return;
    }
    /* assemble each expansion statement; columns map back to the source */
    char *s = (char *)b.data;
    int saved = c->fixcol;
    const int *saved_map = c->colmap;
    size_t saved_n = c->colmap_n;
    c->fixcol = col;
    c->colmap = map;
    c->colmap_n = n;
    while (s) {
        char *semi = strchr(s, ';');
        if (semi)
            *semi = 0;
        c->cur.col = col;
        do_statement(c, s, 1 + (int)(s - (char *)b.data));
        s = semi ? semi + 1 : NULL;
    }
    c->fixcol = saved;
    c->colmap = saved_map;
    c->colmap_n = saved_n;
    npu_buf_free(&b);
    npu_free(map);
}

static void do_directive(asm_ctx *c, const char *stmt, int col0, const char *dir, size_t dl, const char *args)
{
    static const struct { const char *name; int sec; } secs[] = {
        {".text", ASM_SEC_TEXT}, {".rodata", ASM_SEC_RODATA}, {".data", ASM_SEC_DATA}, {".bss", ASM_SEC_BSS}};
    for (size_t i = 0; i < NPU_ARRAY_LEN(secs); i++)
        if (is_word(dir, dl, secs[i].name)) {
            expect_end(c, stmt, col0, args, secs[i].name);
            c->sec = secs[i].sec;
            return;
        }
    if (is_word(dir, dl, ".section")) {
        const char *p = skipws(args);
        size_t n = word_len(p);
        for (size_t i = 0; i < NPU_ARRAY_LEN(secs); i++)
            if (is_word(p, n, secs[i].name)) {
                c->sec = secs[i].sec;
                return;
            }
        asm_loc l = loc_at(c, col0 + (int)(p - stmt));
        ERR(&l, ".section: unknown section '%.*s' (kernels have .text .rodata .data .bss)", (int)n, p);
        return;
    }
    for (size_t i = 0; i < NPU_ARRAY_LEN(datadirs); i++)
        if (is_word(dir, dl, datadirs[i].name)) {
            do_data(c, &datadirs[i], stmt, col0, args);
            return;
        }
    if (is_word(dir, dl, ".equ") || is_word(dir, dl, ".set")) {
        do_equ(c, stmt, col0, args, dir[1] == 's', dir[1] == 's' ? ".set" : ".equ");
        return;
    }
    if (is_word(dir, dl, ".align") || is_word(dir, dl, ".balign")) {
        const char *p = args;
        asm_expr *x = parse_expr(c, stmt, col0, &p);
        int64_t a;
        if (!x || eval_now(c, x, ".align", &a) || expect_end(c, stmt, col0, p, ".align"))
            return;
        asm_loc l = loc_at(c, x->col);
        if (a < 1 || a > 65536 || (a & (a - 1))) {
            ERR(&l, ".align %lld: expected a power of two in bytes, 1..65536", (long long)a);
            return;
        }
        if (c->sec == ASM_SEC_TEXT) {
            if (a < 8)
                return;
            isa_insn nop = {.op = ISA_OP_NOP};
            while ((c->ntext * 8) % (uint64_t)a)
                if (emit_word(c, &nop)) { c->stop = 1; return; }
            return;
        }
        if ((uint64_t)a > c->align[c->sec])
            c->align[c->sec] = (uint64_t)a;
        uint64_t pos = sec_pos(c), pad = (uint64_t)(-(int64_t)pos) & (uint64_t)(a - 1);
        data_bytes(c, NULL, pad);
        return;
    }
    if (is_word(dir, dl, ".zero") || is_word(dir, dl, ".space") || is_word(dir, dl, ".skip")) {
        const char *p = args;
        asm_expr *x = parse_expr(c, stmt, col0, &p);
        int64_t n;
        if (!x || eval_now(c, x, ".zero size", &n) || expect_end(c, stmt, col0, p, ".zero"))
            return;
        asm_loc l = loc_at(c, x->col);
        if (c->sec == ASM_SEC_TEXT) {
            ERR(&l, ".zero in .text: .text holds instructions only");
            return;
        }
        if (n < 0 || n > (int64_t)ASM_MAX_SECTION) {
            ERR(&l, ".zero %lld: size out of range 0..%u", (long long)n, ASM_MAX_SECTION);
            return;
        }
        data_bytes(c, NULL, (size_t)n);
        return;
    }
    if (is_word(dir, dl, ".ascii") || is_word(dir, dl, ".asciz") || is_word(dir, dl, ".string")) {
        if (c->sec == ASM_SEC_TEXT || c->sec == ASM_SEC_BSS) {
            ERR(&c->cur, "%.*s: strings go in .rodata or .data", (int)dl, dir);
            return;
        }
        const char *p = args;
        for (;;) {
            char buf[4096];
            long n = parse_string(c, stmt, col0, &p, buf, sizeof buf);
            if (n < 0)
                return;
            data_bytes(c, buf, (size_t)n + (dir[dl - 1] == 'z' || dir[1] == 's'));
            p = skipws(p);
            if (!*p)
                return;
            if (expect_comma(c, stmt, col0, &p, ".ascii"))
                return;
        }
    }
    if (is_word(dir, dl, ".globl") || is_word(dir, dl, ".global")) {
        const char *p = args;
        for (;;) {
            char name[256];
            if (parse_sym_name(c, stmt, col0, &p, name, sizeof name, ".globl"))
                return;
            sym *s = sym_get(c, name);
            if (!s) { c->stop = 1; return; }
            if (s->kind == SY_EQU || s->kind == SY_SET) {
                ERR(&c->cur, ".globl %s: only labels can be global (it is a constant)", name);
                return;
            }
            s->global = 1;
            if (!s->def.file)
                s->def = c->cur;
            p = skipws(p);
            if (!*p)
                return;
            if (expect_comma(c, stmt, col0, &p, ".globl"))
                return;
        }
    }
    if (is_word(dir, dl, ".type")) {
        const char *p = args;
        char name[256];
        if (parse_sym_name(c, stmt, col0, &p, name, sizeof name, ".type") ||
            expect_comma(c, stmt, col0, &p, ".type"))
            return;
        p = skipws(p);
        const char *t = p;
        if (*p == '@' || *p == '%')
            p++;
        size_t n = word_len(p);
        int type;
        if (is_word(p, n, "function")) type = ASM_SYM_FUNC;
        else if (is_word(p, n, "object")) type = ASM_SYM_OBJECT;
        else if (is_word(p, n, "notype")) type = ASM_SYM_NOTYPE;
        else {
            asm_loc l = loc_at(c, col0 + (int)(t - stmt));
            ERR(&l, ".type: expected @function, @object or @notype");
            return;
        }
        if (expect_end(c, stmt, col0, p + n, ".type"))
            return;
        sym *s = sym_get(c, name);
        if (!s) { c->stop = 1; return; }
        s->type = type;
        return;
    }
    if (is_word(dir, dl, ".size")) {
        const char *p = args;
        char name[256];
        if (parse_sym_name(c, stmt, col0, &p, name, sizeof name, ".size") ||
            expect_comma(c, stmt, col0, &p, ".size"))
            return;
        asm_expr *x = parse_expr(c, stmt, col0, &p);
        if (!x || expect_end(c, stmt, col0, p, ".size"))
            return;
        sym *s = sym_get(c, name);
        if (!s) { c->stop = 1; return; }
        s->has_size = 1;
        s->size_expr = bind_sets(c, x);
        s->size_loc = loc_at(c, x->col);
        return;
    }
    if (is_word(dir, dl, ".error") || is_word(dir, dl, ".warning")) {
        char buf[1024];
        const char *p = args;
        if (*skipws(p) == '"') {
            if (parse_string(c, stmt, col0, &p, buf, sizeof buf) < 0)
                return;
        } else {
            snprintf(buf, sizeof buf, "%s", dir[1] == 'e' ? ".error" : ".warning");
        }
        add_msg(c, &c->cur, dir[1] == 'w', "%s", buf);
        return;
    }
    if (is_word(dir, dl, ".include")) {
        do_include(c, stmt, col0, args);
        return;
    }
    if (is_word(dir, dl, ".rept")) {
        do_rept(c, stmt, col0, args);
        return;
    }
    if (is_word(dir, dl, ".macro")) {
        do_macro_def(c, stmt, col0, args);
        return;
    }
    if (is_word(dir, dl, ".endm") || is_word(dir, dl, ".endr")) {
        ERR(&c->cur, "%.*s without %s", (int)dl, dir, dir[4] == 'm' ? ".macro" : ".rept");
        return;
    }
    asm_loc l = loc_at(c, col0 + (int)(dir - stmt));
    ERR(&l, "unknown directive '%.*s'", (int)dl, dir);
}

/* One statement (no ';' inside, comment already removed). */
static void do_statement(asm_ctx *c, char *stmt, int col0)
{
    char *p = (char *)skipws(stmt);
    /* labels */
    for (;;) {
        size_t n = 0;
        while (is_id((unsigned char)p[n]))
            n++;
        char *q = (char *)skipws(p + n);
        if (!n || *q != ':')
            break;
        int col = col0 + (int)(p - stmt);
        int all_digits = 1;
        for (size_t i = 0; i < n; i++)
            all_digits &= isdigit((unsigned char)p[i]) != 0;
        if (all_digits) {
            char key[48], nm[64];
            if (n > 20) {
                asm_loc l = loc_at(c, col);
                ERR(&l, "numeric label too long");
                return;
            }
            numeric_name(c, p, n, 1, nm, sizeof nm);
            define_label(c, nm, col);
            snprintf(key, sizeof key, "\001cnt%.*s", (int)n, p);
            sym *cnt = sym_get(c, key);
            if (cnt) {
                cnt->kind = SY_COUNTER;
                cnt->val.v++;
            }
        } else if (is_id0((unsigned char)*p)) {
            char nm[256];
            if (n >= sizeof nm) {
                asm_loc l = loc_at(c, col);
                ERR(&l, "label too long");
                return;
            }
            memcpy(nm, p, n);
            nm[n] = 0;
            define_label(c, nm, col);
        } else {
            asm_loc l = loc_at(c, col);
            ERR(&l, "bad label '%.*s'", (int)n, p);
            return;
        }
        p = (char *)skipws(q + 1);
    }
    if (!*p)
        return;
    int wcol = col0 + (int)(p - stmt);
    size_t wl = word_len(p);
    if (!wl) {
        asm_loc l = loc_at(c, wcol);
        ERR(&l, "expected a label, directive or instruction, found '%c'", *p);
        return;
    }
    char *args = p + wl;
    c->cur.col = wcol;
    /* NAME = expr */
    const char *a2 = skipws(args);
    if (*a2 == '=' && a2[1] != '=' && *p != '.') {
        char buf[512];
        snprintf(buf, sizeof buf, "%.*s, %s", (int)wl, p, a2 + 1);
        /* reuse .set with columns of the original */
        do_equ(c, buf, wcol, buf, 1, "=");
        return;
    }
    if (*p == '.') {
        do_directive(c, stmt, col0, p, wl, args);
        return;
    }
    if (c->sec != ASM_SEC_TEXT && !find_macro(c, p, wl)) {
        asm_loc l = loc_at(c, wcol);
        ERR(&l, "instruction '%.*s' outside .text (the current section holds data)", (int)wl, p);
        return;
    }
    macro *m = find_macro(c, p, wl);
    if (m) {
        do_macro_call(c, m, stmt, col0, args);
        return;
    }
    /* mnemonic and suffixes: the longest dotted prefix that names an
     * instruction or pseudo-instruction is the base */
    char mn[128];
    if (wl >= sizeof mn) {
        asm_loc l = loc_at(c, wcol);
        ERR(&l, "unknown mnemonic '%.*s'", (int)wl, p);
        return;
    }
    memcpy(mn, p, wl);
    mn[wl] = 0;
    size_t cut = wl;
    isa_op op = ISA_OP_INVALID;
    const pseudo *ps = NULL;
    for (;;) {
        char save = mn[cut];
        mn[cut] = 0;
        op = isa_op_from_mnemonic(mn);
        for (size_t i = 0; i < NPU_ARRAY_LEN(pseudos) && op == ISA_OP_INVALID && !ps; i++)
            if (!strcmp(pseudos[i].name, mn))
                ps = &pseudos[i];
        mn[cut] = save;
        if (op != ISA_OP_INVALID || ps)
            break;
        while (cut > 0 && mn[cut - 1] != '.')
            cut--;
        if (cut == 0)
            break;
        cut--;
    }
    if (op == ISA_OP_INVALID && !ps) {
        asm_loc l = loc_at(c, wcol);
        size_t base = strcspn(mn, ".");
        ERR(&l, "unknown mnemonic '%.*s'", (int)(base ? base : wl), mn);
        return;
    }
    char *sfx[16];
    int sfxcol[16], nsfx = 0;
    char sfxbuf[128];
    memcpy(sfxbuf, mn, wl + 1);
    for (size_t i = cut; i < wl && mn[i] == '.';) {
        size_t j = i + 1;
        while (j < wl && mn[j] != '.')
            j++;
        if (nsfx < 16) {
            sfxbuf[j] = 0;
            sfx[nsfx] = sfxbuf + i + 1;
            sfxcol[nsfx] = wcol + (int)i + 1;
            nsfx++;
        }
        i = j;
    }
    for (int i = 0; i < nsfx; i++)
        if (!*sfx[i]) {
            asm_loc l = loc_at(c, sfxcol[i]);
            ERR(&l, "empty suffix after '.'");
            return;
        }
    if (ps) {
        do_pseudo(c, ps, stmt, col0, args, nsfx, nsfx ? sfxcol[0] : 0);
        return;
    }
    do_insn(c, op, sfx, sfxcol, nsfx, stmt, col0, args);
}

/* A whole line: strip the comment, split at ';', run each statement. In a
 * false .if branch only the conditional directives are looked at. */
static void do_line(asm_ctx *c, const line *ln)
{
    set_cur(c, ln);
    size_t L = strlen(ln->text);
    char *buf = npu_malloc(L + 1);
    if (!buf) { c->stop = 1; return; }
    memcpy(buf, ln->text, L + 1);
    /* comments: '#' or '//' outside quotes */
    int q = 0;
    for (char *p = buf; *p; p++) {
        if (q) {
            if (*p == '\\' && p[1]) { p++; continue; }
            if (*p == q) q = 0;
            continue;
        }
        if (*p == '"') { q = '"'; continue; }
        if (*p == '\'' && p[1] && (p[2] == '\'' || (p[1] == '\\' && p[2] && p[3] == '\''))) {
            p += p[1] == '\\' ? 3 : 2;
            continue;
        }
        if (*p == '#' || (*p == '/' && p[1] == '/')) {
            *p = 0;
            break;
        }
    }
    char *s = buf;
    while (s && !c->stop) {
        char *semi = NULL;
        q = 0;
        for (char *p = s; *p; p++) {
            if (q) {
                if (*p == '\\' && p[1]) { p++; continue; }
                if (*p == q) q = 0;
                continue;
            }
            if (*p == '"') q = '"';
            else if (*p == '\'' && p[1] && p[2] == '\'') p += 2;   /* ';' as a character */
            else if (*p == ';') { semi = p; break; }
        }
        if (semi)
            *semi = 0;
        int col0 = (int)(s - buf) + 1;
        const char *w = skipws(s);
        size_t wl = word_len(w);
        int is_cond = is_word(w, wl, ".if") || is_word(w, wl, ".ifdef") || is_word(w, wl, ".ifndef") ||
                      is_word(w, wl, ".elif") || is_word(w, wl, ".else") || is_word(w, wl, ".endif");
        c->cur.col = col0 + (int)(w - s);
        size_t before = c->nframes;
        if (is_cond)
            do_if(c, s, col0, w, wl, w + wl);
        else if (cond_active(c))
            do_statement(c, s, col0);
        else if (is_word(w, wl, ".macro") || is_word(w, wl, ".rept")) {
            /* skip a whole definition in a false branch, so that a .if
             * inside it does not confuse the nesting */
            const char *end = w[1] == 'm' ? ".endm" : ".endr";
            int depth = 1;
            const line *l2;
            while (depth && (l2 = next_line(c, 1)) != NULL) {
                const char *t = skipws(l2->text);
                size_t k = word_len(t);
                if (is_word(t, k, w[1] == 'm' ? ".macro" : ".rept")) depth++;
                else if (is_word(t, k, end)) depth--;
            }
        }
        s = semi ? semi + 1 : NULL;
        if (s && c->nframes > before && c->nframes < ASM_MAX_DEPTH && !c->stop) {
            /* a macro call or .include pushed a frame: the rest of this
             * line runs after it, so slide a one-line frame under it.
             * (Columns of the rest are relative to the rest.) */
            line *one = npu_malloc(sizeof *one);
            if (!one) { c->stop = 1; break; }
            one->text = arena_strdup(c, s);
            one->file = ln->file;
            one->lineno = ln->lineno;
            if (!one->text) { npu_free(one); c->stop = 1; break; }
            frame top = c->frames[c->nframes - 1];
            frame *f = &c->frames[c->nframes - 1];
            memset(f, 0, sizeof *f);
            f->kind = FR_MACRO;
            f->lines = one;
            f->n = 1;
            f->cond_base = top.cond_base;
            f->macro = c->cur.macro;
            f->call_file = c->cur.call_file;
            f->call_line = c->cur.call_line;
            c->frames[c->nframes++] = top;
            break;
        }
    }
    npu_free(buf);
}

/* ---- final pass ------------------------------------------------------------ */

static int sym_cmp(const void *a, const void *b)
{
    const asm_sym *x = a, *y = b;
    if (x->section != y->section)
        return x->section < y->section ? -1 : 1;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    /* functions before labels at the same address */
    if (x->type != y->type)
        return x->type == ASM_SYM_FUNC ? -1 : y->type == ASM_SYM_FUNC ? 1 : 0;
    return strcmp(x->name, y->name);
}

static void finish(asm_ctx *c)
{
    asm_output *o = c->out;
    /* layout of the data sections in GM */
    uint64_t at = ASM_GM_DATA_BASE;
    uint64_t size[ASM_SEC_COUNT] = {0};
    size[ASM_SEC_RODATA] = c->data[ASM_SEC_RODATA].len;
    size[ASM_SEC_DATA] = c->data[ASM_SEC_DATA].len;
    size[ASM_SEC_BSS] = c->bss_size;
    for (int s = ASM_SEC_RODATA; s < ASM_SEC_COUNT; s++) {
        uint64_t al = NPU_MAX(c->align[s], 4096);
        at = (at + al - 1) & ~(al - 1);
        c->base[s] = at;
        at += size[s];
    }
    c->final = 1;
    /* deferred immediates and data */
    for (size_t i = 0; i < c->nfix && !c->stop; i++) {
        fixup *f = &c->fix[i];
        evalctx ev = {c, &f->loc, NULL, 0};
        asm_val v = f->known;
        if (f->e) {
            if (eval(&ev, f->e, &v)) {
                if (!f->is_data)
                    c->insns[f->index].op = ISA_OP_INVALID;
                continue;
            }
        } else if (v.sec > 0) {
            v.v = (int64_t)(c->base[v.sec] + (uint64_t)v.v);
        }
        if (f->is_data) {
            if (!int_fits(v.v, f->size, f->kind)) {
                int_range_msg(c, &f->loc, v.v, f->size, f->kind);
                continue;
            }
            put_le(c->data[f->sec].data + f->index, (uint64_t)v.v, f->size);
        } else if (place_imm(c, &c->insns[f->index], f->tok, v.v, f->pc, &f->loc)) {
            c->insns[f->index].op = ISA_OP_INVALID;
        }
    }
    /* encode */
    for (size_t i = 0; i < c->ntext; i++) {
        if (c->insns[i].op == ISA_OP_INVALID)
            continue;
        npu_diag d2;
        if (isa_encode(&c->insns[i], &c->text[i], &d2))
            ERR(&c->insn_loc[i], "%s", d2.msg);
    }
    /* symbols */
    size_t n = 0;
    for (size_t b = 0; b < NPU_ARRAY_LEN(c->buckets); b++)
        for (sym *s = c->buckets[b]; s; s = s->next)
            n++;
    o->syms = npu_calloc(n ? n : 1, sizeof *o->syms);
    if (!o->syms) { c->stop = 1; return; }
    for (size_t b = 0; b < NPU_ARRAY_LEN(c->buckets); b++)
        for (sym *s = c->buckets[b]; s; s = s->next) {
            if (s->kind == SY_UNDEF && (s->global || s->type >= 0 || s->has_size)) {
                ERR(s->def.file ? &s->def : &c->cur, "'%s' is declared (.globl/.type/.size) but never defined", s->name);
                continue;
            }
            if (s->kind != SY_LABEL || !s->emit)
                continue;
            asm_sym *a = &o->syms[o->nsyms++];
            a->name = npu_strdup(s->name);
            if (!a->name) { c->stop = 1; return; }
            a->section = s->val.sec;
            a->addr = s->val.sec == ASM_SEC_TEXT ? (uint64_t)s->val.v : c->base[s->val.sec] + (uint64_t)s->val.v;
            a->global = s->global;
            if (s->type >= 0)
                a->type = s->type;
            else if (s->global)
                a->type = s->val.sec == ASM_SEC_TEXT ? ASM_SYM_FUNC : ASM_SYM_OBJECT;
            else
                a->type = ASM_SYM_NOTYPE;
            a->size = UINT64_MAX;  /* automatic, below */
            if (s->has_size) {
                evalctx ev = {c, &s->size_loc, NULL, 0};
                asm_val v;
                if (eval(&ev, s->size_expr, &v) == 0) {
                    if (v.v < 0)
                        ERR(&s->size_loc, ".size %s: negative size %lld", s->name, (long long)v.v);
                    else
                        a->size = (uint64_t)v.v;
                }
            }
        }
    qsort(o->syms, o->nsyms, sizeof *o->syms, sym_cmp);
    /* automatic sizes: a function runs to the next function (of any
     * binding) or the end of its section; any other label to the next
     * symbol at a higher address (so also not past its function's end).
     * Walk groups of symbols at one address backwards: linear time. */
    uint64_t next_any = 0, next_fn = 0;
    for (size_t i = o->nsyms; i > 0;) {
        size_t g = i - 1;
        while (g > 0 && o->syms[g - 1].section == o->syms[i - 1].section &&
               o->syms[g - 1].addr == o->syms[i - 1].addr)
            g--;
        const asm_sym *first = &o->syms[g];
        uint64_t end = first->section == ASM_SEC_TEXT ? c->ntext * 8 : c->base[first->section] + size[first->section];
        if (i == o->nsyms || o->syms[i].section != first->section)
            next_any = next_fn = end;
        int has_fn = 0;
        for (size_t k = g; k < i; k++) {
            asm_sym *a = &o->syms[k];
            has_fn |= a->type == ASM_SYM_FUNC;
            if (a->size == UINT64_MAX)
                a->size = (a->type == ASM_SYM_FUNC ? next_fn : next_any) - a->addr;
            else if (a->addr + a->size > end || a->addr + a->size < a->addr)
                ERR(&c->cur, ".size %s: %llu bytes run past the end of its section", a->name,
                    (unsigned long long)a->size);
        }
        next_any = first->addr;
        if (has_fn)
            next_fn = first->addr;
        i = g;
    }
    /* entry */
    o->entry = 0;
    const char *entries[] = {"_start", "main"};
    int got = 0;
    for (size_t k = 0; k < 2 && !got; k++)
        for (size_t i = 0; i < o->nsyms; i++)
            if (o->syms[i].section == ASM_SEC_TEXT && !strcmp(o->syms[i].name, entries[k])) {
                o->entry = o->syms[i].addr;
                got = 1;
                break;
            }
    for (size_t i = 0; i < o->nsyms && !got; i++)
        if (o->syms[i].section == ASM_SEC_TEXT && o->syms[i].global && o->syms[i].type == ASM_SYM_FUNC) {
            o->entry = o->syms[i].addr;
            got = 1;
        }
    /* hand over text and data */
    o->text = c->text;
    o->ntext = c->ntext;
    o->text_line = c->text_line;
    c->text = NULL;
    c->text_line = NULL;
    for (int s = ASM_SEC_RODATA; s < ASM_SEC_COUNT; s++) {
        o->data[s].addr = c->base[s];
        o->data[s].size = size[s];
        o->data[s].align = NPU_MAX(c->align[s], 8);
        if (s != ASM_SEC_BSS) {
            o->data[s].bytes = c->data[s].data;
            c->data[s].data = NULL;
        }
    }
}

/* ---- entry points ---------------------------------------------------------- */

static void ctx_free(asm_ctx *c)
{
    while (c->nframes)
        pop_frame(c);
    chunk *k = c->arena;
    while (k) {
        chunk *n = k->next;
        npu_free(k);
        k = n;
    }
    npu_free(c->conds);
    npu_free(c->text);
    npu_free(c->text_line);
    npu_free(c->insns);
    npu_free(c->insn_loc);
    npu_free(c->fix);
    for (int s = 0; s < ASM_SEC_COUNT; s++)
        npu_buf_free(&c->data[s]);
}

void asm_output_free(asm_output *o)
{
    if (!o)
        return;
    npu_free(o->text);
    npu_free(o->text_line);
    for (int s = 0; s < ASM_SEC_COUNT; s++)
        npu_free(o->data[s].bytes);
    for (size_t i = 0; i < o->nsyms; i++)
        npu_free(o->syms[i].name);
    npu_free(o->syms);
    for (size_t i = 0; i < o->nmsgs; i++) {
        npu_free(o->msgs[i].file);
        npu_free(o->msgs[i].msg);
        npu_free(o->msgs[i].src);
    }
    npu_free(o->msgs);
    memset(o, 0, sizeof *o);
}

static npu_status run(asm_ctx *c, const char *text, size_t len, const char *name, npu_diag *d)
{
    asm_output *o = c->out;
    const char *nm = arena_strdup(c, name);
    if (!nm) {
        ctx_free(c);
        return npu_errf(d, NPU_ENOMEM, "%s: out of memory", name);
    }
    /* -D definitions are .equ constants defined before the first line */
    c->cur.file = "<command line>";
    c->cur.line = 0;
    for (size_t i = 0; c->opts && i < c->opts->ndefines; i++) {
        sym *s = sym_get(c, c->opts->defines[i].name);
        if (!s) break;
        if (s->kind != SY_UNDEF) {
            ERR(&c->cur, "-D %s given twice", s->name);
            continue;
        }
        s->kind = SY_EQU;
        s->val.v = c->opts->defines[i].value;
        s->val.sec = -1;
        s->def = c->cur;
    }
    if (memchr(text, 0, len)) {
        asm_loc l = {nm, 1, 0, NULL, NULL, NULL, 0};
        ERR(&l, "the source contains a NUL byte: not a text file");
    } else {
        push_text(c, text, len, nm);
    }
    const line *ln;
    while (!c->stop && (ln = next_line(c, 0)) != NULL)
        do_line(c, ln);
    if (!c->stop)
        while (c->nconds) {
            cond *cd = &c->conds[--c->nconds];
            ERR(&cd->loc, "unterminated .if: no .endif before the end of the input");
        }
    /* the final pass runs even after errors, so that undefined symbols
     * are reported in the same run */
    if (!c->stop)
        finish(c);
    if (c->stop && o->nerrors >= (size_t)c->max_errors) {
        /* note that the list was cut */
        asm_msg *m = npu_realloc(o->msgs, (o->nmsgs + 1) * sizeof *m);
        if (m) {
            o->msgs = m;
            m = &o->msgs[o->nmsgs++];
            memset(m, 0, sizeof *m);
            m->file = npu_strdup(nm);
            m->msg = npu_strdup("too many errors, stopping");
        }
    }
    int oom = c->stop && o->nerrors == 0;
    ctx_free(c);
    if (oom) {
        return npu_errf(d, NPU_ENOMEM, "%s: out of memory while assembling", name);
    }
    if (o->nerrors) {
        const asm_msg *m = NULL;
        for (size_t i = 0; i < o->nmsgs && !m; i++)
            if (!o->msgs[i].is_warning)
                m = &o->msgs[i];
        return npu_errf(d, NPU_EINVAL, "%s:%d:%d: %s (%zu error%s)", m->file, m->line, m->col, m->msg,
                        o->nerrors, o->nerrors == 1 ? "" : "s");
    }
    return NPU_OK;
}

npu_status asm_assemble_mem(const char *text, size_t len, const char *name, const asm_opts *opts,
                            asm_output *out, npu_diag *d)
{
    memset(out, 0, sizeof *out);
    asm_ctx *c = npu_calloc(1, sizeof *c);
    if (!c)
        return npu_errf(d, NPU_ENOMEM, "out of memory");
    c->opts = opts;
    c->out = out;
    c->max_errors = opts && opts->max_errors > 0 ? opts->max_errors : ASM_MAX_ERRORS;
    c->sec = ASM_SEC_TEXT;
    npu_status s = run(c, text, len, name ? name : "<input>", d);
    npu_free(c);
    return s;
}

npu_status asm_assemble_file(const char *path, const asm_opts *opts, asm_output *out, npu_diag *d)
{
    memset(out, 0, sizeof *out);
    uint8_t *data;
    size_t len;
    npu_status s = npu_read_file(path, 0, 64u << 20, &data, &len, d);
    if (s)
        return s;
    s = asm_assemble_mem((const char *)data, len, path, opts, out, d);
    npu_free(data);
    return s;
}

int asm_parse_define(const char *arg, char *name, size_t namelen, int64_t *value)
{
    const char *eq = strchr(arg, '=');
    size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
    if (!n || n >= namelen || !is_id0((unsigned char)arg[0]) || arg[0] == '.')
        return -1;
    for (size_t i = 0; i < n; i++)
        if (!is_id((unsigned char)arg[i]) || arg[i] == '.')
            return -1;
    memcpy(name, arg, n);
    name[n] = 0;
    if (!eq) {
        *value = 1;
        return 0;
    }
    /* the value: an integer expression of literals */
    asm_output o;
    char buf[512];
    snprintf(buf, sizeof buf, ".equ __d, %s", eq + 1);
    asm_ctx *c = npu_calloc(1, sizeof *c);
    if (!c)
        return -1;
    memset(&o, 0, sizeof o);
    c->out = &o;
    c->max_errors = 1;
    c->cur.file = "-D";
    c->cur.src = buf;
    const char *p = eq + 1;
    asm_expr *x = parse_expr(c, eq + 1, 1, &p);
    int64_t v = 0;
    int r = -1;
    if (x && !*skipws(p) && eval_now(c, x, "-D value", &v) == 0)
        r = 0;
    ctx_free(c);
    npu_free(c);
    asm_output_free(&o);
    *value = v;
    return r;
}
