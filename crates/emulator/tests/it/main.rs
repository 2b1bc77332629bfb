//! The emulator's integration tests: a real server on a loopback port. One
//! test binary (as uv and jj keep theirs), so the crate is linked once
//! instead of once per file.

mod common;

mod alerts;
mod browser_pool;
mod clients;
mod contention;
mod contract;
mod crud;
mod faults;
mod limits;
mod openapi;
mod openapi_fuzz;
mod pages;
mod paging;
mod protocol;
mod reads;
mod runner;
mod sessions;
mod settling;
mod validation;
