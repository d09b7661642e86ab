/* libffi, as the host's bridge sees it. The ffi_type globals are reached
 * through accessors so Swift never touches mutable C globals directly. */
#include <ffi.h>

static inline ffi_type *gw_ffi_type_void(void) { return &ffi_type_void; }
static inline ffi_type *gw_ffi_type_pointer(void) { return &ffi_type_pointer; }
static inline ffi_type *gw_ffi_type_sint32(void) { return &ffi_type_sint32; }
static inline ffi_type *gw_ffi_type_uint32(void) { return &ffi_type_uint32; }
static inline ffi_type *gw_ffi_type_sint64(void) { return &ffi_type_sint64; }
static inline ffi_type *gw_ffi_type_uint64(void) { return &ffi_type_uint64; }
static inline ffi_abi gw_ffi_default_abi(void) { return FFI_DEFAULT_ABI; }
