//! The adapter: reads each request strictly, refuses what it cannot do
//! (nothing sent, no completion), and answers accepted calls exactly once,
//! from a thread of its own, through the simulated provider.
//!
//! Scenarios, in an authorize request's `instrument.scenario`, to watch the
//! host survive this adapter's own failures, honoured only when the config
//! says `"scenarios": true` (any other scenario is ignored):
//! - `panic_in_invoke`: invoke() panics before anything is sent; the
//!   boundary catches it and refuses the call with GW_E_INTERNAL.
//! - `panic_after_charge`: the worker panics after the provider charged, as
//!   if reading the provider's answer failed; the boundary catches it and
//!   completes the call with GW_E_OUTCOME_UNKNOWN, so the host keeps the
//!   payment pending and reconciles it with verify, which finds the charge.

use crate::abi::*;
use crate::boundary::{panic_message, Host};
use crate::json::{error_document, Value};
use crate::provider::{Claim, Provider, Request};
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

pub const ID: &str = "example-rust";
pub const VERSION: &str = "1.0.0";
const METHOD: &str = "visa";
const CURRENCIES: [&str; 4] = ["SAR", "KWD", "JPY", "EUR"];
/// Calls answered at once; more are refused with GW_E_BUSY (retry later).
const IN_FLIGHT_CAPACITY: usize = 1024;
const MAX_KEY_BYTES: usize = 255;

/// The describe() document: what the manifest may claim.
pub fn description() -> String {
    format!(
        "{{\"id\":\"{}\",\"version\":\"{}\",\"methods\":[\"{}\"],\"operations\":[\"authorize\",\"verify\",\"capture\",\"refund\",\"void\"],\"currencies\":[{}]}}",
        ID,
        VERSION,
        METHOD,
        CURRENCIES.iter().map(|c| format!("\"{}\"", c)).collect::<Vec<_>>().join(",")
    )
}

/// The configuration (the manifest's `config`).
pub struct Config {
    pub decline_above: i64,
    /// Whether the panic scenarios below are honoured (the shipped test
    /// manifest turns them on; off, `instrument.scenario` is ignored).
    pub scenarios: bool,
}

impl Config {
    pub fn parse(bytes: &[u8]) -> Result<Config, String> {
        let config = Value::parse(bytes).map_err(|e| format!("{}: config is not valid JSON: {}", ID, e))?;
        if !config.is_object() {
            return Err(format!("{}: config must be a JSON object", ID));
        }
        if let Value::Object(members) = &config {
            if let Some((name, _)) = members.iter().find(|(name, _)| name != "decline_above" && name != "scenarios") {
                return Err(format!("{}: config.{} is not a member this adapter knows (decline_above, scenarios)", ID, name));
            }
        }
        let scenarios = match config.get("scenarios") {
            None => false,
            Some(Value::Bool(on)) => *on,
            Some(_) => return Err(format!("{}: config.scenarios must be true or false", ID)),
        };
        let decline_above = match config.get("decline_above") {
            None => 1_000_000,
            Some(value) => match value.as_i64() {
                Some(n) if n >= 0 => n,
                _ => return Err(format!("{}: config.decline_above must be a non-negative integer (minor units)", ID)),
            },
        };
        Ok(Config { decline_above, scenarios })
    }
}

pub struct Adapter {
    host: Host,
    provider: Provider,
    scenarios: bool,
    /// Accepted calls not yet completed, and whether each was cancelled.
    in_flight: Mutex<HashMap<u64, bool>>,
}

/// A refusal: the status invoke() returns, and what the log says.
struct Refusal(Status, String);

fn invalid(message: String) -> Refusal {
    Refusal(GW_E_INVALID_REQUEST, message)
}

fn required_str<'a>(request: &'a Value, name: &str) -> Result<&'a str, Refusal> {
    match request.get(name) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s),
        Some(_) => Err(invalid(format!("{} must be a non-empty string", name))),
        None => Err(invalid(format!("{} is required", name))),
    }
}

fn money(request: &Value) -> Result<(i64, String), Refusal> {
    let amount = request.get("amount").filter(|a| a.is_object()).ok_or_else(|| invalid("amount must be an object".into()))?;
    let value = amount.get("value").and_then(Value::as_i64).filter(|v| *v > 0)
        .ok_or_else(|| invalid("amount.value must be a positive integer (minor units)".into()))?;
    let currency = amount.get("currency").and_then(Value::as_str).filter(|c| CURRENCIES.contains(c))
        .ok_or_else(|| invalid(format!("amount.currency must be one of {}", CURRENCIES.join(", "))))?;
    Ok((value, currency.to_string()))
}

fn idempotency_key(request: &Value) -> Result<String, Refusal> {
    let key = required_str(request, "idempotencyKey")?;
    if key.len() > MAX_KEY_BYTES {
        return Err(invalid(format!("idempotencyKey is longer than {} bytes", MAX_KEY_BYTES)));
    }
    Ok(key.to_string())
}

/// The provider request an operation's document asks for, with its key.
fn provider_request(operation: Operation, request: &Value) -> Result<(String, Request, Option<String>), Refusal> {
    match operation {
        GW_OP_AUTHORIZE => {
            let payment_id = required_str(request, "paymentId")?.to_string();
            required_str(request, "orderId")?;
            let method = required_str(request, "method")?;
            if method != METHOD {
                return Err(invalid(format!("method must be \"{}\"", METHOD)));
            }
            let manual = match request.get("capture").and_then(Value::as_str) {
                Some("automatic") => false,
                Some("manual") => true,
                _ => return Err(invalid("capture must be \"automatic\" or \"manual\"".into())),
            };
            let (value, currency) = money(request)?;
            let scenario = match request.get("instrument") {
                None | Some(Value::Null) => None,
                Some(instrument @ Value::Object(_)) => match instrument.get("scenario") {
                    None | Some(Value::Null) => None,
                    // Other scenarios (a check's "success") are the simulation's default.
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(_) => return Err(invalid("instrument.scenario must be a string".into())),
                },
                Some(_) => return Err(invalid("instrument must be an object".into())),
            };
            let key = idempotency_key(request)?;
            Ok((key, Request::Authorize { payment_id, method: method.to_string(), value, currency, manual }, scenario))
        }
        GW_OP_CAPTURE | GW_OP_REFUND => {
            required_str(request, "paymentId")?;
            let reference = required_str(request, "providerReference")?.to_string();
            let (value, currency) = money(request)?;
            let key = idempotency_key(request)?;
            let request = if operation == GW_OP_CAPTURE {
                Request::Capture { reference, value, currency }
            } else {
                Request::Refund { reference, value, currency }
            };
            Ok((key, request, None))
        }
        _ => {
            required_str(request, "paymentId")?;
            let reference = required_str(request, "providerReference")?.to_string();
            let key = idempotency_key(request)?;
            Ok((key, Request::Void { reference }, None))
        }
    }
}

fn operation_name(operation: Operation) -> &'static str {
    match operation {
        GW_OP_AUTHORIZE => "authorize",
        GW_OP_VERIFY => "verify",
        GW_OP_CAPTURE => "capture",
        GW_OP_REFUND => "refund",
        GW_OP_VOID => "void",
        _ => "an unknown operation",
    }
}

impl Adapter {
    pub fn new(host: Host, config: Config) -> Adapter {
        host.log(GW_LOG_INFO, &format!("{} instance created (decline_above={} minor units)", ID, config.decline_above));
        Adapter { host, provider: Provider::new(config.decline_above), scenarios: config.scenarios, in_flight: Mutex::new(HashMap::new()) }
    }

    /// One line in the host's log, attributed to this adapter.
    pub fn log(&self, level: LogLevel, message: &str) {
        self.host.log(level, message);
    }

    fn in_flight(&self) -> std::sync::MutexGuard<'_, HashMap<u64, bool>> {
        self.in_flight.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// invoke(): GW_OK when the call is accepted (completed exactly once,
    /// maybe before this returns), otherwise the refusal (no completion).
    pub fn invoke(self: &Arc<Self>, call_id: u64, operation: Operation, bytes: &[u8]) -> Status {
        match self.start(call_id, operation, bytes) {
            Ok(()) => GW_OK,
            Err(Refusal(status, message)) => {
                if status != GW_E_UNSUPPORTED {
                    self.host.log(GW_LOG_WARNING, &format!("{} call {} refused: {}", operation_name(operation), call_id, message));
                }
                status
            }
        }
    }

    fn start(self: &Arc<Self>, call_id: u64, operation: Operation, bytes: &[u8]) -> Result<(), Refusal> {
        if ![GW_OP_AUTHORIZE, GW_OP_VERIFY, GW_OP_CAPTURE, GW_OP_REFUND, GW_OP_VOID].contains(&operation) {
            return Err(Refusal(GW_E_UNSUPPORTED, String::new()));
        }
        if bytes.len() > MAX_REQUEST_BYTES {
            return Err(invalid(format!("the request is over {} bytes", MAX_REQUEST_BYTES)));
        }
        let request = Value::parse(bytes).map_err(|e| invalid(format!("the request is not valid JSON: {}", e)))?;
        if !request.is_object() {
            return Err(invalid("the request is not a JSON object".into()));
        }
        if operation == GW_OP_VERIFY {
            let payment_id = required_str(&request, "paymentId")?;
            let reference = match request.get("providerReference") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.as_str()),
                Some(_) => return Err(invalid("providerReference must be a string or null".into())),
            };
            // Answered at once, before invoke() returns (the ABI allows it).
            let answer = self.provider.verify(reference, payment_id).map_err(invalid)?;
            self.host.complete(call_id, GW_OK, answer.as_bytes());
            return Ok(());
        }
        let (key, provider_request, scenario) = provider_request(operation, &request)?;
        let scenario = if self.scenarios { scenario } else { None };
        if scenario.as_deref() == Some("panic_in_invoke") {
            panic!("{}: the scenario panic_in_invoke panics inside invoke(), before anything is sent", ID);
        }
        match self.provider.claim(&key, &provider_request) {
            Claim::New => {}
            Claim::Answered(answer) => {
                self.host.complete(call_id, GW_OK, answer.as_bytes());
                return Ok(());
            }
            Claim::InProgress => {
                let message = error_document("the first request under this idempotency key is still in progress");
                self.host.complete(call_id, GW_E_OUTCOME_UNKNOWN, message.as_bytes());
                return Ok(());
            }
            Claim::OtherRequest => {
                return Err(invalid("its idempotency key was already used with another request".into()));
            }
        }
        {
            let mut in_flight = self.in_flight();
            if in_flight.len() >= IN_FLIGHT_CAPACITY {
                drop(in_flight);
                self.provider.release(&key, &provider_request);
                return Err(Refusal(GW_E_BUSY, format!("{} calls are already in flight", IN_FLIGHT_CAPACITY)));
            }
            in_flight.insert(call_id, false);
        }
        let adapter = Arc::clone(self);
        let (worker_key, worker_request) = (key.clone(), provider_request.clone());
        let spawned = std::thread::Builder::new().name(format!("{}-{}", ID, call_id))
            .spawn(move || adapter.work(call_id, operation, worker_key, worker_request, scenario));
        if let Err(error) = spawned {
            self.in_flight().remove(&call_id);
            self.provider.release(&key, &provider_request);
            return Err(Refusal(GW_E_BUSY, format!("no thread for the call: {}", error)));
        }
        Ok(())
    }

    /// A fresh provider reference: "exr_" and 16 hex digits of the host's random bytes.
    fn new_reference(&self) -> Option<String> {
        let mut random = [0u8; 8];
        if !self.host.random(&mut random) {
            return None;
        }
        Some(format!("exr_{}", random.iter().map(|b| format!("{:02x}", b)).collect::<String>()))
    }

    /// The call's own thread: asks the provider, then completes the call; the
    /// completion is the last thing it does with the instance.
    fn work(&self, call_id: u64, operation: Operation, key: String, request: Request, scenario: Option<String>) {
        let started = self.host.monotonic_ns();
        let mut acted = false;
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            if self.in_flight().get(&call_id) == Some(&true) {
                // Cancelled before the provider was asked: stop here.
                self.provider.release(&key, &request);
                return (GW_E_CANCELLED, error_document("cancelled before anything was sent"));
            }
            let reference = match self.new_reference() {
                Some(reference) => reference,
                None => {
                    self.provider.release(&key, &request);
                    return (GW_E_INTERNAL, error_document("no secure random bytes for the provider reference"));
                }
            };
            // From here the provider may act: whatever happens next, the
            // outcome is never "nothing sent", and the key is kept.
            acted = true;
            let answer = self.provider.act(&key, &request, &reference);
            if scenario.as_deref() == Some("panic_after_charge") {
                panic!("{}: the scenario panic_after_charge panics after the provider charged", ID);
            }
            (GW_OK, answer)
        }));
        let (status, result) = match outcome {
            Ok(answered) => answered,
            Err(payload) => {
                self.host.log(GW_LOG_ERROR, &format!("{} call {} panicked: {}", operation_name(operation), call_id, panic_message(&payload)));
                if acted {
                    // The provider may have acted: the outcome is unknown (never "nothing sent").
                    (GW_E_OUTCOME_UNKNOWN, error_document("the adapter failed after the provider was asked"))
                } else {
                    self.provider.release(&key, &request);
                    (GW_E_INTERNAL, error_document("the adapter failed before anything was sent"))
                }
            }
        };
        self.in_flight().remove(&call_id);
        let elapsed_us = self.host.monotonic_ns().saturating_sub(started) / 1000;
        self.host.log(GW_LOG_DEBUG, &format!("{} call {} answered with status {} in {} us", operation_name(operation), call_id, status, elapsed_us));
        self.host.complete(call_id, status, result.as_bytes());
    }

    /// cancel(): a call not yet sent to the provider stops there; one already
    /// answered is completed with its answer. Unknown ids are ignored.
    pub fn cancel(&self, call_id: u64) {
        if let Some(cancelled) = self.in_flight().get_mut(&call_id) {
            *cancelled = true;
        }
    }
}
