//! Rules of the kinds other than checks and groups.

use serde_json::json;

use super::*;

// Status pages (spec 2.11).

#[test]
fn theme_colors_need_all_twelve_keys() {
    ok(
        Kind::StatusPage,
        status_page(json!({ "themeColors": { "light": palette("#FFFFFF"), "dark": palette("#000") } })),
    );
    let mut dark = palette("#000");
    dark.as_object_mut().map(|p| p.remove("borderColor"));
    let body = status_page(json!({ "themeColors": { "light": palette("#FFF"), "dark": dark } }));
    fails(
        Kind::StatusPage,
        body,
        "themeColors.dark",
        "missing required field `borderColor`",
    );
    let body = status_page(json!({ "themeColors": { "light": palette("#FFF") } }));
    fails(Kind::StatusPage, body, "themeColors", "missing required field `dark`");
}

#[test]
fn theme_colors_are_upper_case_hex() {
    for good in ["#ABC", "#A1B2C3", "#000000"] {
        ok(
            Kind::StatusPage,
            status_page(json!({ "themeColors": { "light": palette(good), "dark": palette(good) } })),
        );
    }
    for bad in ["#abc", "#ABCD", "ABCDEF", "#GGGGGG", "red"] {
        let light = with(palette("#FFF"), json!({ "linkFontColor": bad }));
        let body = status_page(json!({ "themeColors": { "light": light, "dark": palette("#000") } }));
        fails(
            Kind::StatusPage,
            body,
            "themeColors.light.linkFontColor",
            &format!("`{bad}` does not match the pattern"),
        );
    }
}

// Private locations (spec 2.12).

#[test]
fn slug_of_1_to_30_letters_digits_and_dashes() {
    ok(Kind::PrivateLocation, private_location("office-Amsterdam-2"));
    ok(Kind::PrivateLocation, private_location(&"a".repeat(30)));
    for bad in ["", "office amsterdam", "office_ams", "kantoor-zürich", &"a".repeat(31)] {
        fails(
            Kind::PrivateLocation,
            private_location(bad),
            "slugName",
            "does not match the pattern ^[a-zA-Z0-9-]{1,30}$",
        );
    }
}

#[test]
fn slug_must_not_look_like_a_data_center() {
    for fine in ["eu-office-1", "europe-west-1", "west-1", "us-east"] {
        ok(Kind::PrivateLocation, private_location(fine));
    }
    for bad in [
        "eu-west-1",
        "us-gov-east-1",
        "ap-southeast-12",
        "me-central-1",
        "us-east-1-office",
    ] {
        let v = fails(
            Kind::PrivateLocation,
            private_location(bad),
            "slugName",
            &format!("`{bad}` looks like a data-center location"),
        );
        assert!(
            v.help.as_deref().is_some_and(|h| h.contains("office-amsterdam")),
            "{v:?}"
        );
    }
}

// Maintenance windows.

#[test]
fn window_times_are_date_times() {
    ok(
        Kind::MaintenanceWindow,
        window(json!({ "startsAt": "2026-12-01", "endsAt": "2026-12-02" })),
    );
    ok(
        Kind::MaintenanceWindow,
        window(json!({ "endsAt": "2026-12-01T04:00:00.250+01:00", "repeatEndsAt": "2027-01-01" })),
    );
    let message = "`tomorrow` is not an ISO 8601 date-time";
    let v = fails(
        Kind::MaintenanceWindow,
        window(json!({ "startsAt": "tomorrow" })),
        "startsAt",
        message,
    );
    assert_eq!(v.help.as_deref(), Some("write it like 2026-12-01T02:00:00Z"));
    let message = "`2026-12-01 04:00` is not an ISO 8601 date-time";
    fails(
        Kind::MaintenanceWindow,
        window(json!({ "endsAt": "2026-12-01 04:00" })),
        "endsAt",
        message,
    );
    let message = "`2027-13-01` is not an ISO 8601 date-time";
    fails(
        Kind::MaintenanceWindow,
        window(json!({ "repeatEndsAt": "2027-13-01" })),
        "repeatEndsAt",
        message,
    );
}

#[test]
fn window_ends_after_it_starts() {
    ok(
        Kind::MaintenanceWindow,
        window(json!({ "startsAt": "2026-12-01T02:00:00Z", "endsAt": "2026-12-01T02:00:01Z" })),
    );
    ok(
        Kind::MaintenanceWindow,
        window(json!({ "startsAt": "2026-12-01", "endsAt": "2026-12-01T00:00:01Z" })),
    );
    let message = "endsAt must be after startsAt";
    let same = window(json!({ "startsAt": "2026-12-01T02:00:00Z", "endsAt": "2026-12-01T02:00:00Z" }));
    fails(Kind::MaintenanceWindow, same, "endsAt", message);
    let before = window(json!({ "startsAt": "2026-12-02", "endsAt": "2026-12-01T23:00:00Z" }));
    fails(Kind::MaintenanceWindow, before, "endsAt", message);
}

#[test]
fn window_order_compares_instants_not_text() {
    // 01:30Z is after 02:00+02:00 (00:00Z), though it sorts before it as text.
    ok(
        Kind::MaintenanceWindow,
        window(json!({ "startsAt": "2026-12-01T02:00:00+02:00", "endsAt": "2026-12-01T01:30:00Z" })),
    );
    ok(
        Kind::MaintenanceWindow,
        window(json!({ "startsAt": "2026-12-01T02:00:00Z", "endsAt": "2026-12-01T02:00:00.5Z" })),
    );
    let earlier = window(json!({ "startsAt": "2026-12-01T02:00:00Z", "endsAt": "2026-12-01T03:00:00+02:00" }));
    fails(
        Kind::MaintenanceWindow,
        earlier,
        "endsAt",
        "endsAt must be after startsAt",
    );
    // Across a year and a month boundary.
    let earlier = window(json!({ "startsAt": "2026-12-31T23:30:00-01:00", "endsAt": "2027-01-01T00:15:00Z" }));
    fails(
        Kind::MaintenanceWindow,
        earlier,
        "endsAt",
        "endsAt must be after startsAt",
    );
    let earlier = window(json!({ "startsAt": "2028-02-29T23:00:00Z", "endsAt": "2028-03-01T00:30:00+02:00" }));
    fails(
        Kind::MaintenanceWindow,
        earlier,
        "endsAt",
        "endsAt must be after startsAt",
    );
    ok(
        Kind::MaintenanceWindow,
        window(json!({ "startsAt": "2028-02-29T23:00:00Z", "endsAt": "2028-03-01T01:30:00+02:00" })),
    );
}

#[test]
fn repeat_interval_needs_repeat_unit() {
    ok(
        Kind::MaintenanceWindow,
        window(json!({ "repeatInterval": 1, "repeatUnit": "WEEK" })),
    );
    ok(Kind::MaintenanceWindow, window(json!({ "repeatUnit": "DAY" })));
    let message = "repeatInterval needs a repeatUnit (DAY, WEEK or MONTH)";
    fails(
        Kind::MaintenanceWindow,
        window(json!({ "repeatInterval": 2 })),
        "repeatUnit",
        message,
    );
}
