//! The boundary: the only module with `unsafe`. It turns the C calls of
//! `gateway_abi.h` into safe Rust and back, and it is where every panic
//! stops: each function the host calls runs its body under `catch_unwind`
//! and turns a panic into a status (a panic never unwinds into the host,
//! which would be undefined behaviour). A panic hook keeps panics off the
//! host's stderr; the catching site logs them through the host instead.

use crate::abi::*;
use crate::adapter::{self, Adapter, Config};
use std::any::Any;
use std::cell::RefCell;
use std::os::raw::{c_char, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::{Arc, Once};

extern "C" {
    // The C library's allocator: the host hands the buffers this adapter
    // returns (describe's document, create's error) back through free().
    fn malloc(size: usize) -> *mut c_void;
    fn free(ptr: *mut c_void);
}

/// The host's services for one instance. The table stays valid from
/// create() until destroy() returns, and its functions may be called from
/// any thread: so a `Host` may be shared across threads.
pub struct Host {
    api: *const HostApi,
}

unsafe impl Send for Host {}
unsafe impl Sync for Host {}

impl Host {
    /// Whether the host's table reaches `end` bytes (members beyond its
    /// struct_size are treated as NULL).
    fn covers(&self, end: usize) -> bool {
        unsafe { (*self.api).struct_size as usize >= end }
    }

    pub fn log(&self, level: LogLevel, message: &str) {
        if !self.covers(HOST_LOG_END) {
            return;
        }
        if let Some(log) = unsafe { ptr::addr_of!((*self.api).log).read() } {
            unsafe { log(level, message.as_ptr() as *const c_char, message.len()) }
        }
    }

    pub fn monotonic_ns(&self) -> u64 {
        if !self.covers(HOST_CLOCK_MONOTONIC_END) {
            return 0;
        }
        match unsafe { ptr::addr_of!((*self.api).clock_monotonic_ns).read() } {
            Some(clock) => unsafe { clock() },
            None => 0,
        }
    }

    /// Fills `out` from the host's secure generator; false when it cannot.
    pub fn random(&self, out: &mut [u8]) -> bool {
        if !self.covers(HOST_RANDOM_BYTES_END) {
            return false;
        }
        match unsafe { ptr::addr_of!((*self.api).random_bytes).read() } {
            Some(random_bytes) => unsafe { random_bytes(out.as_mut_ptr(), out.len()) == GW_OK },
            None => false,
        }
    }

    fn can_complete(&self) -> bool {
        self.covers(HOST_COMPLETE_END) && unsafe { ptr::addr_of!((*self.api).complete).read() }.is_some()
    }

    /// Reports the end of an accepted call (exactly once per call).
    pub fn complete(&self, call_id: u64, status: Status, result: &[u8]) {
        if let Some(complete) = unsafe { ptr::addr_of!((*self.api).complete).read() } {
            unsafe { complete(call_id, status, result.as_ptr(), result.len()) }
        }
    }
}

/// What the host holds as `gw_instance*`.
struct InstanceBox {
    adapter: Arc<Adapter>,
}

thread_local! {
    /// The last panic's text on this thread, left by the hook for the catching site.
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

static QUIET_PANICS: Once = Once::new();

fn install_panic_hook() {
    QUIET_PANICS.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let text = info.to_string();
            let _ = LAST_PANIC.try_with(|last| *last.borrow_mut() = Some(text));
        }));
    });
}

/// The text of a caught panic: where and what, from the hook, or its payload.
pub fn panic_message(payload: &Box<dyn Any + Send>) -> String {
    if let Some(text) = LAST_PANIC.try_with(|last| last.borrow_mut().take()).ok().flatten() {
        return text;
    }
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic".to_string()
    }
}

/// A borrowed buffer as a slice (NULL with length 0 is the empty slice).
unsafe fn borrowed<'a>(bytes: *const u8, len: usize) -> Option<&'a [u8]> {
    if len == 0 {
        Some(&[])
    } else if bytes.is_null() {
        None
    } else {
        Some(std::slice::from_raw_parts(bytes, len))
    }
}

/// A copy of `text` in a buffer from malloc, for the host to free().
unsafe fn handed_over(text: &str, out: *mut *mut u8, out_len: *mut usize) -> bool {
    if out.is_null() || out_len.is_null() {
        return false;
    }
    let buffer = malloc(text.len().max(1)) as *mut u8;
    if buffer.is_null() {
        return false;
    }
    ptr::copy_nonoverlapping(text.as_ptr(), buffer, text.len());
    *out = buffer;
    *out_len = text.len();
    true
}

unsafe extern "C" fn create(host: *const HostApi, config: *const u8, config_len: usize, out_instance: *mut *mut Instance,
                            out_error: *mut *mut u8, out_error_len: *mut usize) -> Status {
    let refuse = |status: Status, message: &str| -> Status {
        let _ = handed_over(message, out_error, out_error_len);
        status
    };
    if host.is_null() || out_instance.is_null() {
        return GW_E_INVALID_REQUEST;
    }
    let host = Host { api: host };
    if !host.can_complete() {
        return refuse(GW_E_INTERNAL, &format!("{}: the host services table has no complete()", adapter::ID));
    }
    let config = match borrowed(config, config_len) {
        Some(config) => config,
        None => return refuse(GW_E_INVALID_REQUEST, &format!("{}: config is NULL", adapter::ID)),
    };
    let made = catch_unwind(AssertUnwindSafe(|| Config::parse(config).map(|config| Adapter::new(host, config))));
    match made {
        Ok(Ok(adapter)) => {
            let instance = Box::new(InstanceBox { adapter: Arc::new(adapter) });
            *out_instance = Box::into_raw(instance) as *mut Instance;
            GW_OK
        }
        Ok(Err(message)) => refuse(GW_E_INVALID_REQUEST, &message),
        Err(payload) => refuse(GW_E_INTERNAL, &format!("{}: create() panicked: {}", adapter::ID, panic_message(&payload))),
    }
}

unsafe fn instance<'a>(instance: *mut Instance) -> Option<&'a InstanceBox> {
    (instance as *const InstanceBox).as_ref()
}

unsafe extern "C" fn describe(_instance: *mut Instance, out_json: *mut *mut u8, out_len: *mut usize) -> Status {
    match catch_unwind(adapter::description) {
        Ok(_) if out_json.is_null() || out_len.is_null() => GW_E_INVALID_REQUEST,
        Ok(document) if handed_over(&document, out_json, out_len) => GW_OK,
        Ok(_) => GW_E_INTERNAL, // no memory for the copy
        Err(_) => GW_E_INTERNAL,
    }
}

unsafe extern "C" fn invoke(instance_ptr: *mut Instance, call_id: u64, operation: Operation, request: *const u8, request_len: usize) -> Status {
    let (instance, request) = match (instance(instance_ptr), borrowed(request, request_len)) {
        (Some(instance), Some(request)) => (instance, request),
        _ => return GW_E_INVALID_REQUEST,
    };
    // Adapter::invoke hands the call to its thread as its last step, so a
    // panic caught here happened before anything was sent or owed.
    match catch_unwind(AssertUnwindSafe(|| instance.adapter.invoke(call_id, operation, request))) {
        Ok(status) => status,
        Err(payload) => {
            instance.adapter_log_panic(call_id, &payload);
            GW_E_INTERNAL
        }
    }
}

impl InstanceBox {
    fn adapter_log_panic(&self, call_id: u64, payload: &Box<dyn Any + Send>) {
        let message = format!("invoke of call {} panicked (refused, nothing sent): {}", call_id, panic_message(payload));
        let _ = catch_unwind(AssertUnwindSafe(|| self.adapter.log(GW_LOG_ERROR, &message)));
    }
}

unsafe extern "C" fn cancel(instance_ptr: *mut Instance, call_id: u64) {
    if let Some(instance) = instance(instance_ptr) {
        let _ = catch_unwind(AssertUnwindSafe(|| instance.adapter.cancel(call_id)));
    }
}

unsafe extern "C" fn destroy(instance_ptr: *mut Instance) {
    if !instance_ptr.is_null() {
        // Every call completed before the host calls this; threads that
        // completed the last calls may still hold the adapter for a moment
        // (never the host's table), so the Arc frees it after them.
        let _ = catch_unwind(AssertUnwindSafe(|| drop(Box::from_raw(instance_ptr as *mut InstanceBox))));
    }
}

unsafe extern "C" fn release(buffer: *mut c_void) {
    free(buffer)
}

/// The adapter's table: static storage, as the header requires.
struct Table(AdapterApi);
unsafe impl Sync for Table {}

static TABLE: Table = Table(AdapterApi {
    struct_size: std::mem::size_of::<AdapterApi>() as u32,
    reserved0: 0,
    // adapter::ID and adapter::VERSION, NUL-terminated (a static needs the literals).
    id: b"example-rust\0".as_ptr() as *const c_char,
    version: b"1.0.0\0".as_ptr() as *const c_char,
    create: Some(create),
    describe: Some(describe),
    invoke: Some(invoke),
    cancel: Some(cancel),
    destroy: Some(destroy),
    free: Some(release),
});

/// The one exported symbol: negotiates the version and hands over the table.
#[no_mangle]
pub unsafe extern "C" fn gw_adapter_entry(negotiation: *mut Negotiation) -> Status {
    install_panic_hook();
    if negotiation.is_null() {
        return GW_E_INVALID_REQUEST;
    }
    let size = (*negotiation).struct_size as usize;
    if size < NEGOTIATION_ADAPTER_API_END {
        if size >= NEGOTIATION_ADAPTER_MINOR_END {
            (*negotiation).adapter_abi_major = ABI_MAJOR;
            (*negotiation).adapter_abi_minor = ABI_MINOR;
        }
        return GW_E_VERSION; // a struct this small is not ABI 1
    }
    (*negotiation).adapter_abi_major = ABI_MAJOR;
    (*negotiation).adapter_abi_minor = ABI_MINOR;
    (*negotiation).adapter_api = &TABLE.0;
    if (*negotiation).host_abi_major == ABI_MAJOR { GW_OK } else { GW_E_VERSION }
}
