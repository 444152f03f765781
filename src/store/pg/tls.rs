//! TLS to PostgreSQL: libpq's `sslmode` and `sslrootcert` with libpq's
//! meaning for each mode (docs/store.md, "TLS"), over rustls with the same
//! crypto (ring) as the provider's https. [`plan`] is the decision (pure:
//! which checks a mode makes with the roots it was given); [`connector`]
//! builds the rustls client for it.
//!
//! | sslmode | TLS | the server's certificate |
//! |---|---|---|
//! | `disable` | never | — |
//! | `prefer` (default) | if the server offers it | not checked |
//! | `require` | always | not checked, unless a root CA file is given or at `~/.postgresql/root.crt`: then as `verify-ca` (libpq's rule) |
//! | `verify-ca` | always | signed by a trusted CA |
//! | `verify-full` | always | signed by a trusted CA, and issued for the host connected to |
//!
//! The trusted CAs: the PEM file `sslrootcert` names; `sslrootcert=system`
//! for the Mozilla roots built into payrun (webpki-roots); neither given,
//! `~/.postgresql/root.crt` if it exists (libpq), else the built-in roots
//! (libpq would refuse: a managed server with a public certificate then
//! works without a file).

use anyhow::{Context, Result, bail};
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{WebPkiSupportedAlgorithms, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, Error as TlsError, RootCertStore,
    SignatureScheme,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_postgres_rustls::MakeRustlsConnect;

/// libpq's `sslmode` values (`allow`, plain first, is not offered).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SslMode {
    Disable,
    #[default]
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    pub fn parse(value: &str) -> Result<SslMode> {
        Ok(match value {
            "disable" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            "allow" => bail!(
                "sslmode=allow (plain first, TLS only if the server insists) is not supported: \
                 use sslmode=prefer, or require/verify-full to insist on TLS"
            ),
            other => bail!(
                "sslmode={other} is not a mode: use disable, prefer, require, verify-ca or \
                 verify-full"
            ),
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }
}

/// `sslrootcert`: a PEM file, or `system` (the built-in roots).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RootCert {
    File(PathBuf),
    System,
}

impl RootCert {
    pub fn parse(value: &str) -> RootCert {
        if value == "system" {
            RootCert::System
        } else {
            RootCert::File(PathBuf::from(value))
        }
    }
}

/// What a connection does about TLS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// No TLS (`disable`, or a Unix socket, where there is none).
    Plain,
    /// TLS, the certificate unchecked; `fallback`: plain if the server
    /// offers no TLS (`prefer`).
    Unchecked { fallback: bool },
    /// TLS, the certificate's chain checked against `roots`; with `name`,
    /// also that it was issued for the host.
    Checked { roots: RootCert, name: bool },
}

/// The checks `mode` makes, given `sslrootcert` (if any) and libpq's
/// default root file (`~/.postgresql/root.crt`) if it exists.
pub fn plan(mode: SslMode, given: Option<RootCert>, default_file: Option<PathBuf>) -> Plan {
    let roots = |given: Option<RootCert>| {
        given
            .or_else(|| default_file.clone().map(RootCert::File))
            .unwrap_or(RootCert::System)
    };
    match mode {
        SslMode::Disable => Plan::Plain,
        SslMode::Prefer => Plan::Unchecked { fallback: true },
        SslMode::Require => match given.or_else(|| default_file.clone().map(RootCert::File)) {
            // libpq: "if a root CA file exists, require behaves as verify-ca".
            Some(RootCert::File(f)) => Plan::Checked {
                roots: RootCert::File(f),
                name: false,
            },
            _ => Plan::Unchecked { fallback: false },
        },
        SslMode::VerifyCa => Plan::Checked {
            roots: roots(given),
            name: false,
        },
        SslMode::VerifyFull => Plan::Checked {
            roots: roots(given),
            name: true,
        },
    }
}

/// libpq's default root file, if it exists.
pub fn default_root_file() -> Option<PathBuf> {
    let f = dirs::home_dir()?.join(".postgresql").join("root.crt");
    f.is_file().then_some(f)
}

/// The rustls connector for a plan that uses TLS (`None` for [`Plan::Plain`]).
pub fn connector(plan: &Plan) -> Result<Option<MakeRustlsConnect>> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let lenient = |check| {
        Arc::new(Lenient {
            check,
            algorithms: provider.signature_verification_algorithms,
        })
    };
    let verifier: Arc<dyn ServerCertVerifier> = match plan {
        Plan::Plain => return Ok(None),
        Plan::Unchecked { .. } => lenient(Check::Any),
        Plan::Checked { roots, name } => {
            let store = Arc::new(root_store(roots)?);
            let webpki = WebPkiServerVerifier::builder_with_provider(store, provider.clone())
                .build()
                .context("cannot set up the certificate check")?;
            if *name {
                webpki
            } else {
                lenient(Check::ChainOnly(webpki))
            }
        }
    };
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("cannot set up TLS")?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Ok(Some(MakeRustlsConnect::new(config)))
}

fn root_store(roots: &RootCert) -> Result<RootCertStore> {
    match roots {
        RootCert::System => Ok(RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        }),
        RootCert::File(path) => {
            let certs = read_pem(path)?;
            let mut store = RootCertStore::empty();
            let (added, _) = store.add_parsable_certificates(certs);
            if added == 0 {
                bail!(
                    "the root certificate file {} (sslrootcert) holds no usable CA certificate",
                    path.display()
                );
            }
            Ok(store)
        }
    }
}

fn read_pem(path: &Path) -> Result<Vec<CertificateDer<'static>>> {
    let shown = path.display();
    let certs = CertificateDer::pem_file_iter(path)
        .with_context(|| format!("cannot read the root certificate file {shown} (sslrootcert)"))?
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("the root certificate file {shown} (sslrootcert) is not PEM"))?;
    if certs.is_empty() {
        bail!("the root certificate file {shown} (sslrootcert) holds no PEM certificate");
    }
    Ok(certs)
}

/// The certificate check of a mode that does not use webpki's whole check.
#[derive(Debug)]
enum Check {
    /// `prefer`, `require` without a root file: any certificate (the
    /// handshake's signatures are still checked, so the session is the
    /// certificate's).
    Any,
    /// `verify-ca`: the chain to a trusted CA is checked (webpki checks it
    /// before the name), and only a wrong name is let through.
    ChainOnly(Arc<WebPkiServerVerifier>),
}

/// A [`Check`], with the handshake's signatures verified as webpki's own
/// verifier does: by the crypto provider's algorithms.
#[derive(Debug)]
struct Lenient {
    check: Check,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for Lenient {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, TlsError> {
        let Check::ChainOnly(webpki) = &self.check else {
            return Ok(ServerCertVerified::assertion());
        };
        match webpki.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Err(TlsError::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_mode_makes_libpqs_checks() {
        let ca = || Some(RootCert::File("ca.pem".into()));
        let home = || Some(PathBuf::from("/home/u/.postgresql/root.crt"));
        assert_eq!(plan(SslMode::Disable, ca(), home()), Plan::Plain);
        assert_eq!(
            plan(SslMode::Prefer, ca(), home()),
            Plan::Unchecked { fallback: true }
        );
        assert_eq!(
            plan(SslMode::Require, None, None),
            Plan::Unchecked { fallback: false }
        );
        assert_eq!(
            plan(SslMode::Require, Some(RootCert::System), None),
            Plan::Unchecked { fallback: false }
        );
        // A root file makes `require` check the chain (libpq's rule).
        for (given, default, file) in [
            (ca(), None, "ca.pem"),
            (None, home(), "/home/u/.postgresql/root.crt"),
        ] {
            assert_eq!(
                plan(SslMode::Require, given, default),
                Plan::Checked {
                    roots: RootCert::File(file.into()),
                    name: false
                }
            );
        }
        assert_eq!(
            plan(SslMode::VerifyCa, None, None),
            Plan::Checked {
                roots: RootCert::System,
                name: false
            }
        );
        assert_eq!(
            plan(SslMode::VerifyFull, None, home()),
            Plan::Checked {
                roots: RootCert::File("/home/u/.postgresql/root.crt".into()),
                name: true
            }
        );
        assert_eq!(
            plan(SslMode::VerifyFull, Some(RootCert::System), home()),
            Plan::Checked {
                roots: RootCert::System,
                name: true
            }
        );
    }

    #[test]
    fn modes_are_read_as_libpq_spells_them() {
        for m in [
            SslMode::Disable,
            SslMode::Prefer,
            SslMode::Require,
            SslMode::VerifyCa,
            SslMode::VerifyFull,
        ] {
            assert_eq!(SslMode::parse(m.as_str()).unwrap(), m);
        }
        let e = SslMode::parse("allow").unwrap_err().to_string();
        assert!(e.contains("use sslmode=prefer"), "{e}");
        let e = SslMode::parse("verify_full").unwrap_err().to_string();
        assert!(e.contains("verify-full"), "{e}");
        assert_eq!(RootCert::parse("system"), RootCert::System);
    }

    #[test]
    fn a_root_file_without_a_certificate_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("ca.pem");
        std::fs::write(&f, "not a certificate\n").unwrap();
        let plan = Plan::Checked {
            roots: RootCert::File(f.clone()),
            name: true,
        };
        let e = format!("{:#}", connector(&plan).err().unwrap());
        assert!(
            e.contains(&f.display().to_string()) && e.contains("sslrootcert"),
            "{e}"
        );
        let missing = Plan::Checked {
            roots: RootCert::File(dir.path().join("none.pem")),
            name: true,
        };
        let e = format!("{:#}", connector(&missing).err().unwrap());
        assert!(e.contains("cannot read the root certificate file"), "{e}");
        assert!(connector(&Plan::Plain).unwrap().is_none());
    }
}
