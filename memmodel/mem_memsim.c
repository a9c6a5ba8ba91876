/* mem_memsim.c — `npusim memsim`: replay a DRAMSim3-format memory trace (or
 * a synthetic pattern) into the raw HBM model and print its stats.
 *
 * Frontend (the one the peer figures in ../shared/reference used): lines
 * enter in order; a line may enter at the first tCK >= its trace cycle;
 * each line is split into HBM atoms (64 B lines over 32 B pseudo-channel
 * bursts become two requests, a then a+32); at most inject_per_cycle atoms
 * enter per cycle; a full channel queue stops injection for that cycle
 * (head-of-line blocking). A line's latency runs from the acceptance of its
 * first atom to the completion of its last. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "memmodel/mem_int.h"

typedef struct ms_run {
    uint64_t *accept, *done;
    uint8_t *left;
} ms_run;

static void ms_done(void *user, uint64_t tag, uint64_t cycle)
{
    ms_run *r = user;
    r->left[tag]--;
    if (cycle > r->done[tag]) r->done[tag] = cycle;
}

npu_status memsim_parse_trace(const char *path, const char *text, size_t len, memsim_trace *t, npu_diag *d)
{
    memset(t, 0, sizeof *t);
    size_t cap = 0;
    const char *p = text, *end = text + len;
    int line = 0;
    while (p < end) {
        line++;
        const char *e = memchr(p, '\n', (size_t)(end - p));
        if (!e) e = end;
        const char *s = p;
        while (s < e && (*s == ' ' || *s == '\t' || *s == '\r')) s++;
        if (s == e || *s == '#') { p = e + 1; continue; }
        /* hand-rolled: sscanf dominated the parse of 200k-line traces */
        const char *q = s;
        unsigned long long a = 0, c = 0;
        char op[16];
        if (e - q < 3 || q[0] != '0' || (q[1] != 'x' && q[1] != 'X')) goto bad;
        q += 2;
        int nd = 0;
        for (; q < e; q++, nd++) {
            int v = *q >= '0' && *q <= '9' ? *q - '0' : *q >= 'a' && *q <= 'f' ? *q - 'a' + 10
                  : *q >= 'A' && *q <= 'F' ? *q - 'A' + 10 : -1;
            if (v < 0) break;
            if (nd >= 16) goto bad;
            a = a << 4 | (unsigned)v;
        }
        if (!nd || q == e || (*q != ' ' && *q != '\t')) goto bad;
        while (q < e && (*q == ' ' || *q == '\t')) q++;
        size_t ol = 0;
        while (q < e && *q != ' ' && *q != '\t' && *q != '\r') { if (ol < sizeof op - 1) op[ol++] = *q; q++; }
        op[ol] = 0;
        if (!ol || q == e) goto bad;
        while (q < e && (*q == ' ' || *q == '\t')) q++;
        nd = 0;
        for (; q < e && *q >= '0' && *q <= '9'; q++, nd++) {
            if (c > (UINT64_MAX - 9) / 10) goto bad;
            c = c * 10 + (unsigned)(*q - '0');
        }
        if (!nd) goto bad;
        while (q < e && (*q == ' ' || *q == '\t' || *q == '\r')) q++;
        if (q != e) goto bad;
        int w;
        if (!strcmp(op, "READ")) w = 0;
        else if (!strcmp(op, "WRITE")) w = 1;
        else {
            npu_errf(d, NPU_EFORMAT, "%s:%d: expected READ or WRITE, got \"%s\"", path, line, op);
            goto fail;
        }
        if (t->n == cap) {
            size_t nc = cap ? cap * 2 : 4096;
            memsim_req *nr = npu_realloc(t->req, nc * sizeof *nr);
            if (!nr) { npu_errf(d, NPU_ENOMEM, "%s: out of memory", path); goto fail; }
            t->req = nr; cap = nc;
        }
        t->req[t->n].addr = a;
        t->req[t->n].cycle = c;
        t->req[t->n].is_write = w;
        t->n++;
        p = e + 1;
        continue;
    bad:
        npu_errf(d, NPU_EFORMAT, "%s:%d: expected \"0x<hex address> READ|WRITE <cycle>\"", path, line);
        goto fail;
    }
    return NPU_OK;
fail:
    npu_free(t->req);
    t->req = NULL;
    t->n = 0;
    return NPU_EFORMAT;
}

npu_status memsim_pattern(const char *pat, uint64_t n, uint64_t stride, uint64_t seed, int write_pct,
                          uint64_t interval, const mem_config *c, memsim_trace *t, npu_diag *d)
{
    memset(t, 0, sizeof *t);
    uint64_t lb = (uint64_t)c->memsim.line_bytes;
    const mem_hbm_cfg *h = &c->hbm;
    uint64_t cap = (uint64_t)h->stacks * h->channels * h->pseudo_channels * h->sids * h->bankgroups *
                   h->banks * (uint64_t)h->rows * h->columns * (uint64_t)mem_config_atom_bytes(c);
    int kind = !strcmp(pat, "stream") ? 0 : !strcmp(pat, "random") ? 1 : !strcmp(pat, "strided") ? 2 : -1;
    if (kind < 0) return npu_errf(d, NPU_EINVAL, "--pattern: expected stream, random or strided, got \"%s\"", pat);
    if (n == 0 || n > 100000000) return npu_errf(d, NPU_EINVAL, "--requests: expected 1..100000000");
    t->req = npu_malloc(n * sizeof *t->req);
    if (!t->req) return npu_errf(d, NPU_ENOMEM, "memsim: out of memory");
    npu_rng rng = { seed };
    npu_rng wrng = { seed ^ 0x5deece66dull };
    for (uint64_t i = 0; i < n; i++) {
        uint64_t a;
        if (kind == 0) a = i * lb;
        else if (kind == 1) a = (npu_rng_next(&rng) % (cap / lb)) * lb;
        else a = i * stride;
        t->req[i].addr = a % cap;
        t->req[i].cycle = i * interval;
        t->req[i].is_write = write_pct > 0 && (int)(npu_rng_next(&wrng) % 100) < write_pct;
    }
    t->n = n;
    return NPU_OK;
}

/* Set by the memsim command on a terminal: memsim_run draws a status
 * line (npu_tty_line) every 64 Ki lines offered. The library's other
 * callers never set it. */
static int ms_progress;

npu_status memsim_run(const mem_config *c, const memsim_trace *t, int check, memsim_result *res, npu_diag *d)
{
    memset(res, 0, sizeof *res);
    mem_hbm *h = mem_hbm_new(c, d);
    if (!h) return d ? d->status : NPU_EINVAL;
    int atom = mem_config_atom_bytes(c);
    int per = (c->memsim.line_bytes + atom - 1) / atom;
    if (per > 255) { mem_hbm_free(h); return npu_errf(d, NPU_EINVAL, "memsim.line_bytes: more than 255 atoms per line"); }
    ms_run r = { 0 };
    size_t n = t->n;
    size_t n1 = n ? n : 1;
    r.accept = npu_malloc(n1 * sizeof *r.accept);
    r.done = npu_malloc(n1 * sizeof *r.done);
    r.left = npu_malloc(n1);
    npu_status st = NPU_OK;
    if (!r.accept || !r.done || !r.left) { st = npu_errf(d, NPU_ENOMEM, "memsim: out of memory"); goto out; }
    /* zeroed here, not by calloc, whose large blocks are mapped on first
     * touch: the timed loop below measures the model, not page faults */
    memset(r.accept, 0, n1 * sizeof *r.accept);
    memset(r.done, 0, n1 * sizeof *r.done);
    memset(r.left, 0, n1);
    mem_hbm_set_callback(h, ms_done, &r);
    if (check) mem_hbm_log_commands(h, 1);
    struct timespec t0, t1, c0, c1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    size_t next = 0;
    int sub = 0;                /* atoms of line `next` already in */
    uint64_t now = n ? t->req[0].cycle : 0;
    int K = c->memsim.inject_per_cycle;
    uint64_t stall = 0;
    while (next < n) {
        /* inject phase of cycle `now` (the model has run every cycle before it) */
        int k = 0, blocked = 0;
        while (next < n && k < K && t->req[next].cycle <= now) {
            const memsim_req *q = &t->req[next];
            uint64_t a = q->addr + (uint64_t)sub * (uint64_t)atom;
            if (sub == 0) { r.accept[next] = now; r.left[next] = (uint8_t)per; }
            int ok = mem_hbm_offer(h, a, q->is_write, next, now, d);
            if (ok < 0) { st = d ? d->status : NPU_EINVAL; goto out; }
            if (!ok) { blocked = 1; break; }
            k++;
            if (++sub == per) {
                sub = 0;
                if ((++next & 0xffff) == 0 && ms_progress)
                    npu_tty_line("npusim memsim: %.1f M of %.1f M lines offered, cycle %.2f M",
                                 (double)next * 1e-6, (double)n * 1e-6, (double)now * 1e-6);
            }
        }
        uint64_t tn;
        if (next >= n) break;
        if (blocked) {
            /* only a tick of the model can free the queue */
            uint64_t e = mem_hbm_next_event(h);
            tn = (e == UINT64_MAX || e < now ? now : e) + 1;
            stall += tn - now;
        } else if (k == K || t->req[next].cycle <= now) {
            tn = now + 1;
        } else {
            tn = t->req[next].cycle;
        }
        /* every cycle up to tn - 1 (nothing is offered in between) */
        mem_hbm_advance_to(h, tn - 1);
        now = tn;
    }
    for (;;) {
        uint64_t e = mem_hbm_next_event(h);
        if (e == UINT64_MAX) break;
        mem_hbm_advance_to(h, e);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    res->cpu_seconds = (double)(c1.tv_sec - c0.tv_sec) + 1e-9 * (double)(c1.tv_nsec - c0.tv_nsec);
    res->host_seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    /* per-line figures */
    res->lines = n;
    res->lat.min = UINT64_MAX;
    for (size_t i = 0; i < n; i++) {
        if (r.left[i]) {
            /* the reference excludes writes still buffered at the end */
            if (t->req[i].is_write) { res->writes_unissued++; res->writes++; continue; }
            st = npu_errf(d, NPU_EINVAL, "memsim: line %zu never completed (model bug)", i);
            goto out;
        }
        if (r.done[i] > res->dram_cycles) res->dram_cycles = r.done[i];
        if (t->req[i].is_write) res->writes++;
        else { res->reads++; mem_hist_add(&res->lat, r.done[i] - r.accept[i]); }
    }
    res->frontend_stall_cycles = stall;
    /* the averages are over [0, dram_cycles]: integrate the queues to its
     * end, not just to each channel's last tick (writes left in a buffer
     * count to the end whatever the tick schedule) */
    mem_hbm_account_to(h, res->dram_cycles);
    mem_hbm_total_stats(h, &res->total);
    res->nchan = mem_hbm_channels(h);
    res->chan = npu_calloc((size_t)res->nchan, sizeof *res->chan);
    if (!res->chan) { st = npu_errf(d, NPU_ENOMEM, "memsim: out of memory"); goto out; }
    for (int i = 0; i < res->nchan; i++) res->chan[i] = *mem_hbm_chan_stats(h, i);
    res->tck_ns = 2000.0 / c->hbm.data_rate_mbps;
    res->bytes = (uint64_t)n * (uint64_t)c->memsim.line_bytes;
    res->bandwidth_GBps = res->dram_cycles ? (double)res->bytes / ((double)res->dram_cycles * res->tck_ns) : 0;
    res->peak_GBps = mem_config_peak_Bps(c) / 1e9;
    if (check) {
        res->checked = 1;
        res->commands_checked = mem_hbm_logged_commands(h);
        npu_diag cd = { 0 };
        if (mem_hbm_check(h, &res->violations, &cd) != NPU_OK && res->violations == 0) {
            st = npu_errf(d, cd.status, "%s", cd.msg);
            goto out;
        }
        if (check & 2) mem_hbm_dump_commands(h, stderr);
        snprintf(res->first_violation, sizeof res->first_violation, "%.500s", res->violations ? cd.msg : "");
    }
out:
    npu_free(r.accept); npu_free(r.done); npu_free(r.left);
    mem_hbm_free(h);
    return st;
}

void memsim_result_free(memsim_result *r)
{
    npu_free(r->chan);
    r->chan = NULL;
}

static double rate(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0.0; }

cJSON *memsim_result_json(const memsim_result *r)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    const mem_chan_stats *s = &r->total;
    uint64_t cls = s->row_hits + s->row_misses + s->row_conflicts;
    uint64_t cols = s->rd + s->wr + s->rda + s->wra;
    cJSON_AddNumberToObject(o, "requests", (double)r->lines);
    cJSON_AddNumberToObject(o, "reads", (double)r->reads);
    cJSON_AddNumberToObject(o, "writes", (double)r->writes);
    cJSON_AddNumberToObject(o, "dram_cycles", (double)r->dram_cycles);
    cJSON_AddNumberToObject(o, "tCK_ns", r->tck_ns);
    cJSON_AddNumberToObject(o, "bandwidth_GBps", r->bandwidth_GBps);
    cJSON_AddNumberToObject(o, "peak_GBps", r->peak_GBps);
    cJSON *l = cJSON_AddObjectToObject(o, "read_latency_ns");
    if (l) {
        cJSON_AddNumberToObject(l, "mean", r->lat.n ? (double)r->lat.sum / (double)r->lat.n * r->tck_ns : 0);
        cJSON_AddNumberToObject(l, "p50", (double)mem_hist_pct(&r->lat, 50) * r->tck_ns);
        cJSON_AddNumberToObject(l, "p99", (double)mem_hist_pct(&r->lat, 99) * r->tck_ns);
        cJSON_AddNumberToObject(l, "min", r->lat.n ? (double)r->lat.min * r->tck_ns : 0);
        cJSON_AddNumberToObject(l, "max", (double)r->lat.max * r->tck_ns);
        cJSON_AddNumberToObject(l, "n", (double)r->lat.n);
    }
    cJSON_AddNumberToObject(o, "row_hit_rate", rate(s->row_hits, cls));
    cJSON_AddNumberToObject(o, "row_hit_rate_cmd", rate(s->cmd_row_hits, cols));
    cJSON *rb = cJSON_AddObjectToObject(o, "row_buffer");
    if (rb) {
        cJSON_AddNumberToObject(rb, "hits", (double)s->row_hits);
        cJSON_AddNumberToObject(rb, "misses", (double)s->row_misses);
        cJSON_AddNumberToObject(rb, "conflicts", (double)s->row_conflicts);
        cJSON_AddNumberToObject(rb, "cmd_row_hits", (double)s->cmd_row_hits);
    }
    cJSON *cm = cJSON_AddObjectToObject(o, "commands");
    if (cm) {
        cJSON_AddNumberToObject(cm, "ACT", (double)s->act);
        cJSON_AddNumberToObject(cm, "PRE", (double)s->pre);
        cJSON_AddNumberToObject(cm, "PREA", (double)s->prea);
        cJSON_AddNumberToObject(cm, "RD", (double)s->rd);
        cJSON_AddNumberToObject(cm, "RDA", (double)s->rda);
        cJSON_AddNumberToObject(cm, "WR", (double)s->wr);
        cJSON_AddNumberToObject(cm, "WRA", (double)s->wra);
        cJSON_AddNumberToObject(cm, "REFab", (double)s->refab);
        cJSON_AddNumberToObject(cm, "REFpb", (double)s->refpb);
        cJSON_AddNumberToObject(cm, "dual_issue_cycles", (double)s->dual_issue_cycles);
    }
    cJSON_AddNumberToObject(o, "act_count", (double)s->act);
    cJSON_AddNumberToObject(o, "ref_count", (double)(s->refab + s->refpb));
    cJSON_AddNumberToObject(o, "reads_forwarded", (double)s->forwarded);
    cJSON_AddNumberToObject(o, "writes_coalesced", (double)s->coalesced);
    cJSON_AddNumberToObject(o, "reads_merged", (double)s->merged_reads);
    cJSON_AddNumberToObject(o, "frontend_stall_cycles", (double)r->frontend_stall_cycles);
    cJSON_AddNumberToObject(o, "writes_left_buffered", (double)r->writes_unissued);
    cJSON_AddNumberToObject(o, "avg_read_queue_len_per_channel",
                            r->dram_cycles && r->nchan ? (double)s->rq_occ_sum / (double)r->dram_cycles / r->nchan : 0);
    if (r->checked) {
        cJSON *ck = cJSON_AddObjectToObject(o, "check");
        if (ck) {
            cJSON_AddNumberToObject(ck, "commands", (double)r->commands_checked);
            cJSON_AddNumberToObject(ck, "violations", (double)r->violations);
            if (r->violations) cJSON_AddStringToObject(ck, "first", r->first_violation);
        }
    }
    cJSON *chs = cJSON_AddArrayToObject(o, "channels");
    for (int i = 0; chs && i < r->nchan; i++) {
        const mem_chan_stats *c = &r->chan[i];
        cJSON *x = cJSON_CreateObject();
        if (!x) break;
        cJSON_AddItemToArray(chs, x);
        cJSON_AddNumberToObject(x, "channel", i);
        cJSON_AddNumberToObject(x, "bytes_read", (double)c->bytes_read);
        cJSON_AddNumberToObject(x, "bytes_written", (double)c->bytes_written);
        cJSON_AddNumberToObject(x, "bandwidth_GBps", r->dram_cycles ?
                                (double)(c->bytes_read + c->bytes_written) / ((double)r->dram_cycles * r->tck_ns) : 0);
        cJSON_AddNumberToObject(x, "ACT", (double)c->act);
        cJSON_AddNumberToObject(x, "PRE", (double)(c->pre + c->prea));
        cJSON_AddNumberToObject(x, "RD", (double)(c->rd + c->rda));
        cJSON_AddNumberToObject(x, "WR", (double)(c->wr + c->wra));
        cJSON_AddNumberToObject(x, "REF", (double)(c->refab + c->refpb));
        cJSON_AddNumberToObject(x, "row_hits", (double)c->row_hits);
        cJSON_AddNumberToObject(x, "row_misses", (double)c->row_misses);
        cJSON_AddNumberToObject(x, "row_conflicts", (double)c->row_conflicts);
        cJSON_AddNumberToObject(x, "lat_mean_tck", c->lat.n ? (double)c->lat.sum / (double)c->lat.n : 0);
        cJSON_AddNumberToObject(x, "lat_p50_tck", (double)mem_hist_pct(&c->lat, 50));
        cJSON_AddNumberToObject(x, "lat_p99_tck", (double)mem_hist_pct(&c->lat, 99));
        cJSON_AddNumberToObject(x, "avg_read_queue", r->dram_cycles ? (double)c->rq_occ_sum / (double)r->dram_cycles : 0);
        cJSON_AddNumberToObject(x, "avg_write_queue", r->dram_cycles ? (double)c->wq_occ_sum / (double)r->dram_cycles : 0);
    }
    return o;
}

static void print_text(FILE *f, const memsim_result *r)
{
    const mem_chan_stats *s = &r->total;
    uint64_t cls = s->row_hits + s->row_misses + s->row_conflicts;
    uint64_t cols = s->rd + s->wr + s->rda + s->wra;
    fprintf(f, "requests        %" PRIu64 " (%" PRIu64 " reads, %" PRIu64 " writes)\n", (uint64_t)r->lines, r->reads, r->writes);
    fprintf(f, "dram cycles     %" PRIu64 " (tCK %.4g ns)\n", r->dram_cycles, r->tck_ns);
    fprintf(f, "bandwidth       %.2f GB/s (%.1f %% of %.1f peak)\n", r->bandwidth_GBps,
            r->peak_GBps ? 100 * r->bandwidth_GBps / r->peak_GBps : 0, r->peak_GBps);
    fprintf(f, "read latency    mean %.2f  p50 %.0f  p99 %.0f  min %.0f  max %.0f ns\n",
            r->lat.n ? (double)r->lat.sum / (double)r->lat.n * r->tck_ns : 0,
            (double)mem_hist_pct(&r->lat, 50) * r->tck_ns, (double)mem_hist_pct(&r->lat, 99) * r->tck_ns,
            r->lat.n ? (double)r->lat.min * r->tck_ns : 0, (double)r->lat.max * r->tck_ns);
    fprintf(f, "row buffer      %.4f hit rate (%" PRIu64 " hits, %" PRIu64 " misses, %" PRIu64 " conflicts); per command %.4f\n",
            rate(s->row_hits, cls), s->row_hits, s->row_misses, s->row_conflicts, rate(s->cmd_row_hits, cols));
    fprintf(f, "commands        ACT %" PRIu64 "  PRE %" PRIu64 "  PREA %" PRIu64 "  RD %" PRIu64 "  RDA %" PRIu64
            "  WR %" PRIu64 "  WRA %" PRIu64 "  REFab %" PRIu64 "  REFpb %" PRIu64 "\n",
            s->act, s->pre, s->prea, s->rd, s->rda, s->wr, s->wra, s->refab, s->refpb);
    fprintf(f, "write buffer    %" PRIu64 " reads forwarded, %" PRIu64 " writes coalesced, %" PRIu64
            " write lines left buffered at the end\n", s->forwarded, s->coalesced, r->writes_unissued);
    fprintf(f, "frontend stall  %" PRIu64 " cycles; avg read queue %.2f per channel\n", r->frontend_stall_cycles,
            r->dram_cycles && r->nchan ? (double)s->rq_occ_sum / (double)r->dram_cycles / r->nchan : 0);
    fprintf(f, "%-4s %10s %9s %8s %8s %8s %8s %8s\n", "chan", "GB/s", "ACT", "RD", "WR", "REF", "hit", "lat");
    for (int i = 0; i < r->nchan; i++) {
        const mem_chan_stats *c = &r->chan[i];
        uint64_t cc = c->row_hits + c->row_misses + c->row_conflicts;
        fprintf(f, "%-4d %10.2f %9" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8.4f %8.2f\n", i,
                r->dram_cycles ? (double)(c->bytes_read + c->bytes_written) / ((double)r->dram_cycles * r->tck_ns) : 0,
                c->act, c->rd + c->rda, c->wr + c->wra, c->refab + c->refpb, rate(c->row_hits, cc),
                c->lat.n ? (double)c->lat.sum / (double)c->lat.n * r->tck_ns : 0);
    }
    if (r->checked)
        fprintf(f, "check           %" PRIu64 " commands, %" PRIu64 " violations%s%s\n", r->commands_checked,
                r->violations, r->violations ? ": " : "", r->first_violation);
}

npu_status memsim_load_config(const char *path, mem_config *c, npu_diag *d)
{
    uint8_t *data;
    size_t len;
    npu_status st = npu_read_file(path, 0, 16 << 20, &data, &len, d);
    if (st) return st;
    const char *ep = NULL;
    cJSON *j = cJSON_ParseWithOpts((const char *)data, &ep, 0);
    if (!j) {
        int line = 1;
        for (const char *p = (const char *)data; ep && p < ep; p++) line += *p == '\n';
        npu_free(data);
        return npu_errf(d, NPU_EFORMAT, "%s:%d: malformed JSON", path, line);
    }
    npu_free(data);
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "memory");
    char where[1100];
    snprintf(where, sizeof where, "%s: memory", path);
    if (!m) { m = j; snprintf(where, sizeof where, "%s", path); }
    st = mem_config_parse(m, where, c, d);
    cJSON_Delete(j);
    return st;
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: npusim memsim [--config FILE] [--set KEY=VALUE]... [--json] [--check] TRACE\n"
        "       npusim memsim [--config FILE] --pattern stream|random|strided --requests N\n"
        "                     [--stride BYTES] [--seed S] [--write-pct P] [--interval CYCLES]\n"
        "Replays a DRAMSim3-format trace (\"0x<addr> READ|WRITE <cycle>\" per line, gzip\n"
        "accepted) or a synthetic pattern into the HBM model and prints its stats.\n"
        "  --config FILE   memory config (JSON: a \"memory\" object or the object itself);\n"
        "                  default: the default machine (HBM2E x 4 stacks)\n"
        "  --set K=V       override one key (e.g. hbm.tCL=20, controller.read_queue=64)\n"
        "  --json          stats as JSON\n"
        "  --dump-config   print the resulting memory config (every key) and exit\n"
        "  --doc-keys      print the config key table (Markdown) and exit\n"
        "  --check         replay the issued commands through the JEDEC timing checker\n"
        "  --time          print the host seconds of the simulation loop to stderr\n"
        "  --dump-commands print every issued command to stderr (implies --check)\n"
        "on a terminal a replay over 2 s shows its progress on stderr (NPUSIM_PROGRESS=0|1)\n"
        "exit: 0 ok, 1 timing violations found, 2 bad input\n");
}

int mem_cmd_memsim(int argc, char **argv)
{
    mem_config c;
    mem_config_default(&c);
    npu_diag d = { 0 };
    const char *trace = NULL, *pattern = NULL;
    int json = 0, check = 0, show_time = 0, write_pct = 0, dump_cfg = 0;
    uint64_t nreq = 0, stride = 4096, seed = 1, interval = 0;
    int got_nreq = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED() do { if (!v) { fprintf(stderr, "npusim memsim: %s needs a value\n", a); return 2; } i++; } while (0)
#define NUM(dst) do { NEED(); \
        if (npu_parse_u64(v, &(dst))) { fprintf(stderr, "npusim memsim: %s: expected a non-negative integer, got \"%s\"\n", a, v); return 2; } } while (0)
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); return 0; }
        else if (!strcmp(a, "--config")) {
            NEED();
            if (memsim_load_config(v, &c, &d)) { fprintf(stderr, "npusim memsim: %s\n", d.msg); return 2; }
        } else if (!strcmp(a, "--set")) {
            NEED();
            char key[256];
            const char *eq = strchr(v, '=');
            if (!eq || (size_t)(eq - v) >= sizeof key) { fprintf(stderr, "npusim memsim: --set: expected KEY=VALUE\n"); return 2; }
            memcpy(key, v, (size_t)(eq - v));
            key[eq - v] = 0;
            const char *k = strncmp(key, "memory.", 7) ? key : key + 7;
            if (mem_config_set(&c, k, eq + 1, &d)) { fprintf(stderr, "npusim memsim: %s\n", d.msg); return 2; }
        } else if (!strcmp(a, "--json")) json = 1;
        else if (!strcmp(a, "--check")) check |= 1;
        else if (!strcmp(a, "--dump-config")) dump_cfg = 1;
        else if (!strcmp(a, "--doc-keys")) {
            char *doc = mem_config_doc();
            if (!doc) { fprintf(stderr, "npusim memsim: out of memory\n"); return 2; }
            fputs(doc, stdout);
            npu_free(doc);
            return 0;
        }
        else if (!strcmp(a, "--dump-commands")) check |= 3;
        else if (!strcmp(a, "--time")) show_time = 1;
        else if (!strcmp(a, "--pattern")) { NEED(); pattern = v; }
        else if (!strcmp(a, "--requests")) { NUM(nreq); got_nreq = 1; }
        else if (!strcmp(a, "--stride")) NUM(stride);
        else if (!strcmp(a, "--seed")) NUM(seed);
        else if (!strcmp(a, "--interval")) NUM(interval);
        else if (!strcmp(a, "--write-pct")) {
            uint64_t w; NUM(w);
            if (w > 100) { fprintf(stderr, "npusim memsim: --write-pct: expected 0..100\n"); return 2; }
            write_pct = (int)w;
        } else if (a[0] == '-' && a[1]) { fprintf(stderr, "npusim memsim: unknown option %s (see --help)\n", a); return 2; }
        else if (trace) { fprintf(stderr, "npusim memsim: more than one trace given (%s, %s)\n", trace, a); return 2; }
        else trace = a;
#undef NUM
#undef NEED
    }
    if (mem_config_validate(&c, "--set memory", &d)) { fprintf(stderr, "npusim memsim: %s\n", d.msg); return 2; }
    if (dump_cfg) {
        cJSON *o = cJSON_CreateObject(), *m = mem_config_dump(&c);
        char *s = NULL;
        if (o && m) { cJSON_AddItemToObject(o, "memory", m); m = NULL; s = cJSON_Print(o); }
        cJSON_Delete(m);
        cJSON_Delete(o);
        if (!s) { fprintf(stderr, "npusim memsim: out of memory\n"); return 2; }
        puts(s);
        cJSON_free(s);
        return 0;
    }
    if (!!trace == !!pattern) {
        fprintf(stderr, "npusim memsim: give a TRACE or --pattern (not both); see --help\n");
        return 2;
    }
    memsim_trace t;
    if (trace) {
        uint8_t *data;
        size_t len;
        if (npu_read_file(trace, 1, 0, &data, &len, &d)) { fprintf(stderr, "npusim memsim: %s\n", d.msg); return 2; }
        npu_status st = memsim_parse_trace(trace, (const char *)data, len, &t, &d);
        npu_free(data);
        if (st) { fprintf(stderr, "npusim memsim: %s\n", d.msg); return 2; }
    } else {
        if (!got_nreq) { fprintf(stderr, "npusim memsim: --pattern needs --requests N\n"); return 2; }
        if (memsim_pattern(pattern, nreq, stride, seed, write_pct, interval, &c, &t, &d)) {
            fprintf(stderr, "npusim memsim: %s\n", d.msg);
            return 2;
        }
    }
    memsim_result r;
    ms_progress = npu_tty_line_wanted();
    npu_tty_line_start();
    npu_status st = memsim_run(&c, &t, check, &r, &d);
    npu_tty_line_end();
    npu_free(t.req);
    if (st) { fprintf(stderr, "npusim memsim: %s\n", d.msg); memsim_result_free(&r); return 2; }
    if (json) {
        cJSON *o = memsim_result_json(&r);
        char *s = o ? cJSON_Print(o) : NULL;
        if (!s) { fprintf(stderr, "npusim memsim: out of memory\n"); cJSON_Delete(o); memsim_result_free(&r); return 2; }
        puts(s);
        cJSON_free(s);
        cJSON_Delete(o);
    } else {
        print_text(stdout, &r);
    }
    if (show_time) fprintf(stderr, "host_seconds %.4f cpu_seconds %.4f\n", r.host_seconds, r.cpu_seconds);
    int rc = r.checked && r.violations ? 1 : 0;
    if (rc) fprintf(stderr, "npusim memsim: %" PRIu64 " timing violations; first: %s\n", r.violations, r.first_violation);
    memsim_result_free(&r);
    return rc;
}
