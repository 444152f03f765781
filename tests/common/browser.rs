//! The approval page in a real browser: Debian's headless chromium, when
//! installed, renders the page to a screenshot and a DOM the tests look
//! into; without it the check is skipped, and says so.

use super::text;
use std::path::Path;
use std::process::Command;

/// Renders `page` in Debian's chromium, if installed: a screenshot that is
/// not blank and a DOM holding `needles`. Returns false (with the reason
/// printed) when there is no browser.
pub fn check_in_chromium(page: &Path, needles: &[&str]) -> bool {
    let browser = Path::new("/usr/bin/chromium");
    if !browser.exists() {
        eprintln!(
            "skipped the browser check: /usr/bin/chromium is not installed (apt-get install chromium)"
        );
        return false;
    }
    let profile = tempfile::tempdir().unwrap();
    let shot = page.with_extension("png");
    let url = format!("file://{}", page.canonicalize().unwrap().display());
    let common = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
    ];
    let out = Command::new(browser)
        .args(common)
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1000,1400")
        .arg(&url)
        .output()
        .unwrap();
    assert!(shot.exists(), "no screenshot: {}", text(&out));
    let png = std::fs::read(&shot).unwrap();
    assert!(png.starts_with(b"\x89PNG"), "not a PNG");
    assert!(
        png.len() > 20_000,
        "a blank page compresses to a few KB: {} bytes",
        png.len()
    );
    if let Ok(keep) = std::env::var("PAYRUN_KEEP_SCREENSHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }
    let out = Command::new(browser)
        .args(common)
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&out.stdout);
    for n in needles {
        assert!(dom.contains(n), "{n} not in the rendered DOM: {dom}");
    }
    true
}
