/* npu_util.h — the base layer every part stands on: status codes, the
 * caller-owned diagnostic buffer, the allocation hook and safe file I/O.
 *
 * It lives in isa/ because the ISA is the lowest part and every other part
 * already depends on it; the prefix is npu_ because nothing here is about
 * instructions. */
#ifndef NPU_UTIL_H
#define NPU_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Status codes: one table (isa/status.def), expanded here and in
 * npu_status_name(). 0 is success; every fallible call returns one. */
typedef enum npu_status {
#define NPU_STATUS(id, name, doc) id,
#include "isa/status.def"
#undef NPU_STATUS
    NPU__STATUS_COUNT
} npu_status;

const char *npu_status_name(npu_status s);

/* A diagnostic: the message of the last failure, with file, line, key or pc
 * in it. Owned by the caller; the library never prints and never exits. */
typedef struct npu_diag {
    npu_status status;
    char msg[2048];
} npu_diag;

/* Format a message into d (if d is not NULL) and return code. */
npu_status npu_errf(npu_diag *d, npu_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
npu_status npu_verrf(npu_diag *d, npu_status code, const char *fmt, va_list ap);
/* Prefix the message already in d with "prefix: " (for adding context). */
void npu_diag_prefix(npu_diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void npu_diag_clear(npu_diag *d);

/* ---- the allocation hook ----------------------------------------------
 * Every allocation of the library goes through these, so that a test can
 * make the N-th allocation fail (SQLite's test_malloc idea). The fail
 * counter is the one piece of process-wide state: it is test-only,
 * thread-local, and off (0) unless a test sets it. */
void *npu_malloc(size_t n);
void *npu_calloc(size_t count, size_t size);
void *npu_realloc(void *p, size_t n);
void  npu_free(void *p);
char *npu_strdup(const char *s);
/* Fail the n-th allocation from now (1 = the next one); 0 turns it off.
 * Returns how many allocations were made since the last call. */
long  npu_alloc_fail_after(long n);
/* 1 if an injected failure has happened since the last npu_alloc_fail_after. */
int   npu_alloc_failed(void);
/* 1 while a failure is set up on this thread (work that would move to
 * another thread stays here, so the test still reaches it). */
int   npu_alloc_fail_armed(void);

/* ---- files ---------------------------------------------------------------
 * Read a whole file (gzip'd files are inflated when gz_ok and the file starts
 * with the gzip magic). *data is NUL-terminated for convenience (len excludes
 * it). max_len bounds what is read (0 = 1 GiB); a larger file is an error,
 * never a silent truncation. Free with npu_free. */
/* A command-line count: decimal, 0x hex or 0 octal digits only (no sign,
 * no spaces, no suffix), within uint64_t. 0 and *v set, or -1. */
int npu_parse_u64(const char *s, uint64_t *v);
/* The same, and with size_suffix a binary size suffix: K, M, G or T
 * (x1024 each, either case), alone or as KB / KiB ("512K", "1GiB"). 0 and
 * *v set; -1 not such a number; -2 past uint64_t. */
int npu_parse_count(const char *s, int size_suffix, uint64_t *v);

/* ---- JSON ---------------------------------------------------------------- */
struct cJSON;
/* 1 when a member of obj before item has item's name: a key given twice,
 * which every config, launch and memory file reader refuses. */
int npu_json_dup_key(const struct cJSON *obj, const struct cJSON *item);

/* The release of npusim, npuview and libnpusim (--version). */
#define NPU_VERSION "0.1.0"

/* Levenshtein distance of two names (SIZE_MAX past 127 bytes). */
size_t npu_edit_distance(const char *a, const char *b);
/* A hint for a mistyped name among n candidates, into buf: " (did you
 * mean core.ub.banks?)" for the nearest by edit distance when it is close
 * (at most a quarter of the name's length, at least 2), else " (did you
 * mean one of core.l1.size, core.l1.align?)" for the names that share the
 * longest prefix with it past its first dot (up to 4), else "". name(i,
 * ctx) gives candidate i (NULL: skipped); prefix goes before each. */
void npu_suggest(const char *key, size_t n, const char *(*name)(size_t i, void *ctx), void *ctx,
                 const char *prefix, char *buf, size_t len);
/* The folder of the calibration references (ascend910b-measured.json,
 * hbm2-peers.json, memtraces/): $NPU_REFERENCE, else
 * $NPU_ROOT/../shared/reference, else ../shared/reference; into buf. */
const char *npu_reference_dir(char *buf, size_t n);
npu_status npu_read_file(const char *path, int gz_ok, size_t max_len,
                         uint8_t **data, size_t *len, npu_diag *d);
/* Write a file atomically: to "path.tmp.PID" then rename, so an interrupted
 * run never leaves a truncated file under the requested name. */
npu_status npu_write_file_atomic(const char *path, const void *data, size_t len,
                                 npu_diag *d);

/* A growable byte buffer (for writers that build a file in memory). */
typedef struct npu_buf {
    uint8_t *data;
    size_t len, cap;
    int oom;            /* set once an append failed; later appends are no-ops */
} npu_buf;
int  npu_buf_append(npu_buf *b, const void *p, size_t n);  /* 0 ok, -1 oom */
int  npu_buf_printf(npu_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void npu_buf_free(npu_buf *b);

/* Seconds on the monotonic clock (host wall time for intervals). */
double npu_mono_s(void);

/* $NPUSIM_PROGRESS: 0 never, 1 always, -1 unset or empty (a terminal
 * decides), -2 any other value (the commands refuse it; the status line
 * then behaves as unset). */
int npu_progress_setting(void);

/* A status line on stderr for a job that takes a while (docs/running.md,
 * "Progress"): shown per npu_progress_setting, unset meaning when stderr
 * is a terminal. npu_tty_line_start notes the job's start; npu_tty_line
 * redraws the line ("\r", erase, the vprintf-style text, ", 4.1 s" since
 * the start), but only once the job has taken 2 s and at most every half
 * second (else it returns at once, reading only the clock);
 * npu_tty_line_end erases a drawn line. One line per process. */
int npu_tty_line_wanted(void);
void npu_tty_line_start(void);
void npu_tty_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void npu_tty_line_end(void);

/* Deterministic PRNG (splitmix64), owned by whoever needs it. */
typedef struct npu_rng { uint64_t s; } npu_rng;
static inline uint64_t npu_rng_next(npu_rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

#define NPU_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define NPU_MIN(a, b) ((a) < (b) ? (a) : (b))
#define NPU_MAX(a, b) ((a) > (b) ? (a) : (b))

#endif
