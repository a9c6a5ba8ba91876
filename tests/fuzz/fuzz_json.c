/* fuzz_json — both JSON front ends on the same text: the machine config
 * (cfg_load_json_text, then a dump/reload round trip when it loads) and the
 * launch file (launch_load_json_text). Seeds: the configs/ files and the
 * launch files npusim ref writes. */
#include <string.h>

#include "fuzz_common.h"
#include "frontend/config.h"
#include "frontend/launch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16)
        return 0;
    npu_diag d = { 0 };
    cfg_machine m;
    if (cfg_load_json_text(&m, (const char *)data, size, "fuzz.json", &d) == NPU_OK) {
        char *dump = cfg_dump_json(&m);
        if (dump) {
            cfg_machine m2;
            if (cfg_load_json_text(&m2, dump, strlen(dump), "dump.json", &d) != NPU_OK)
                abort();  /* a dumped config must load back */
            npu_free(dump);
        }
    }
    launch_desc l;
    memset(&l, 0, sizeof l);
    launch_load_json_text(&l, (const char *)data, size, "fuzz.json", "/nonexistent", &d);
    launch_free(&l);
    return 0;
}
