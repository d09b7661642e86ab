/* Compile-time guards on the ABI's layout: the tables must keep these offsets
 * for as long as the major version is 1, on every 64-bit platform we build for.
 * If one of these fails, a change broke the ABI. */
#include "gateway_abi.h"

_Static_assert(sizeof(void *) == 8, "gateway ABI v1 is defined for 64-bit targets");
_Static_assert(offsetof(gw_host_api, log) == 16, "gw_host_api.log moved");
_Static_assert(offsetof(gw_host_api, complete) == 64, "gw_host_api.complete moved");
/* v1.0 ended at 72 bytes; 1.1 appended wallet_decrypt (adapters check struct_size). */
_Static_assert(offsetof(gw_host_api, wallet_decrypt) == 72, "gw_host_api.wallet_decrypt moved");
_Static_assert(sizeof(gw_host_api) == 80, "gw_host_api v1.1 size changed");
_Static_assert(offsetof(gw_adapter_api, id) == 8, "gw_adapter_api.id moved");
_Static_assert(offsetof(gw_adapter_api, create) == 24, "gw_adapter_api.create moved");
_Static_assert(offsetof(gw_adapter_api, free) == 64, "gw_adapter_api.free moved");
_Static_assert(sizeof(gw_adapter_api) == 72, "gw_adapter_api v1.0 size changed");
_Static_assert(offsetof(gw_negotiation, adapter_api) == 24, "gw_negotiation.adapter_api moved");
_Static_assert(sizeof(gw_negotiation) == 32, "gw_negotiation v1.0 size changed");
