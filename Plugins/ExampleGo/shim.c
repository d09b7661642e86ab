/* example-go's C side: the adapter table, the one exported entry point, and
 * calls into the host's function pointers (Go cannot call a C function
 * pointer itself). Everything else is in adapter.go, built with it by cgo
 * (go build -buildmode=c-shared). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "gateway_abi.h"
#include "_cgo_export.h"

/* Whether the host's table has member m: within its struct_size and not NULL
 * (the ABI's rule: a member beyond struct_size, or a NULL one, means "not
 * supported"; an older host's table is shorter). */
#define HOST_HAS(host, m)                                                                             \
    ((host) != NULL && (size_t)(host)->struct_size >= offsetof(gw_host_api, m) + sizeof((host)->m) && \
     (host)->m != NULL)

/* Whether member m of the host's negotiation struct lies within its size. */
#define NEGOTIATION_HAS(n, m) ((size_t)(n)->struct_size >= offsetof(gw_negotiation, m) + sizeof((n)->m))

static gw_status shim_create(const gw_host_api *host, const uint8_t *config, size_t config_len,
                             gw_instance **out_instance, uint8_t **out_error, size_t *out_error_len) {
    if (host == NULL || out_instance == NULL) return GW_E_INVALID_REQUEST;
    char *message = NULL;
    size_t message_len = 0;
    uintptr_t handle = goCreate((void *)host, (void *)config, config_len, &message, &message_len);
    if (handle == 0) {
        if (out_error != NULL && out_error_len != NULL && message != NULL) {
            *out_error = (uint8_t *)message;
            *out_error_len = message_len;
        } else {
            free(message);
        }
        return GW_E_INVALID_REQUEST;
    }
    *out_instance = (gw_instance *)handle;
    return GW_OK;
}

static gw_status shim_describe(gw_instance *instance, uint8_t **out_json, size_t *out_len) {
    (void)instance;
    static const char text[] = "{\"id\":\"example-go\",\"version\":\"1.0.0\",\"methods\":[\"visa\"],"
                               "\"operations\":[\"authorize\",\"verify\",\"capture\",\"refund\",\"void\"],"
                               "\"currencies\":[\"SAR\",\"KWD\",\"JPY\",\"EUR\"]}";
    *out_json = malloc(sizeof text - 1);
    if (*out_json == NULL) return GW_E_INTERNAL;
    memcpy(*out_json, text, sizeof text - 1);
    *out_len = sizeof text - 1;
    return GW_OK;
}

static gw_status shim_invoke(gw_instance *instance, uint64_t call_id, gw_operation operation,
                             const uint8_t *request, size_t request_len) {
    return goInvoke((uintptr_t)instance, call_id, operation, (void *)request, request_len);
}

static void shim_cancel(gw_instance *instance, uint64_t call_id) { goCancel((uintptr_t)instance, call_id); }

static void shim_destroy(gw_instance *instance) { goDestroy((uintptr_t)instance); }

static void shim_free(void *pointer) { free(pointer); }

static const gw_adapter_api table = {
    sizeof(gw_adapter_api), 0, "example-go", "1.0.0",
    shim_create, shim_describe, shim_invoke, shim_cancel, shim_destroy, shim_free,
};

GW_EXPORT gw_status gw_adapter_entry(gw_negotiation *negotiation) {
    if (negotiation == NULL) return GW_E_INVALID_REQUEST;
    /* Each member written only as far as the host's struct reaches. */
    if (NEGOTIATION_HAS(negotiation, adapter_abi_major)) negotiation->adapter_abi_major = GW_ABI_VERSION_MAJOR;
    if (NEGOTIATION_HAS(negotiation, adapter_abi_minor)) negotiation->adapter_abi_minor = 0;
    if (NEGOTIATION_HAS(negotiation, adapter_api)) negotiation->adapter_api = &table;
    if (!NEGOTIATION_HAS(negotiation, adapter_api)) return GW_E_VERSION; /* a struct this small is not ABI 1 */
    return negotiation->host_abi_major == GW_ABI_VERSION_MAJOR ? GW_OK : GW_E_VERSION;
}

void gw_go_complete(void *host, uint64_t call_id, gw_status status, const void *result, size_t result_len) {
    const gw_host_api *api = (const gw_host_api *)host;
    if (HOST_HAS(api, complete)) api->complete(call_id, status, (const uint8_t *)result, result_len);
}

void gw_go_log(void *host, int32_t level, const void *message, size_t message_len) {
    const gw_host_api *api = (const gw_host_api *)host;
    if (HOST_HAS(api, log)) api->log(level, (const char *)message, message_len);
}
