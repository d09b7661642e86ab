//! The simulated provider: what a real adapter would reach through the
//! host's `http_send`. It keeps payments (authorized, captured, refunded,
//! voided amounts) and, like a real provider, one answer per idempotency key:
//! the same request under a used key gets the first answer, another request
//! under it is refused and changes nothing.
//!
//! Each operation is one step under one lock: the provider acts and records
//! its answer under the key together, so a replay finds the answer even when
//! it never reached the host. Bounded: past `CAPACITY` payments (or keys) the
//! oldest is forgotten, as a sandbox forgets old test payments.

use crate::json::ObjectWriter;
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

pub const CAPACITY: usize = 100_000;

/// The problem message for a reference this provider never issued.
const UNKNOWN_REFERENCE: &str = "example-rust does not know this provider reference";

/// A request for the provider: the fields that go to it, which are also what
/// makes two requests under one key "the same".
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    Authorize { payment_id: String, method: String, value: i64, currency: String, manual: bool },
    Capture { reference: String, value: i64, currency: String },
    Refund { reference: String, value: i64, currency: String },
    Void { reference: String },
}

/// What a key holds: the request it was first used for, and its answer once given.
struct KeyRecord {
    request: Request,
    answer: Option<String>,
}

/// Looking a key up before acting.
pub enum Claim {
    /// A new key, now reserved for this request: act with `Provider::act`.
    New,
    /// The same request was answered: here is that answer.
    Answered(String),
    /// The same request is being answered right now.
    InProgress,
    /// The key was used for another request: refuse, change nothing.
    OtherRequest,
}

struct Payment {
    reference: String,
    payment_id: String,
    currency: String,
    authorized: i64,
    manual: bool,
    captured: i64,
    refunded: i64,
    voided: bool,
    declined: bool,
    captures: u32,
    refunds: u32,
}

struct Ledger {
    keys: HashMap<(u8, String), KeyRecord>,
    key_order: VecDeque<(u8, String)>,
    payments: HashMap<String, Payment>,
    by_payment_id: HashMap<String, String>,
    payment_order: VecDeque<String>,
    /// Payment ids whose authorize is being answered (verify says "pending").
    authorizing: HashMap<String, u32>,
}

pub struct Provider {
    ledger: Mutex<Ledger>,
    decline_above: i64,
}

fn kind(request: &Request) -> u8 {
    match request {
        Request::Authorize { .. } => 1,
        Request::Capture { .. } => 4,
        Request::Refund { .. } => 5,
        Request::Void { .. } => 6,
    }
}

fn money(value: i64, currency: &str) -> ObjectWriter {
    ObjectWriter::new().integer("value", value).string("currency", currency)
}

fn problem(code: &str, message: &str, provider_code: Option<&str>) -> ObjectWriter {
    let mut problem = ObjectWriter::new().string("code", code).string("message", message).boolean("retryable", false)
        .boolean("safeToRetryElsewhere", false);
    if let Some(provider_code) = provider_code {
        problem = problem.string("providerCode", provider_code);
    }
    problem
}

fn failed(reference: Option<&str>, code: &str, message: &str) -> String {
    let mut result = ObjectWriter::new().string("status", "failed");
    if let Some(reference) = reference {
        result = result.string("providerReference", reference);
    }
    result.object("problem", problem(code, message, None)).finish()
}

/// Whether `reference` has the form this provider issues: "exr_" and 16 hex digits.
fn is_our_reference(reference: &str) -> bool {
    reference.len() == 20 && reference.starts_with("exr_") && reference[4..].bytes().all(|b| b.is_ascii_hexdigit())
}

impl Provider {
    pub fn new(decline_above: i64) -> Provider {
        Provider {
            ledger: Mutex::new(Ledger {
                keys: HashMap::new(),
                key_order: VecDeque::new(),
                payments: HashMap::new(),
                by_payment_id: HashMap::new(),
                payment_order: VecDeque::new(),
                authorizing: HashMap::new(),
            }),
            decline_above,
        }
    }

    fn ledger(&self) -> std::sync::MutexGuard<'_, Ledger> {
        // A panic while the lock was held leaves every record whole (each
        // change is one insert), so a poisoned lock is still usable.
        self.ledger.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Reserves `key` for `request`, or says what it already holds.
    pub fn claim(&self, key: &str, request: &Request) -> Claim {
        let mut ledger = self.ledger();
        let id = (kind(request), key.to_string());
        if let Some(record) = ledger.keys.get(&id) {
            return if record.request != *request {
                Claim::OtherRequest
            } else if let Some(answer) = &record.answer {
                Claim::Answered(answer.clone())
            } else {
                Claim::InProgress
            };
        }
        ledger.keys.insert(id.clone(), KeyRecord { request: request.clone(), answer: None });
        ledger.key_order.push_back(id);
        if let Request::Authorize { payment_id, .. } = request {
            *ledger.authorizing.entry(payment_id.clone()).or_insert(0) += 1;
        }
        while ledger.key_order.len() > CAPACITY {
            // Forget the oldest answered key (one still in progress stays).
            let oldest = match ledger.key_order.pop_front() {
                Some(oldest) => oldest,
                None => break,
            };
            if ledger.keys.get(&oldest).map_or(false, |record| record.answer.is_none()) {
                ledger.key_order.push_back(oldest);
                break;
            }
            ledger.keys.remove(&oldest);
        }
        Claim::New
    }

    /// Gives a claimed key up: nothing was sent for it (the call was refused).
    pub fn release(&self, key: &str, request: &Request) {
        let mut ledger = self.ledger();
        let id = (kind(request), key.to_string());
        if ledger.keys.get(&id).map_or(false, |record| record.answer.is_none()) {
            ledger.keys.remove(&id);
            ledger.key_order.retain(|k| *k != id);
            if let Request::Authorize { payment_id, .. } = request {
                Self::done_authorizing(&mut ledger, payment_id);
            }
        }
    }

    fn done_authorizing(ledger: &mut Ledger, payment_id: &str) {
        if let Some(count) = ledger.authorizing.get_mut(payment_id) {
            *count -= 1;
            if *count == 0 {
                ledger.authorizing.remove(payment_id);
            }
        }
    }

    /// The provider acts on a claimed request: moves the money, and records
    /// its answer under the key in the same step. `reference` is a fresh
    /// reference for a new payment.
    pub fn act(&self, key: &str, request: &Request, reference: &str) -> String {
        let mut ledger = self.ledger();
        let answer = match request {
            Request::Authorize { payment_id, method: _, value, currency, manual } => {
                let declined = *value > self.decline_above;
                ledger.payments.insert(reference.to_string(), Payment {
                    reference: reference.to_string(),
                    payment_id: payment_id.clone(),
                    currency: currency.clone(),
                    authorized: if declined { 0 } else { *value },
                    manual: *manual,
                    captured: if declined || *manual { 0 } else { *value },
                    refunded: 0,
                    voided: false,
                    declined,
                    captures: 0,
                    refunds: 0,
                });
                ledger.by_payment_id.insert(payment_id.clone(), reference.to_string());
                ledger.payment_order.push_back(reference.to_string());
                while ledger.payment_order.len() > CAPACITY {
                    if let Some(oldest) = ledger.payment_order.pop_front() {
                        if let Some(payment) = ledger.payments.remove(&oldest) {
                            if ledger.by_payment_id.get(&payment.payment_id) == Some(&oldest) {
                                ledger.by_payment_id.remove(&payment.payment_id);
                            }
                        }
                    }
                }
                Self::done_authorizing(&mut ledger, payment_id);
                let payment = &ledger.payments[reference];
                self.describe_payment(payment, true)
            }
            Request::Capture { reference, value, currency } => match ledger.payments.get_mut(reference) {
                None => failed(None, "unknown_payment", UNKNOWN_REFERENCE),
                Some(payment) if *currency != payment.currency => {
                    failed(Some(reference), "currency_mismatch", "the capture's currency is not the payment's")
                }
                Some(payment) if !payment.manual || payment.declined || payment.voided => {
                    failed(Some(reference), "invalid_state", "only an authorization that is not voided can be captured")
                }
                Some(payment) if *value <= 0 || *value > payment.authorized - payment.captured => {
                    let message = format!("capture of {} exceeds the {} left", value, payment.authorized - payment.captured);
                    let code = if *value <= 0 { "invalid_amount" } else { "amount_exceeds_authorized" };
                    failed(Some(reference), code, &message)
                }
                Some(payment) => {
                    payment.captured += *value;
                    payment.captures += 1;
                    let capture_reference = format!("{}_capture_{}", payment.reference, payment.captures);
                    ObjectWriter::new().string("status", "succeeded").string("providerReference", &capture_reference)
                        .object("amount", money(*value, currency)).string("providerStatus", "CAPTURED").finish()
                }
            },
            Request::Refund { reference, value, currency } => match ledger.payments.get_mut(reference) {
                None => failed(None, "unknown_payment", UNKNOWN_REFERENCE),
                Some(payment) if *currency != payment.currency => {
                    failed(Some(reference), "currency_mismatch", "the refund's currency is not the payment's")
                }
                Some(payment) if payment.captured == 0 => failed(Some(reference), "invalid_state", "nothing has been captured"),
                Some(payment) if *value <= 0 || *value > payment.captured - payment.refunded => {
                    let message = format!("refund of {} exceeds the {} left", value, payment.captured - payment.refunded);
                    let code = if *value <= 0 { "invalid_amount" } else { "amount_exceeds_captured" };
                    failed(Some(reference), code, &message)
                }
                Some(payment) => {
                    payment.refunded += *value;
                    payment.refunds += 1;
                    let refund_reference = format!("{}_refund_{}", payment.reference, payment.refunds);
                    ObjectWriter::new().string("status", "succeeded").string("providerReference", &refund_reference)
                        .object("amount", money(*value, currency)).string("providerStatus", "REFUNDED").finish()
                }
            },
            Request::Void { reference } => match ledger.payments.get_mut(reference) {
                None => failed(None, "unknown_payment", UNKNOWN_REFERENCE),
                Some(payment) if !payment.manual || payment.declined || payment.voided || payment.captured > 0 => {
                    failed(Some(reference), "invalid_state", "only an uncaptured authorization can be voided")
                }
                Some(payment) => {
                    payment.voided = true;
                    ObjectWriter::new().string("status", "succeeded").string("providerReference", reference)
                        .object("amount", money(payment.authorized, &payment.currency)).string("providerStatus", "VOIDED")
                        .finish()
                }
            },
        };
        let id = (kind(request), key.to_string());
        if let Some(record) = ledger.keys.get_mut(&id) {
            record.answer = Some(answer.clone());
        }
        answer
    }

    /// verify: the payment's state, by its reference or else by the host's
    /// payment id. Never changes anything. `Err` when the reference is
    /// another payment's (the request is wrong: nothing can be said).
    pub fn verify(&self, reference: Option<&str>, payment_id: &str) -> Result<String, String> {
        let ledger = self.ledger();
        let found = match reference {
            Some(reference) => ledger.payments.get(reference),
            None => ledger.by_payment_id.get(payment_id).and_then(|reference| ledger.payments.get(reference)),
        };
        let pending = || ObjectWriter::new().string("status", "pending").string("providerStatus", "PROCESSING").finish();
        Ok(match found {
            Some(payment) if payment.payment_id != payment_id => {
                return Err("providerReference is another payment's than paymentId's".to_string());
            }
            Some(payment) => self.describe_payment(payment, false),
            // Its authorize is being answered: not final, either way.
            None if ledger.authorizing.contains_key(payment_id) => pending(),
            // One of ours that the simulation no longer holds (past CAPACITY):
            // it cannot say "not charged" about it.
            None if reference.map_or(false, is_our_reference) => pending(),
            None => failed(reference, "unknown_payment", "example-rust has no payment with this reference or payment id"),
        })
    }

    /// A payment's state as authorize answers it, or as verify reports it
    /// (with its totals).
    fn describe_payment(&self, payment: &Payment, answering_authorize: bool) -> String {
        let result = ObjectWriter::new();
        if payment.declined {
            let message = format!("example-rust declines amounts above {} minor units", self.decline_above);
            return result.string("status", "failed").string("providerReference", &payment.reference)
                .object("problem", problem("card_declined", &message, Some("05"))).string("providerStatus", "DECLINED").finish();
        }
        let (status, provider_status) = if payment.voided {
            ("cancelled", "VOIDED")
        } else if !payment.manual || payment.captured == payment.authorized {
            ("succeeded", if payment.manual { "CAPTURED" } else { "APPROVED" })
        } else {
            ("authorized", "AUTHORIZED")
        };
        let mut result = result.string("status", status).string("providerReference", &payment.reference)
            .object("amount", money(payment.authorized, &payment.currency));
        if payment.voided {
            result = result.object("problem", problem("voided", "the authorization was voided by the merchant", None));
        }
        result = result.string("providerStatus", provider_status);
        if !answering_authorize {
            let totals = ObjectWriter::new().object("captured", money(payment.captured, &payment.currency))
                .object("refunded", money(payment.refunded, &payment.currency)).boolean("voided", payment.voided);
            result = result.object("totals", totals);
        }
        result.finish()
    }
}
