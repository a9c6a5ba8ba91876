/* bench/memsim_bench.c — speed of the HBM model on the reference traces,
 * next to the peers' host seconds recorded in
 * ../shared/reference/hbm2-peers.json. Each (trace, peer preset) pair is
 * replayed three times and the best run kept (on a shared host the
 * slowest runs measure the neighbours); like the peers' figures, the time
 * is that of the simulation loop only (no parsing, no output). Prints one
 * JSON object.
 * Usage: bench-memsim_bench [REFERENCE_DIR]  (default $NPU_ROOT/../shared/reference) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memmodel/mem.h"

static const struct { const char *peer, *config; } peers[] = {
    { "DRAMSim3", "configs/hbm2-dramsim3.json" },
    { "Ramulator2.1/RoBaRaCoCh", "configs/hbm2-ramulator-robaracoch.json" },
    { "Ramulator2.1/MOP4CLXOR", "configs/hbm2-ramulator-mop4clxor.json" },
};
static const char *const traces[] = { "seq_rd", "rand_rd", "rand_rd_sparse", "seq_rd_sparse" };

static double peer_seconds(const cJSON *res, const char *trace, const char *peer)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(res, trace), peer);
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(p, "host_seconds");
    return cJSON_IsNumber(h) ? h->valuedouble : 0;
}

int main(int argc, char **argv)
{
    char dir[1024];
    const char *root = getenv("NPU_ROOT");
    if (argc > 1) snprintf(dir, sizeof dir, "%s", argv[1]);
    else snprintf(dir, sizeof dir, "%s/../shared/reference", root && *root ? root : ".");
    char path[1200];
    snprintf(path, sizeof path, "%s/hbm2-peers.json", dir);
    uint8_t *data;
    size_t len;
    npu_diag d = { 0 };
    if (npu_read_file(path, 0, 0, &data, &len, &d)) {
        printf("{\"bench\": \"memsim\", \"skipped\": \"%s not found\"}\n", path);
        return 0;
    }
    cJSON *ref = cJSON_Parse((const char *)data);
    npu_free(data);
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(ref, "results");
    cJSON *out = cJSON_CreateObject(), *runs = cJSON_AddArrayToObject(out, "runs");
    cJSON_AddStringToObject(out, "bench", "memsim");
    cJSON_AddStringToObject(out, "note", "host_seconds: wall time of the simulation loop, best of 3 runs; cpu_seconds: CPU time of the same loop, best of 3 (fairer on a shared host); speedups use CPU time; peer figures from the reference file (their own unloaded 2-core VM)");
    double tot = 0, tot_cpu = 0, tot_ds3 = 0;
    uint64_t tot_req = 0;
    for (int ti = 0; ti < 4; ti++) {
        snprintf(path, sizeof path, "%s/memtraces/%s.trace.gz", dir, traces[ti]);
        uint8_t *td;
        size_t tl;
        if (npu_read_file(path, 1, 0, &td, &tl, &d)) { fprintf(stderr, "%s\n", d.msg); continue; }
        memsim_trace t;
        if (memsim_parse_trace(path, (const char *)td, tl, &t, &d)) { fprintf(stderr, "%s\n", d.msg); npu_free(td); continue; }
        npu_free(td);
        for (int pi = 0; pi < 3; pi++) {
            mem_config c;
            mem_config_default(&c);
            if (memsim_load_config(peers[pi].config, &c, &d)) { fprintf(stderr, "%s\n", d.msg); continue; }
            double wall = 0, cpu = 0;
            for (int rep = 0; rep < 3; rep++) {
                memsim_result r;
                if (memsim_run(&c, &t, 0, &r, &d)) { fprintf(stderr, "%s\n", d.msg); break; }
                if (!rep || r.host_seconds < wall) wall = r.host_seconds;
                if (!rep || r.cpu_seconds < cpu) cpu = r.cpu_seconds;
                memsim_result_free(&r);
            }
            double ps = peer_seconds(res, traces[ti], peers[pi].peer);
            double ds3 = peer_seconds(res, traces[ti], "DRAMSim3");
            cJSON *o = cJSON_CreateObject();
            cJSON_AddItemToArray(runs, o);
            cJSON_AddStringToObject(o, "trace", traces[ti]);
            cJSON_AddStringToObject(o, "config", peers[pi].config);
            cJSON_AddNumberToObject(o, "requests", (double)t.n);
            cJSON_AddNumberToObject(o, "host_seconds", wall);
            cJSON_AddNumberToObject(o, "cpu_seconds", cpu);
            cJSON_AddNumberToObject(o, "requests_per_host_second", wall > 0 ? (double)t.n / wall : 0);
            cJSON_AddStringToObject(o, "peer", peers[pi].peer);
            cJSON_AddNumberToObject(o, "peer_host_seconds", ps);
            cJSON_AddNumberToObject(o, "peer_requests_per_host_second", ps > 0 ? (double)t.n / ps : 0);
            cJSON_AddNumberToObject(o, "dramsim3_host_seconds", ds3);
            cJSON_AddNumberToObject(o, "speedup_vs_dramsim3", cpu > 0 ? ds3 / cpu : 0);
            cJSON_AddNumberToObject(o, "speedup_vs_peer", cpu > 0 ? ps / cpu : 0);
            cJSON_AddNumberToObject(o, "speedup_vs_dramsim3_wall", wall > 0 ? ds3 / wall : 0);
            if (pi == 0) { tot += wall; tot_cpu += cpu; tot_ds3 += ds3; tot_req += t.n; }
        }
        npu_free(t.req);
    }
    cJSON *s = cJSON_AddObjectToObject(out, "dramsim3_config_total");
    cJSON_AddNumberToObject(s, "requests", (double)tot_req);
    cJSON_AddNumberToObject(s, "host_seconds", tot);
    cJSON_AddNumberToObject(s, "cpu_seconds", tot_cpu);
    cJSON_AddNumberToObject(s, "dramsim3_host_seconds", tot_ds3);
    cJSON_AddNumberToObject(s, "speedup_vs_dramsim3", tot_cpu > 0 ? tot_ds3 / tot_cpu : 0);
    cJSON_AddNumberToObject(s, "speedup_vs_dramsim3_wall", tot > 0 ? tot_ds3 / tot : 0);
    char *txt = cJSON_Print(out);
    puts(txt);
    cJSON_free(txt);
    cJSON_Delete(out);
    cJSON_Delete(ref);
    return 0;
}
