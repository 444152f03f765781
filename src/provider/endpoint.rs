//! The provider's base URL: the rules it must follow before any request
//! leaves (https except on this machine; no credentials, query or fragment,
//! which would end up in logs, the database and reports) and the display
//! form shown everywhere else. Error messages never repeat the raw input,
//! which may hold a password.

use std::net::IpAddr;
use url::Url;

/// A checked base URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseUrl {
    url: Url,
    display: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BaseUrlError {
    #[error("base_url is not a valid URL ({0}); write it as https://api.provider.example/v1")]
    Invalid(String),
    #[error(
        "base_url {0} must use https (plain http is allowed only for 127.0.0.1, ::1 or localhost)"
    )]
    NotHttps(String),
    #[error(
        "base_url {0} carries a user name or password; remove it (the API key goes in {key}, never in the URL)",
        key = super::API_KEY_ENV
    )]
    Credentials(String),
    #[error(
        "base_url {0} has a query string or fragment; remove it (the paths /initiates, /executes and /pay are appended to the base URL)"
    )]
    QueryOrFragment(String),
}

/// True for 127.0.0.0/8, ::1 and `localhost`.
fn is_loopback(url: &Url) -> bool {
    let host = url.host_str().unwrap_or("");
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// `scheme://host[:port]/path` without user info, query or fragment, and
/// without a trailing `/`.
fn display(url: &Url) -> String {
    let mut s = format!("{}://{}", url.scheme(), url.host_str().unwrap_or(""));
    if let Some(port) = url.port() {
        s.push_str(&format!(":{port}"));
    }
    s.push_str(url.path().trim_end_matches('/'));
    s
}

impl BaseUrl {
    pub fn parse(text: &str) -> Result<BaseUrl, BaseUrlError> {
        let url = Url::parse(text.trim()).map_err(|e| BaseUrlError::Invalid(e.to_string()))?;
        if url.cannot_be_a_base() || url.host().is_none() {
            return Err(BaseUrlError::Invalid("no host".into()));
        }
        let shown = display(&url);
        if !url.username().is_empty() || url.password().is_some() {
            return Err(BaseUrlError::Credentials(shown));
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(BaseUrlError::QueryOrFragment(shown));
        }
        match url.scheme() {
            "https" => {}
            "http" if is_loopback(&url) => {}
            _ => return Err(BaseUrlError::NotHttps(shown)),
        }
        Ok(BaseUrl {
            display: shown,
            url,
        })
    }

    /// The form stored in the database and shown in messages.
    pub fn display(&self) -> &str {
        &self.display
    }

    /// `base/path` for one of the provider's calls.
    pub fn join(&self, path: &str) -> Url {
        let mut url = self.url.clone();
        let base = self.url.path().trim_end_matches('/');
        url.set_path(&format!("{base}/{path}"));
        url
    }

    /// [`BaseUrl::join`] in the form the HTTP transport sends.
    pub fn join_uri(&self, path: &str) -> Result<http::Uri, BaseUrlError> {
        let url = self.join(path);
        url.as_str()
            .parse()
            .map_err(|e: http::uri::InvalidUri| BaseUrlError::Invalid(format!("{url}: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_or_loopback_only() {
        assert!(BaseUrl::parse("https://api.example/v1").is_ok());
        for ok in [
            "http://127.0.0.1:8080",
            "http://127.9.9.9/x",
            "http://[::1]:9/",
            "http://localhost:3000",
        ] {
            assert!(BaseUrl::parse(ok).is_ok(), "{ok}");
        }
        for bad in ["http://api.example", "http://10.0.0.1", "ftp://127.0.0.1"] {
            assert!(
                matches!(BaseUrl::parse(bad), Err(BaseUrlError::NotHttps(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            BaseUrl::parse("not a url"),
            Err(BaseUrlError::Invalid(_))
        ));
    }

    #[test]
    fn credentials_query_fragment_refused_without_echoing_secret() {
        let e = BaseUrl::parse("https://bob:s3cret@api.example/v1").unwrap_err();
        assert!(matches!(e, BaseUrlError::Credentials(_)));
        let text = e.to_string();
        assert!(!text.contains("s3cret") && !text.contains("bob"), "{text}");
        assert!(text.contains("https://api.example/v1"), "{text}");
        let e = BaseUrl::parse("https://api.example/v1?key=sk_live_x").unwrap_err();
        assert!(matches!(e, BaseUrlError::QueryOrFragment(_)));
        assert!(!e.to_string().contains("sk_live_x"));
        assert!(matches!(
            BaseUrl::parse("https://api.example/v1#frag"),
            Err(BaseUrlError::QueryOrFragment(_))
        ));
    }

    #[test]
    fn join_and_display() {
        let b = BaseUrl::parse("https://api.example:8443/v1/").unwrap();
        assert_eq!(b.display(), "https://api.example:8443/v1");
        assert_eq!(
            b.join("executes").as_str(),
            "https://api.example:8443/v1/executes"
        );
        let b = BaseUrl::parse("http://127.0.0.1:9").unwrap();
        assert_eq!(b.join("pay").as_str(), "http://127.0.0.1:9/pay");
        assert_eq!(b.display(), "http://127.0.0.1:9");
    }
}
