use super::*;
use crate::forms::file_form;
use monform_model::Kind;
use serde_json::json;

/// The view reads every field as the files' form would have it.
#[test]
fn an_actual_view_reads_as_the_files_form() {
    let remote = Remote::with_id(
        Kind::Check,
        "c1",
        &json!({
            "id": "c1", "checkType": "API", "name": "Home", "groupId": 7,
            "alertChannelSubscriptions": [
                { "alertChannelId": 3, "activated": true },
                { "alertChannelId": 4, "activated": false }
            ],
            "privateLocations": ["office-ams"],
            "tags": ["web", "monform:shop/home"],
            "request": { "url": "https://example.com", "method": "GET" }
        }),
    );
    let names = Names::from_pairs(
        [
            (Kind::Group, json!(7), "shop".to_owned()),
            (Kind::AlertChannel, json!(3), "ops".to_owned()),
            (Kind::PrivateLocation, json!("office-ams"), "office".to_owned()),
        ]
        .into_iter(),
    );
    let body = remote.body();
    let whole = file_form(Kind::Check, &remote, &names);
    let view = ActualView::new(Kind::Check, &remote, &names);
    let fields = whole
        .as_object()
        .unwrap()
        .keys()
        .chain(body.as_object().unwrap().keys());
    for field in fields {
        assert_eq!(view.get(field), whole.get(field), "{field}");
    }
    assert_eq!(view.get("group"), Some(&json!("shop")));
    assert_eq!(view.get("groupId"), None);
    assert_eq!(view.get("alertChannels"), Some(&json!(["ops"])));
    assert_eq!(view.get("tags"), Some(&json!(["web"])));
}
