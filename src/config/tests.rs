//! Tests of `payrun.toml`: unknown keys, defaults, rate and concurrency keys.
use super::*;

#[test]
fn unknown_key_is_named() {
    let err = Config::parse("rate = 5\nambigous = \"hold\"\n").unwrap_err();
    let msg = format!("{err:#}");
    assert!(msg.contains("ambigous"), "{msg}");
}

#[test]
fn unknown_sender_key_is_named() {
    let err = Config::parse("[sender]\nemial = \"a@b.c\"\n").unwrap_err();
    assert!(format!("{err:#}").contains("emial"));
}

#[test]
fn full_config_parses() {
    let cfg = Config::parse(
        r#"
base_url = "https://api.example/v1"
api_key_file = "key.txt"
rate = 40
concurrency = 8
ambiguous = "resend"
amount_unit = "minor"
default_payout_method_id = "momo"
default_phone_region = "CI"
[sender]
email = "payroll@acme.example"
firstname = "Acme"
lastname = "Payroll"
address = "1 Rue du Commerce, Abidjan"
phone = "+2250700000000"
[columns]
"Montant" = "amount"
"#,
    )
    .unwrap();
    assert_eq!(cfg.rate(), 40);
    assert_eq!(cfg.concurrency(), 8);
    assert_eq!(cfg.ambiguous(), Ambiguous::Resend);
    assert_eq!(cfg.amount_unit(), AmountUnit::Minor);
    assert_eq!(cfg.columns.get("Montant").unwrap(), "amount");
}

#[test]
fn defaults() {
    let cfg = Config::parse("").unwrap();
    assert_eq!(cfg.rate(), DEFAULT_RATE);
    assert_eq!(cfg.ambiguous(), Ambiguous::Hold);
    assert_eq!(cfg.amount_unit(), AmountUnit::Major);
}

#[test]
fn zero_rate_rejected() {
    assert!(Config::parse("rate = 0").is_err());
}

#[test]
fn rate_defaults_to_auto() {
    use crate::limiter::RateMode;
    let cfg = Config::parse("").unwrap();
    assert_eq!(cfg.rate_mode(), RateMode::Auto { ceiling: None });
    assert_eq!(cfg.max_concurrency(), DEFAULT_MAX_CONCURRENCY);
    let cfg = Config::parse("rate = \"auto\"\nmax_rate = 150\nmax_concurrency = 64").unwrap();
    assert_eq!(cfg.rate_mode(), RateMode::Auto { ceiling: Some(150) });
    assert_eq!(cfg.rate(), 150);
    assert_eq!(cfg.max_concurrency(), 64);
}

#[test]
fn fixed_rate_is_a_number() {
    let cfg = Config::parse("rate = 40").unwrap();
    assert_eq!(cfg.rate_mode(), crate::limiter::RateMode::Fixed(40));
    assert_eq!(cfg.rate(), 40);
}

#[test]
fn bad_rate_values_are_named() {
    for (text, needle) in [
        ("rate = \"fast\"", "fast"),
        ("rate = 1.5", "auto"),
        ("rate = -3", "-3"),
        ("max_rate = 0", "max_rate"),
        ("rate = 40\nmax_rate = 100", "max_rate"),
        ("max_concurrency = 0", "max_concurrency"),
    ] {
        let err = format!("{:#}", Config::parse(text).unwrap_err());
        assert!(err.contains(needle), "{text}: {err}");
    }
}

#[test]
fn rate_from_the_command_line() {
    assert_eq!("auto".parse(), Ok(RateSetting::Auto));
    assert_eq!("25".parse(), Ok(RateSetting::Fixed(25)));
    assert!("0".parse::<RateSetting>().is_err());
    assert!("lots".parse::<RateSetting>().unwrap_err().contains("lots"));
    let huge = "18446744073709551615".parse::<RateSetting>().unwrap_err();
    assert!(huge.contains("too large"), "{huge}");
}

#[test]
fn concurrency_is_bounded_in_keys_and_flags() {
    assert_eq!(parse_concurrency_flag("16"), Ok(16));
    assert!(
        parse_concurrency_flag("0")
            .unwrap_err()
            .contains("at least 1")
    );
    for huge in ["18446744073709551615", "99999999999999999999999", "4097"] {
        let e = parse_concurrency_flag(huge).unwrap_err();
        assert!(e.contains("too large"), "{huge}: {e}");
    }
    assert!(parse_concurrency_flag("many").unwrap_err().contains("many"));
    let e = Config::parse("max_concurrency = 9223372036854775807").unwrap_err();
    assert!(format!("{e:#}").contains("too large"), "{e:#}");
    assert!(Config::parse("concurrency = 5000").is_err());
    assert!(Config::parse("max_concurrency = 4096").is_ok());
}

/// `language` is the key; `report_language`, its name before it covered
/// every page, still reads (existing configs keep working); both at once
/// is an error naming the key.
#[test]
fn language_and_its_old_name() {
    use crate::config::ReportLanguage;
    assert_eq!(
        Config::parse("language = \"fr\"").unwrap().language(),
        ReportLanguage::Fr
    );
    assert_eq!(
        Config::parse("report_language = \"fr\"")
            .unwrap()
            .language(),
        ReportLanguage::Fr
    );
    assert_eq!(Config::parse("").unwrap().language(), ReportLanguage::En);
    assert!(Config::parse("language = \"fr\"\nreport_language = \"en\"").is_err());
}
