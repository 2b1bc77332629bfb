use super::*;
use oas3::spec::Schema;

const SHOP_30: &str = r##"
openapi: 3.0.3
info: { title: Shop API, version: "1.2" }
servers:
  - url: "https://{region}.shop.example/api/"
    variables: { region: { default: eu } }
security: [{ bearer: [] }]
paths:
  /orders:
    get:
      operationId: listOrders
      parameters:
        - { name: limit, in: query, schema: { type: integer } }
        - { name: status, in: query, required: true, schema: { type: string, example: "open now" } }
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: { type: array, minItems: 1, items: { $ref: "#/components/schemas/Order" } }
    post:
      operationId: createOrder
      responses: { "201": { description: made } }
  /orders/{id}:
    parameters:
      - { name: id, in: path, required: true, schema: { type: string }, example: "o-42" }
    get:
      operationId: getOrder
      parameters:
        - { name: X-Tenant, in: header, required: true, schema: { type: string } }
      responses:
        "200":
          description: ok
          content:
            application/json; charset=utf-8:
              schema: { $ref: "#/components/schemas/Order" }
        "404": { description: missing }
  /orders/{id}/items:
    get:
      responses: { "200": { description: ok } }
  /health:
    get:
      responses:
        "2XX":
          description: ok
          content:
            application/json:
              schema:
                allOf:
                  - { $ref: "#/components/schemas/Status" }
                  - type: object
                    required: [uptime]
                    properties: { uptime: { type: integer, minimum: 0 } }
components:
  schemas:
    Order:
      type: object
      required: [id, total, note, state, "line.items", lines]
      properties:
        id: { type: string, minLength: 1 }
        total: { type: number, minimum: 0, exclusiveMinimum: true }
        note: { type: string, nullable: true }
        state: { type: string, enum: [open] }
        lines: { type: array, items: { type: string } }
    Status:
      type: object
      required: [ok]
      properties: { ok: { type: boolean } }
    Loop: { $ref: "#/components/schemas/Loop" }
"##;

fn generated(text: &str, options: &Options) -> Generated {
    let spec = read(text, "shop.yaml").unwrap();
    generate(&spec, options, "shop.yaml").unwrap()
}

fn row<'a>(generated: &'a Generated, key: &str) -> &'a Map<String, Value> {
    &generated
        .items
        .iter()
        .find(|i| i.key == key)
        .unwrap_or_else(|| panic!("no {key}: {generated:#?}"))
        .fields
}

fn said(row: &Map<String, Value>) -> Vec<String> {
    row["assertions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            format!(
                "{} {} {} {}",
                a["source"],
                a["property"].as_str().unwrap_or(""),
                a["comparison"],
                a["target"]
            )
            .replace('"', "")
        })
        .collect()
}

#[test]
fn operations_become_rows_with_stable_keys() {
    let g = generated(SHOP_30, &Options::default());
    let keys: Vec<&str> = g.items.iter().map(|i| i.key.as_str()).collect();
    assert_eq!(keys, ["get-health", "getOrder", "listOrders"]);
    assert_eq!(g.suggested_id, "shop-api");
    assert_eq!(g.title, "Shop API 1.2");
    let list = row(&g, "listOrders");
    assert_eq!(list["url"], "https://eu.shop.example/api/orders?status=open%20now");
    assert_eq!(list["name"], "GET /orders?status=open%20now");
    assert_eq!(said(list), ["STATUS_CODE  EQUALS 200", "JSON_BODY $ NOT_EMPTY "]);
    assert_eq!(row(&g, "getOrder")["url"], "https://eu.shop.example/api/orders/o-42");
    assert_eq!(
        g.skipped,
        [Skipped {
            what: "GET /orders/{id}/items".into(),
            reason: "path parameter `id` is not described".into()
        }]
    );
    assert!(g.notes[0].contains("credentials (bearer)"), "{:?}", g.notes);
    assert!(g.notes[1].contains("X-Tenant"), "{:?}", g.notes);
}

#[test]
fn the_response_schema_becomes_json_body_assertions() {
    let g = generated(SHOP_30, &Options::default());
    assert_eq!(
        said(row(&g, "getOrder")),
        [
            "STATUS_CODE  EQUALS 200",
            "JSON_BODY $.id NOT_NULL ",
            "JSON_BODY $.id NOT_EMPTY ",
            "JSON_BODY $.total NOT_NULL ",
            "JSON_BODY $.total GREATER_THAN 0",
            "JSON_BODY $ HAS_KEY note",
            "JSON_BODY $.state NOT_NULL ",
            "JSON_BODY $.state EQUALS open",
            "JSON_BODY $ HAS_KEY line.items",
            "JSON_BODY $.lines NOT_NULL ",
        ]
    );
    assert_eq!(
        said(row(&g, "get-health")),
        [
            "STATUS_CODE  EQUALS 200",
            "JSON_BODY $.ok NOT_NULL ",
            "JSON_BODY $.uptime NOT_NULL ",
            "JSON_BODY $.uptime GREATER_THAN -1",
        ]
    );
}

#[test]
fn the_base_url_and_methods_are_chosen() {
    let options = Options {
        base_url: Some("http://127.0.0.1:9/".into()),
        methods: vec!["get".into(), "POST".into()],
        fetched_from: None,
    };
    let g = generated(SHOP_30, &options);
    assert_eq!(row(&g, "getOrder")["url"], "http://127.0.0.1:9/orders/o-42");
    assert_eq!(said(row(&g, "createOrder")), ["STATUS_CODE  EQUALS 201"]);
    // No servers: the origin of the URL it came from; nor that: an error.
    let bare = SHOP_30.replace(
        "servers:\n  - url: \"https://{region}.shop.example/api/\"\n    variables: { region: { default: eu } }\n",
        "",
    );
    let from = Options {
        fetched_from: url::Url::parse("http://127.0.0.1:7/openapi.json").ok(),
        ..Options::default()
    };
    assert_eq!(
        row(&generated(&bare, &from), "get-health")["url"],
        "http://127.0.0.1:7/health"
    );
    let spec = read(&bare, "shop.yaml").unwrap();
    let error = generate(&spec, &Options::default(), "shop.yaml").unwrap_err();
    assert!(error.to_string().contains("pass --base-url"), "{error}");
}

#[test]
fn json_documents_and_errors() {
    let json = r#"{"openapi":"3.1.0","info":{"title":"T","version":"1"},"servers":[{"url":"https://t.example"}],
      "paths":{"/a":{"get":{"operationId":"a b!","responses":{"200":{"description":"ok",
      "content":{"application/json":{"schema":{"type":"object","required":["n"],"properties":{"n":{"type":["integer","null"]}}}}}}}}}}}"#;
    let g = generated(json, &Options::default());
    assert_eq!(g.items[0].key, "a-b");
    assert_eq!(said(&g.items[0].fields)[1], "JSON_BODY $ HAS_KEY n");
    let error = read("swagger: '2.0'\n", "old.yaml").unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("old.yaml: not an OpenAPI 3.x document: a Swagger 2.0"),
        "{error}"
    );
    let error = read("{ \"openapi\": ", "bad.json").unwrap_err();
    assert!(error.to_string().contains("line 1"), "{error}");
    let error = read("a: [b\n", "bad.yaml").unwrap_err();
    assert!(
        error.to_string().starts_with("bad.yaml: not a JSON or YAML document"),
        "{error}"
    );
}

#[test]
fn a_reference_cycle_ends() {
    let spec = read(SHOP_30, "shop.yaml").unwrap();
    let looped = Schema::Object(Box::new(ObjectOrReference::Ref {
        ref_path: "#/components/schemas/Loop".into(),
        summary: None,
        description: None,
    }));
    assert!(schema::object(&spec, &looped).is_none());
    assert!(schema::assertions(&spec, &looped).is_empty());
}
