//! The C declarations of `gateway_abi.h` (ABI 1.1), written by hand from the
//! header: the tables, the status codes, the operations and the limits. Plain
//! data only; the functions that cross the boundary are in `boundary.rs`.
//!
//! Every table is `#[repr(C)]` and its size is asserted at compile time
//! against the sizes the header gives (ABI v1 is defined for 64-bit targets).

use std::os::raw::{c_char, c_void};

pub const ABI_MAJOR: u32 = 1;
/// The minor this adapter implements: 1.1 (it is asked for `instruments`,
/// which it refuses with `GW_E_UNSUPPORTED`, since describe does not list it).
pub const ABI_MINOR: u32 = 1;

pub type Status = i32;
pub const GW_OK: Status = 0;
pub const GW_E_INVALID_REQUEST: Status = 1;
pub const GW_E_UNSUPPORTED: Status = 2;
pub const GW_E_VERSION: Status = 3;
pub const GW_E_INTERNAL: Status = 4;
pub const GW_E_CANCELLED: Status = 5;
pub const GW_E_BUSY: Status = 7;
pub const GW_E_OUTCOME_UNKNOWN: Status = 10;

pub type Operation = i32;
pub const GW_OP_AUTHORIZE: Operation = 1;
pub const GW_OP_VERIFY: Operation = 3;
pub const GW_OP_CAPTURE: Operation = 4;
pub const GW_OP_REFUND: Operation = 5;
pub const GW_OP_VOID: Operation = 6;

pub type LogLevel = i32;
pub const GW_LOG_DEBUG: LogLevel = 1;
pub const GW_LOG_INFO: LogLevel = 2;
pub const GW_LOG_WARNING: LogLevel = 3;
pub const GW_LOG_ERROR: LogLevel = 4;

/// GW_MAX_REQUEST_BYTES: the host never sends more; refuse more anyway.
pub const MAX_REQUEST_BYTES: usize = 1 << 20;

pub type HttpCallback = unsafe extern "C" fn(user_data: *mut c_void, status: Status, response: *const u8, response_len: usize);

/// `gw_host_api`: the services the host lends one instance.
#[repr(C)]
pub struct HostApi {
    pub struct_size: u32,
    pub abi_major: u32,
    pub abi_minor: u32,
    pub reserved0: u32,
    pub log: Option<unsafe extern "C" fn(level: LogLevel, message: *const c_char, message_len: usize)>,
    pub http_send: Option<unsafe extern "C" fn(request: *const u8, request_len: usize, callback: HttpCallback, user_data: *mut c_void)>,
    pub secret_get: Option<unsafe extern "C" fn(name: *const c_char, name_len: usize, out: *mut u8, out_capacity: usize, out_len: *mut usize) -> Status>,
    pub clock_unix_ns: Option<unsafe extern "C" fn() -> i64>,
    pub clock_monotonic_ns: Option<unsafe extern "C" fn() -> u64>,
    pub random_bytes: Option<unsafe extern "C" fn(out: *mut u8, len: usize) -> Status>,
    pub complete: Option<unsafe extern "C" fn(call_id: u64, status: Status, result: *const u8, result_len: usize)>,
    pub wallet_decrypt: Option<unsafe extern "C" fn(request: *const u8, request_len: usize, callback: HttpCallback, user_data: *mut c_void)>,
}

/// Byte offsets of the `gw_host_api` members this adapter uses: a member is
/// read only when the host's `struct_size` covers it (the versioning rule).
pub const HOST_LOG_END: usize = 24;
pub const HOST_CLOCK_MONOTONIC_END: usize = 56;
pub const HOST_RANDOM_BYTES_END: usize = 64;
pub const HOST_COMPLETE_END: usize = 72;

/// The adapter's opaque instance, as the host sees it.
#[repr(C)]
pub struct Instance {
    _private: [u8; 0],
}

/// `gw_adapter_api`: this adapter's function table.
#[repr(C)]
pub struct AdapterApi {
    pub struct_size: u32,
    pub reserved0: u32,
    pub id: *const c_char,
    pub version: *const c_char,
    pub create: Option<
        unsafe extern "C" fn(host: *const HostApi, config: *const u8, config_len: usize, out_instance: *mut *mut Instance,
                             out_error: *mut *mut u8, out_error_len: *mut usize) -> Status,
    >,
    pub describe: Option<unsafe extern "C" fn(instance: *mut Instance, out_json: *mut *mut u8, out_len: *mut usize) -> Status>,
    pub invoke: Option<
        unsafe extern "C" fn(instance: *mut Instance, call_id: u64, operation: Operation, request: *const u8, request_len: usize) -> Status,
    >,
    pub cancel: Option<unsafe extern "C" fn(instance: *mut Instance, call_id: u64)>,
    pub destroy: Option<unsafe extern "C" fn(instance: *mut Instance)>,
    pub free: Option<unsafe extern "C" fn(ptr: *mut c_void)>,
}

/// `gw_negotiation`: filled by the host, answered by the adapter.
#[repr(C)]
pub struct Negotiation {
    pub struct_size: u32,
    pub host_abi_major: u32,
    pub host_abi_minor: u32,
    pub adapter_abi_major: u32,
    pub adapter_abi_minor: u32,
    pub reserved0: u32,
    pub adapter_api: *const AdapterApi,
}

/// Byte offsets of the `gw_negotiation` members the adapter writes.
pub const NEGOTIATION_ADAPTER_MINOR_END: usize = 20;
pub const NEGOTIATION_ADAPTER_API_END: usize = 32;

// The header's layouts (ABI v1, 64-bit targets): a mismatch fails the build.
const _: () = assert!(std::mem::size_of::<usize>() == 8);
const _: () = assert!(std::mem::size_of::<HostApi>() == 80);
const _: () = assert!(std::mem::size_of::<AdapterApi>() == 72);
const _: () = assert!(std::mem::size_of::<Negotiation>() == 32);
