//! The one-pass reading against the `Value` path it replaces: the same
//! values at every pointer, and the same bodies refused as not JSON; and
//! against a reading that keeps every key: the same bodies refused as
//! contradictory (a key given twice on the way to a pointed-at value or
//! inside one).

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

/// serde_json's private raw-value key, which `Value` reads specially.
const RAW_VALUE_KEY: &str = "$serde_json::private::RawValue";

fn fields() -> Fields {
    let ps: Vec<Option<&str>> = POINTERS.iter().copied().map(Some).chain([None]).collect();
    Fields::new(&ps)
}

/// What the `Value` path reads: parse, then `Value::pointer` per pointer.
fn by_value(body: &[u8]) -> Result<Vec<Option<Value>>, Unread> {
    let v: Value = serde_json::from_slice(body).map_err(|_| Unread::NotJson)?;
    let mut out: Vec<Option<Value>> = POINTERS.iter().map(|p| v.pointer(p).cloned()).collect();
    out.push(None);
    Ok(out)
}

/// A body parsed with every key kept, repeated ones included.
#[derive(Debug)]
enum Tree {
    Leaf,
    Array(Vec<Tree>),
    Object(Vec<(String, Tree)>),
}

impl<'de> Deserialize<'de> for Tree {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Tree, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Tree;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("JSON")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Tree, E> {
                Ok(Tree::Leaf)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Tree, E> {
                Ok(Tree::Leaf)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Tree, E> {
                Ok(Tree::Leaf)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Tree, E> {
                Ok(Tree::Leaf)
            }
            fn visit_str<E>(self, _: &str) -> Result<Tree, E> {
                Ok(Tree::Leaf)
            }
            fn visit_unit<E>(self) -> Result<Tree, E> {
                Ok(Tree::Leaf)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Tree, A::Error> {
                let mut v = Vec::new();
                while let Some(t) = seq.next_element()? {
                    v.push(t);
                }
                Ok(Tree::Array(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Tree, A::Error> {
                let mut v = Vec::new();
                while let Some((k, t)) = map.next_entry::<String, Tree>()? {
                    v.push((k, t));
                }
                Ok(Tree::Object(v))
            }
        }
        d.deserialize_any(V)
    }
}

impl Tree {
    /// Whether an object at any depth has a key twice.
    fn repeats_inside(&self) -> bool {
        match self {
            Tree::Leaf => false,
            Tree::Array(v) => v.iter().any(Tree::repeats_inside),
            Tree::Object(v) => {
                v.iter()
                    .enumerate()
                    .any(|(i, (k, _))| v[..i].iter().any(|(j, _)| j == k))
                    || v.iter().any(|(_, t)| t.repeats_inside())
            }
        }
    }

    /// Whether a key is given twice on the way to `tokens` or inside the
    /// value there (by the last of each key, as `Value` keeps it).
    fn repeats_at(&self, tokens: &[String]) -> bool {
        let Some((first, rest)) = tokens.split_first() else {
            return self.repeats_inside();
        };
        match self {
            Tree::Leaf => false,
            Tree::Array(v) => index(first)
                .and_then(|i| v.get(i))
                .is_some_and(|t| t.repeats_at(rest)),
            Tree::Object(v) => {
                let mut found = v.iter().filter(|(k, _)| k == first);
                match (found.next(), found.next()) {
                    (None, _) => false,
                    (Some(_), Some(_)) => true,
                    (Some((_, t)), None) => t.repeats_at(rest),
                }
            }
        }
    }
}

/// What the one pass must give: the `Value` path's reading, unless a key
/// on the way to a pointer or inside its value is given twice.
fn expected(body: &[u8]) -> Result<Vec<Option<Value>>, Unread> {
    let values = by_value(body)?;
    let tree: Tree = serde_json::from_slice(body).expect("JSON for Value is JSON for Tree");
    let twice = POINTERS
        .iter()
        .filter_map(|p| tokens(p))
        .any(|t| tree.repeats_at(&t));
    if twice {
        return Err(Unread::Duplicate(String::new()));
    }
    Ok(values)
}

fn same(body: &[u8]) {
    let shown = String::from_utf8_lossy(body);
    if shown.contains(RAW_VALUE_KEY) {
        // `Value` reads it specially; payrun does not (tested apart).
        return;
    }
    let got = read(body, &fields());
    match expected(body) {
        Err(Unread::Duplicate(_)) => {
            assert!(
                matches!(got, Err(Unread::Duplicate(_))),
                "{shown:?}: {got:?}"
            )
        }
        want => assert_eq!(got, want, "{shown:?}"),
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
    ];
    for b in &bodies {
        same(b.as_bytes());
    }
    // Bytes that are not UTF-8, inside and outside a string.
    same(b"{\"x\":\"\xff\"}");
    same(b"{\"data\":{\"status\":\"\xc3\"}}");
    same(b"\xef\xbb\xbf{}");
}

/// serde_json's private raw-value key is an ordinary key: the string under
/// it is never read as JSON of its own, at the top or in a value taken
/// whole.
#[test]
fn the_raw_value_key_is_an_ordinary_key() {
    let f = Fields::new(&[Some("/data"), Some("/data/status"), Some("/0")]);
    let body = format!(r#"{{"{RAW_VALUE_KEY}":"[1,2]"}}"#);
    assert_eq!(read(body.as_bytes(), &f), Ok(vec![None, None, None]));
    let body = format!(r#"{{"data":{{"{RAW_VALUE_KEY}":"{{\"status\":1}}"}}}}"#);
    let got = read(body.as_bytes(), &f).unwrap();
    assert_eq!(
        got[0],
        Some(serde_json::json!({ RAW_VALUE_KEY: "{\"status\":1}" }))
    );
    assert_eq!(got[1], None);
    // Still JSON when the string under it is not.
    let body = format!(r#"{{"x":{{"{RAW_VALUE_KEY}":"nope"}},"0":"z"}}"#);
    assert_eq!(
        read(body.as_bytes(), &f),
        Ok(vec![None, None, Some(Value::from("z"))])
    );
}

/// A key given twice on the way to a pointed-at value, or anywhere inside
/// one, is named by its pointer (the first such key in the body); keys
/// nothing points at or into may repeat; a body that is not JSON is
/// refused as such even when a key repeats before the fault.
#[test]
fn a_key_given_twice_is_named() {
    let f = Fields::new(&[
        Some("/data/status"),
        Some("/code"),
        Some("/data/list/0"),
        Some("/whole"),
        Some("/a~1b/m~0n"),
    ]);
    let twice = |body: &str| match read(body.as_bytes(), &f) {
        Err(Unread::Duplicate(k)) => Some(k),
        Ok(_) => None,
        other => panic!("{body}: {other:?}"),
    };
    let cases = [
        (
            r#"{"data":{"status":"FAILED","status":"SUCCESS"}}"#,
            "/data/status",
        ),
        (
            r#"{"data":{"status":"FAILED"},"data":{"status":"SUCCESS"}}"#,
            "/data",
        ),
        (r#"{"code":"FAILED","code":"SUCCESS"}"#, "/code"),
        (r#"{"code":"X","code":"X"}"#, "/code"),
        (r#"{"data":{"list":[{"a":1,"a":2}]}}"#, "/data/list/0/a"),
        (r#"{"whole":[0,{"b":{"c":1,"c":1}}]}"#, "/whole/1/b/c"),
        (r#"{"whole":{"x/y":1,"x/y":2}}"#, "/whole/x~1y"),
        (r#"{"a/b":{"m~n":1,"m~n":2}}"#, "/a~1b/m~0n"),
        // The first in the body is named.
        (
            r#"{"code":1,"code":2,"data":{"status":1,"status":2}}"#,
            "/code",
        ),
        (
            r#"{"data":{"status":1,"status":2},"code":1,"code":2}"#,
            "/data/status",
        ),
    ];
    for (body, key) in cases {
        assert_eq!(twice(body).as_deref(), Some(key), "{body}");
    }
    for body in [
        r#"{"other":1,"other":2,"code":"X"}"#,
        r#"{"data":{"other":1,"other":2,"status":"S"}}"#,
        r#"{"data":{"list":[1,{"a":1,"a":2}]}}"#,
        r#"{"x":{"code":1,"code":2}}"#,
        r#"{"whole":{"a":1,"b":{"a":2}}}"#,
    ] {
        assert_eq!(twice(body), None, "{body}");
    }
    assert_eq!(
        read(br#"{"code":"FAILED","code":"SUCCESS""#, &f),
        Err(Unread::NotJson)
    );
    assert_eq!(
        read(br#"{"data":{"status":1,"status":2}} x"#, &f),
        Err(Unread::NotJson)
    );
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
