//! The TLS settings of a client's pools, built once and shared.

use crate::client::error::{Error, Result};
use crate::message;
use crate::validate::FIELD;

/// The TLS settings of a client: the platform's roots (rustls-platform-verifier, as reqwest
/// sets up by itself), plus `ca_bundle`'s, ALPN for HTTP/2 and 1.1.
///
/// Built here rather than by reqwest because reqwest loads and parses the system's whole
/// certificate store for every client it builds (milliseconds of base64 decoding), and a
/// client has a pool per thread that uses it. Built once, the settings are shared: once per
/// process without `ca_bundle`, once per client with one.
pub fn tls_config(ca_bundle: Option<&std::path::Path>) -> Result<rustls::ClientConfig> {
    // The platform's roots, per value of the variables that move them (read by
    // rustls-native-certs): a process that changes them gets fresh settings.
    //
    // Only ever tried, never waited for: a process forked while another thread held the
    // lock would otherwise wait for ever in its child (no thread there will give it back).
    // A client that finds it taken builds its settings itself.
    type Cached = Option<((Option<String>, Option<String>), rustls::ClientConfig)>;
    static PLATFORM: std::sync::Mutex<Cached> = std::sync::Mutex::new(None);
    let cache = || match PLATFORM.try_lock() {
        Ok(held) => Some(held),
        Err(std::sync::TryLockError::Poisoned(e)) => Some(e.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => None,
    };
    let env_key = (
        std::env::var("SSL_CERT_FILE").ok(),
        std::env::var("SSL_CERT_DIR").ok(),
    );
    if ca_bundle.is_none() {
        if let Some(cached) = cache() {
            if let Some((key, done)) = cached.as_ref() {
                if *key == env_key {
                    return Ok(done.clone());
                }
            }
        }
    }
    let mut extra = Vec::new();
    if let Some(path) = ca_bundle {
        use rustls::pki_types::pem::PemObject;
        use rustls::pki_types::CertificateDer;
        let pem = std::fs::read(path).map_err(|e| {
            Error::validation(
                "ca_bundle",
                message![FIELD, format!(" {} could not be read: {e}", path.display())],
            )
        })?;
        for cert in CertificateDer::pem_slice_iter(&pem) {
            extra.push(cert.map_err(|e| {
                Error::validation(
                    "ca_bundle",
                    message![
                        FIELD,
                        format!(" {} is not a PEM bundle: {e}", path.display())
                    ],
                )
            })?);
        }
        if extra.is_empty() {
            return Err(Error::validation(
                "ca_bundle",
                message![FIELD, format!(" {} holds no certificate", path.display())],
            ));
        }
    }
    let provider = rustls::crypto::CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| std::sync::Arc::new(rustls::crypto::ring::default_provider()));
    let tls_error = |e: rustls::Error| Error::Config(format!("TLS could not be set up: {e}"));
    let verifier = if extra.is_empty() {
        rustls_platform_verifier::Verifier::new(provider.clone())
    } else {
        rustls_platform_verifier::Verifier::new_with_extra_roots(extra, provider.clone())
    }
    .map_err(tls_error)?;
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(tls_error)?
        .dangerous() // only to install the platform verifier, which does verify
        .with_custom_certificate_verifier(std::sync::Arc::new(verifier))
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    if ca_bundle.is_none() {
        if let Some(mut cached) = cache() {
            *cached = Some((env_key, tls.clone()));
        }
    }
    Ok(tls)
}
