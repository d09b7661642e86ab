//! example-rust: a payment adapter in Rust for the gateway's plugin ABI,
//! written against `gateway_abi.h` alone (no crates: the `#[repr(C)]`
//! declarations are written by hand in `abi.rs`).
//!
//! - `abi.rs`: the header's tables and constants, as Rust types.
//! - `boundary.rs`: the exported entry point and the table's functions, the
//!   only `unsafe` code; every panic is caught there and becomes a status.
//! - `adapter.rs`: requests read strictly, refused or accepted, completed
//!   exactly once from the adapter's own threads.
//! - `provider.rs`: the simulated provider (payments and idempotency keys).
//! - `json.rs`: strict JSON reading and writing.

#![deny(unsafe_code)]

mod abi;
mod adapter;
#[allow(unsafe_code)]
mod boundary;
mod json;
mod provider;
