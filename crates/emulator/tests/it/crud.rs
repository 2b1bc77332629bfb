//! Create, read, list, update and delete of every kind over real HTTP, and
//! the behaviour particular to checks, groups, alert channels, maintenance
//! windows, status pages, dashboards and private locations.

use crate::common;
use common::*;

use reqwest::Method;
use serde_json::{Value, json};

mod account;
mod checks;
mod groups;
mod locations;
mod pages;

/// `created_at` kept, `updated_at` moved forward.
#[track_caller]
fn assert_bumped(before: &Value, after: &Value) {
    assert_timestamps(after);
    assert_eq!(after["created_at"], before["created_at"], "created_at is kept");
    let (old, new) = (
        before["updated_at"].as_str().unwrap(),
        after["updated_at"].as_str().unwrap(),
    );
    assert!(new > old, "updated_at changes on update: {old} -> {new}");
}

fn ids(list: &Value) -> Vec<Value> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|o| {
            o.get("dashboardId")
                .or_else(|| o.get("id"))
                .or_else(|| o.get("key"))
                .cloned()
                .unwrap_or(Value::Null)
        })
        .collect()
}
