//! The profile's validation (every impossible profile refused with the
//! key and the fix) and how words are looked up.

use super::*;

fn spec(toml_text: &str) -> Result<Profile, String> {
    let s: ProfileSpec = toml::from_str(toml_text).map_err(|e| e.to_string())?;
    Profile::from_spec(&s).map_err(|e| e.to_string())
}

#[test]
fn default_profile_is_the_sandbox_contract() {
    let p = Profile::sandbox();
    assert_eq!(p.status.as_deref(), Some("/data/status"));
    assert_eq!(p.code.as_deref(), Some("/code"));
    assert_eq!(p.class_of("success"), Some(Class::Executed));
    assert_eq!(p.class_of("Already_Executed"), Some(Class::AlreadyExecuted));
    assert_eq!(p.class_of("duplicate_ignored"), Some(Class::Duplicate));
    assert_eq!(p.class_of("pending"), Some(Class::Pending));
    assert_eq!(p.class_of("INSUFFICIENT_BALANCE"), None);
    assert!(p.is_result_error("ERROR"));
}

#[test]
fn unknown_key_is_refused() {
    let e = spec("stauts = \"/s\"").unwrap_err();
    assert!(e.contains("stauts"), "{e}");
}

#[test]
fn same_word_success_and_failure_is_refused() {
    let e = spec("executed = [\"OK\"]\nfailed = [\"ok\"]").unwrap_err();
    assert!(e.contains("both `executed` and `failed`"), "{e}");
    let e = spec("executed = [\"SUCCESS\", \"error\"]").unwrap_err();
    assert!(e.contains("result_error"), "{e}");
}

#[test]
fn empty_success_rule_is_refused() {
    let e = spec("executed = []\nalready_executed = []").unwrap_err();
    assert!(e.contains("could ever count as paid"), "{e}");
    let e = spec("initiated = []\nduplicate = []").unwrap_err();
    assert!(e.contains("`initiated`"), "{e}");
    assert!(spec("executed = [\"  \"]").is_err());
}

#[test]
fn bad_pointer_is_refused() {
    for bad in ["data.status", "/a~2b", "/a~"] {
        let e = spec(&format!("status = {bad:?}")).unwrap_err();
        assert!(e.contains("not a JSON pointer"), "{bad}: {e}");
    }
    assert!(spec("status = \"/a~1b/c~0\"").is_ok());
    assert_eq!(spec("result = \"\"").unwrap().result, None);
}

#[test]
fn http_rules_and_status_call() {
    let p = spec("[http]\n\"400\" = \"refused\"\n\"409\" = \"body\"").unwrap();
    assert_eq!(p.http.get(&400), Some(&HttpRule::Refused));
    assert!(
        spec("[http]\n\"302\" = \"body\"")
            .unwrap_err()
            .contains("redirects")
    );
    assert!(spec("[http]\n\"abc\" = \"body\"").is_err());
    assert!(spec("[http]\n\"400\" = \"paid\"").is_err());
    let p = spec(
        "[status_call]\nmethod = \"get\"\npath = \"/tx/{transactionId}\"\nstatus = \"/status\"",
    )
    .unwrap();
    assert_eq!(p.status_call.unwrap().method, "GET");
    assert!(spec("[status_call]\nmethod = \"GET\"\npath = \"/tx\"\nstatus = \"/s\"").is_err());
}

/// One word list of each pair may be empty: a provider with no
/// "already executed" answer, or no duplicate acknowledgement, still
/// has a way to say paid and a way to say initiated.
#[test]
fn one_list_of_a_success_pair_may_be_empty() {
    let p = spec("already_executed = []").unwrap();
    assert_eq!(p.class_of("SUCCESS"), Some(Class::Executed));
    assert_eq!(p.class_of("ALREADY_EXECUTED"), None);
    let p = spec("executed = []").unwrap();
    assert_eq!(p.class_of("ALREADY_EXECUTED"), Some(Class::AlreadyExecuted));
    assert!(spec("duplicate = []").is_ok());
    assert!(spec("initiated = []").is_ok());
}

/// A rule for 429 is refused with its reason: 429 always means slow
/// down and retry, whatever the profile says.
#[test]
fn no_http_rule_for_429() {
    let e = spec("[http]\n\"429\" = \"body\"").unwrap_err();
    assert!(e.contains("429 always means"), "{e}");
    let e = spec("[http]\n\"600\" = \"body\"").unwrap_err();
    assert!(e.contains("not an HTTP status"), "{e}");
    assert!(spec("[http]\n\"428\" = \"ambiguous\"\n\"430\" = \"refused\"").is_ok());
}

/// The status call is a GET or a POST (any case), nothing else.
#[test]
fn status_call_method_is_get_or_post() {
    let with = |m: &str| {
        spec(&format!(
            "[status_call]\nmethod = {m:?}\npath = \"/tx/{{transactionId}}\"\nstatus = \"/status\""
        ))
    };
    assert_eq!(with("post").unwrap().status_call.unwrap().method, "POST");
    for bad in ["PUT", "DELETE", ""] {
        let e = with(bad).unwrap_err();
        assert!(e.contains("must be GET or POST"), "{bad}: {e}");
    }
}

#[test]
fn config_names_a_profile_file_or_holds_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.toml");
    std::fs::write(&file, "status = \"/status\"\n").unwrap();
    let cfg = crate::config::Config::parse(&format!(
        "provider_profile = {:?}\n",
        file.display().to_string()
    ))
    .unwrap();
    assert_eq!(cfg.profile().unwrap().status.as_deref(), Some("/status"));
    let cfg = crate::config::Config::parse("[provider]\nfailed = [\"KO\"]\n").unwrap();
    assert_eq!(cfg.profile().unwrap().class_of("ko"), Some(Class::Failed));
    let both = crate::config::Config::parse(&format!(
        "provider_profile = {:?}\n[provider]\nfailed = [\"KO\"]\n",
        file.display().to_string()
    ))
    .unwrap();
    assert!(both.profile().is_err());
    assert!(crate::config::Config::parse("[provider]\nfaild = []\n").is_err());
}

/// Words are looked up in any ASCII case, every other character exactly:
/// no Unicode case folding turns a look-alike into a known word, in the
/// profile or in an answer.
#[test]
fn words_match_in_ascii_case_only() {
    let p = Profile::sandbox();
    for (word, class) in [
        ("SUCCESS", Some(Class::Executed)),
        ("success", Some(Class::Executed)),
        (" Success\t", Some(Class::Executed)),
        ("\u{17f}uccess", None),
        ("\u{17f}UCCESS", None),
        ("SUCCESS\u{200b}", None),
        ("\u{a0}SUCCESS", None),
        ("\u{131}n\u{131}t\u{131}ated", None),
        ("initiated", Some(Class::Initiated)),
        ("FA\u{130}LED", None),
        ("pending", Some(Class::Pending)),
    ] {
        assert_eq!(p.class_of(word), class, "{word:?}");
    }
    assert!(p.is_result_error("ERROR"));
    assert!(p.is_result_error(" error "));
    assert!(!p.is_result_error("\u{212a}"));
    // A profile word with non-ASCII letters matches itself exactly, and
    // its ASCII letters in any case.
    let p = spec("executed = [\"Pay\u{e9}\"]").unwrap();
    assert_eq!(p.class_of("PAY\u{e9}"), Some(Class::Executed));
    assert_eq!(p.class_of("pay\u{e9}"), Some(Class::Executed));
    assert_eq!(p.class_of("PAY\u{c9}"), None);
    // Two words that differ only beyond ASCII are two words.
    assert!(spec("executed = [\"\u{e9}t\u{e9}\"]\nfailed = [\"\u{c9}T\u{c9}\"]").is_ok());
    assert!(spec("executed = [\"ok\"]\nfailed = [\" OK \"]").is_err());
    assert_eq!(word_key(" \u{17f}uccess "), "\u{17f}UCCESS");
    // A word of spaces (ASCII) is empty; a non-ASCII space is a character.
    assert!(spec("executed = [\" \\t \"]").is_err());
    assert!(spec("executed = [\"\u{a0}\"]").is_ok());
    // The status call's method is matched the same way.
    let with = |m: &str| {
        spec(&format!(
            "[status_call]\nmethod = {m:?}\npath = \"/tx/{{transactionId}}\"\nstatus = \"/status\""
        ))
    };
    assert_eq!(with(" get ").unwrap().status_call.unwrap().method, "GET");
    assert!(with("G\u{415}T").is_err());
}
