//! The one-pass reading against the `Value` path it replaces: the same
//! values at every pointer, and the same bodies refused as not JSON.

use super::*;
use proptest::prelude::*;

/// Pointers that overlap (a value taken whole and pointers into it),
/// escape, index arrays and point nowhere.
const POINTERS: &[&str] = &[
    "/data/status",
    "/code",
    "/message",
    "/data/failureCode",
    "/status",
    "/data/transactionId",
    "/data/amount",
    "/data",
    "/data/list/1/x",
    "/data/list/0",
    "/data/list/01",
    "/a~1b",
    "/m~0n",
    "/0",
    "/data//e",
    "data/status",
    "/missing/deeper",
    "/data/status",
];

fn fields() -> Fields {
    let ps: Vec<Option<&str>> = POINTERS.iter().copied().map(Some).chain([None]).collect();
    Fields::new(&ps)
}

/// What the `Value` path reads: parse, then `Value::pointer` per pointer.
fn by_value(body: &[u8]) -> Result<Vec<Option<Value>>, NotJson> {
    let v: Value = serde_json::from_slice(body).map_err(|_| NotJson)?;
    let mut out: Vec<Option<Value>> = POINTERS.iter().map(|p| v.pointer(p).cloned()).collect();
    out.push(None);
    Ok(out)
}

fn same(body: &[u8]) {
    let f = fields();
    let want = by_value(body);
    assert_eq!(read(body, &f), want, "{:?}", String::from_utf8_lossy(body));
    // The `Value` path is taken for serde_json's raw-value key alone.
    let raw = String::from_utf8_lossy(body).contains(RAW_VALUE_KEY);
    match one_pass(body, &f) {
        Pass::RawValueKey => assert!(raw, "{:?}", String::from_utf8_lossy(body)),
        Pass::Read(slots) => assert_eq!(Ok(slots), want),
        Pass::NotJson => assert_eq!(want, Err(NotJson)),
    }
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        assert_eq!(Ok(values_of(&v, &f)), want);
    }
}

#[test]
fn pointer_walk_answers_as_serde_json_does() {
    let v = serde_json::json!({
        "data": {"status": "OK", "list": [10, {"x": "y"}], "": {"e": 1}},
        "a/b": 1, "m~n": 2, "0": "zero"
    });
    for p in [
        "",
        "/",
        "/data",
        "/data/status",
        "/data/list/0",
        "/data/list/1/x",
        "/data/list/01",
        "/data/list/+1",
        "/data/list/2",
        "/data/list/-1",
        "/data//e",
        "/data/status/x",
        "data/status",
        "/a~1b",
        "/m~0n",
        "/0",
        "/missing",
        "/data/list/1/x/",
    ] {
        let f = Fields::new(&[Some(p)]);
        assert_eq!(values_of(&v, &f), [v.pointer(p).cloned()], "{p:?}");
        assert_eq!(
            read(v.to_string().as_bytes(), &f),
            Ok(vec![v.pointer(p).cloned()]),
            "{p:?}"
        );
    }
    assert_eq!(index("7"), Some(7));
    assert_eq!(index("0"), Some(0));
    assert_eq!(index("07"), None);
    assert_eq!(index("+7"), None);
}

#[test]
fn the_same_bodies_are_json_and_the_same_values_are_read() {
    let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    let deep_in_data = |n: usize| {
        format!(
            r#"{{"data":{{"status":{}1{}}}}}"#,
            "[".repeat(n),
            "]".repeat(n)
        )
    };
    let bodies: Vec<String> = vec![
        r#"{"status":"success","code":"INITIATED","message":"m","data":{"status":"INITIATED","transactionId":"t","amount":"1000"}}"#.into(),
        // A repeated key counts with its last value, whole.
        r#"{"data":{"status":"A","amount":"1"},"data":{"status":"B"}}"#.into(),
        r#"{"data":{"status":"A"},"data":"flat"}"#.into(),
        r#"{"code":"X","code":7}"#.into(),
        // Escapes in keys and values.
        r#"{"da\u0074a":{"st\u0061tus":"\u00e9\n"},"a\/b":1,"m~n":[2]}"#.into(),
        r#"{"data":{"list":[0,{"x":"y"},2],"":{"e":true}},"0":null}"#.into(),
        r#"{"data":{"list":[{"x":"no"}]}}"#.into(),
        r#"{"data":[1,2],"status":{"nested":1}}"#.into(),
        // Numbers as `Value` reads them, and those it refuses.
        r#"{"code":-0,"message":1.0e5,"status":18446744073709551616,"data":{"amount":1e-400}}"#.into(),
        r#"{"x":1e400}"#.into(),
        r#"{"data":{"amount":1e400}}"#.into(),
        r#"{"x":01}"#.into(),
        // Strings `Value` refuses: a lone surrogate, a control character.
        r#"{"x":"\ud800"}"#.into(),
        r#"{"x":"\udc00\ud800"}"#.into(),
        "{\"x\":\"a\u{1}b\"}".into(),
        r#"{"x":"\q"}"#.into(),
        // Not JSON, or more than one value.
        "".into(),
        "   ".into(),
        "null".into(),
        "\"status\"".into(),
        r#"{"status":"success"} x"#.into(),
        r#"{"status":"success"}  "#.into(),
        r#"{"status":"success""#.into(),
        r#"{"status":"success",}"#.into(),
        r#"[1,]"#.into(),
        "<html>502</html>".into(),
        // Nesting around `Value`'s depth limit.
        deep(126),
        deep(127),
        deep(128),
        deep(129),
        deep_in_data(124),
        deep_in_data(125),
        deep_in_data(126),
        deep_in_data(127),
        format!(r#"{{"x":{},"data":{{"status":"ok"}}}}"#, deep(127)),
        // serde_json's private raw-value marker as a first key.
        r#"{"$serde_json::private::RawValue":"[1,2]"}"#.into(),
        r#"{"$serde_json::private::RawValue":"[1"}"#.into(),
        r#"{"data":{"$serde_json::private::RawValue":"{\"status\":1}"}}"#.into(),
        r#"{"x":{"$serde_json::private::RawValue":"nope"}}"#.into(),
        r#"{"a":1,"$serde_json::private::RawValue":"[1"}"#.into(),
    ];
    for b in &bodies {
        same(b.as_bytes());
    }
    // Only a first key sends a body to the `Value` path, at any depth.
    let f = fields();
    for (b, to_value) in [
        (r#"{"$serde_json::private::RawValue":"[1"}"#, true),
        (r#"{"x":{"$serde_json::private::RawValue":"nope"}}"#, true),
        (
            r#"{"missing":{"$serde_json::private::RawValue":"1"}}"#,
            true,
        ),
        // A value taken whole is a `Value` already.
        (r#"{"data":{"$serde_json::private::RawValue":"1"}}"#, false),
        (r#"{"a":1,"$serde_json::private::RawValue":"[1"}"#, false),
        (
            r#"{"x":{"a":1,"$serde_json::private::RawValue":"[1"}}"#,
            false,
        ),
        (r#"{"status":"success"}"#, false),
        (r#"{"status":"success""#, false),
    ] {
        assert_eq!(
            one_pass(b.as_bytes(), &f) == Pass::RawValueKey,
            to_value,
            "{b}"
        );
    }
    // Bytes that are not UTF-8, inside and outside a string.
    same(b"{\"x\":\"\xff\"}");
    same(b"{\"data\":{\"status\":\"\xc3\"}}");
    same(b"\xef\xbb\xbf{}");
}

/// JSON text from pieces that hit the pointers, repeat keys, nest, and
/// break the syntax now and then.
fn body() -> impl Strategy<Value = String> {
    let key = prop::sample::select(vec![
        "data",
        "status",
        "code",
        "message",
        "list",
        "x",
        "0",
        "a/b",
        "m~n",
        "",
        "amount",
        "da\\u0074a",
    ]);
    let scalar = prop::sample::select(vec![
        "\"SUCCESS\"",
        "\"\"",
        "\"  \"",
        "\"\\u00e9\"",
        "\"\\ud800\"",
        "1",
        "-0",
        "1.5e3",
        "1e400",
        "18446744073709551616",
        "true",
        "null",
        "\"a\\nb\"",
    ]);
    let leaf = scalar.prop_map(str::to_string);
    leaf.prop_recursive(5, 40, 5, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(","))),
            prop::collection::vec((key.clone(), inner), 0..5).prop_map(|kv| {
                let parts: Vec<String> = kv.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
                format!("{{{}}}", parts.join(","))
            }),
        ]
    })
}

proptest! {
    #[test]
    fn reads_what_the_value_path_reads(b in body()) {
        same(b.as_bytes());
    }

    #[test]
    fn refuses_what_the_value_path_refuses(b in body(), cut in 0usize..64, junk in "[,:\\[\\]{}\" a0]{0,2}") {
        // A body broken somewhere: cut short, or with a stray character.
        let at = cut.min(b.len());
        let at = (0..=at).rev().find(|i| b.is_char_boundary(*i)).unwrap_or(0);
        same(format!("{}{junk}{}", &b[..at], &b[at..]).as_bytes());
        same(&b.as_bytes()[..at]);
    }
}
