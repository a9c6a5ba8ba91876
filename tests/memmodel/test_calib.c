/* tests/memmodel/test_calib.c — the model against DRAMSim3 and Ramulator 2.1
 * on the reference traces: bandwidth within 5 %, mean read latency within
 * 10 %, row-hit rate within 3 points, each peer configured by its preset
 * (configs/hbm2-*.json), each figure computed the way the reference file
 * says the peer's was (see docs/fidelity-hbm.md). Skipped, with a message,
 * when ../shared/reference is not there. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memmodel/mem.h"
#include "tests/memmodel/tmem.h"

static const struct { const char *peer, *config; int cmd_hits; } peers[] = {
    { "DRAMSim3", "configs/hbm2-dramsim3.json", 1 },
    { "Ramulator2.1/RoBaRaCoCh", "configs/hbm2-ramulator-robaracoch.json", 0 },
    { "Ramulator2.1/MOP4CLXOR", "configs/hbm2-ramulator-mop4clxor.json", 0 },
};
static const char *const traces[] = { "seq_rd", "rand_rd", "rand_rd_sparse", "seq_rd_sparse" };

static const char *ref_root(char *buf, size_t n)
{
    return npu_reference_dir(buf, n);
}

START_TEST(t_peers)
{
    char root[1024], path[1200];
    ref_root(root, sizeof root);
    snprintf(path, sizeof path, "%s/hbm2-peers.json", root);
    uint8_t *data;
    size_t len;
    npu_diag d = { 0 };
    if (npu_read_file(path, 0, 0, &data, &len, &d) != NPU_OK) {
        printf("memmodel calibration: SKIPPED (%s not found)\n", path);
        return;
    }
    cJSON *ref = cJSON_Parse((const char *)data);
    npu_free(data);
    ck_assert_ptr_nonnull(ref);
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(ref, "results");
    ck_assert_ptr_nonnull(res);
    int fails = 0;
    printf("%-15s %-24s %9s %9s %8s %8s %7s %7s\n", "trace", "peer", "GB/s", "peer", "lat", "peer", "hit", "peer");
    for (int ti = 0; ti < 4; ti++) {
        snprintf(path, sizeof path, "%s/memtraces/%s.trace.gz", root, traces[ti]);
        uint8_t *td;
        size_t tl;
        if (npu_read_file(path, 1, 0, &td, &tl, &d) != NPU_OK) {
            printf("memmodel calibration: %s SKIPPED (%s)\n", traces[ti], d.msg);
            continue;
        }
        memsim_trace t;
        ck_assert_int_eq(memsim_parse_trace(path, (const char *)td, tl, &t, &d), NPU_OK);
        npu_free(td);
        for (int pi = 0; pi < 3; pi++) {
            const cJSON *pr = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(res, traces[ti]), peers[pi].peer);
            ck_assert_ptr_nonnull(pr);
            double bw = cJSON_GetObjectItemCaseSensitive(pr, "bandwidth_GBps")->valuedouble;
            double lat = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pr, "read_latency_ns"), "mean")->valuedouble;
            double hit = cJSON_GetObjectItemCaseSensitive(pr, "row_buffer_hit_rate")->valuedouble;
            mem_config c;
            mem_config_default(&c);
            ck_assert_msg(memsim_load_config(peers[pi].config, &c, &d) == NPU_OK, "%s", d.msg);
            memsim_result r;
            ck_assert_int_eq(memsim_run(&c, &t, 0, &r, &d), NPU_OK);
            const mem_chan_stats *s = &r.total;
            double mlat = (double)r.lat.sum / (double)r.lat.n * r.tck_ns;
            double mhit = peers[pi].cmd_hits
                ? (double)s->cmd_row_hits / (double)(s->rd + s->wr + s->rda + s->wra)
                : (double)s->row_hits / (double)(s->row_hits + s->row_misses + s->row_conflicts);
            int ok = r.bandwidth_GBps >= bw * 0.95 && r.bandwidth_GBps <= bw * 1.05 &&
                     mlat >= lat * 0.9 && mlat <= lat * 1.1 && mhit >= hit - 0.03 && mhit <= hit + 0.03;
            printf("%-15s %-24s %9.2f %9.2f %8.2f %8.2f %7.4f %7.4f %s\n", traces[ti], peers[pi].peer,
                   r.bandwidth_GBps, bw, mlat, lat, mhit, hit, ok ? "ok" : "OUT OF BOUNDS");
            fails += !ok;
            memsim_result_free(&r);
        }
        npu_free(t.req);
    }
    cJSON_Delete(ref);
    ck_assert_msg(fails == 0, "%d model/peer pairs out of bounds (see the table above)", fails);
}
END_TEST

Suite *tmem_calib_suite(void)
{
    Suite *s = suite_create("memmodel-calibration");
    TCase *tc = tcase_create("peers");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, t_peers);
    suite_add_tcase(s, tc);
    return s;
}
