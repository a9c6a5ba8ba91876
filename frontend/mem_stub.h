/* mem_stub.h — TEMPORARY stand-in for memmodel/mem.h until the memmodel
 * part commits it: the four mem_config calls the machine config delegates
 * the "memory" object to, with an opaque mem_config. It accepts only an
 * empty "memory" object and no memory.* keys. Delete once config.h includes
 * memmodel/mem.h. */
#ifndef FRONTEND_MEM_STUB_H
#define FRONTEND_MEM_STUB_H

#include <string.h>
#include <cJSON.h>
#include "isa/npu_util.h"

typedef struct mem_config { unsigned char opaque_[256]; } mem_config;

static inline void mem_config_default(mem_config *c) { memset(c, 0, sizeof *c); }

static inline npu_status mem_config_parse(const cJSON *obj, const char *where,
                                          mem_config *c, npu_diag *d)
{
    (void)c;
    if (!cJSON_IsObject(obj))
        return npu_errf(d, NPU_EINVAL, "%s: memory: expected an object", where);
    if (obj->child)
        return npu_errf(d, NPU_EUNSUPP, "%s: memory.%s: the memory model is not in this build",
                        where, obj->child->string ? obj->child->string : "?");
    return NPU_OK;
}

static inline npu_status mem_config_set(mem_config *c, const char *key, const char *value,
                                        npu_diag *d)
{
    (void)c; (void)value;
    return npu_errf(d, NPU_EINVAL, "memory.%s: unknown config key (memory model not in this build)",
                    key);
}

static inline cJSON *mem_config_dump(const mem_config *c)
{
    (void)c;
    return cJSON_CreateObject();
}

#endif
