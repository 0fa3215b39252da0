//! Web pages: a site the user visits can send requests to a server on
//! their own computer. Two guards keep such pages out unless the user lets
//! one in with `--cors-origin`:
//! - a request carrying an `Origin` (browsers send one on every
//!   cross-site fetch and form post; the SDKs and curl send none) is
//!   refused unless that origin is listed — without this a page could
//!   post audio to the server even though it could not read the answer;
//! - on a loopback address, a request must be addressed to the loopback
//!   (`Host: localhost`, `127.0.0.1`, `[::1]`): a page that points its own
//!   domain at 127.0.0.1 (DNS rebinding) is same-origin to the browser,
//!   sends no `Origin` on a GET, and could otherwise read the answers.
//!
//! Listed origins get CORS headers (tower-http's `CorsLayer`), so a page
//! there can read what the server answers.

use std::net::IpAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tower_http::cors::{AllowOrigin, CorsLayer};

use crate::error::ApiError;

/// Which web pages may call the server, and on which address it listens.
#[derive(Debug, Clone)]
pub struct BrowserPolicy {
    /// Origins (`https://app.example.com`, `http://localhost:5173`) whose
    /// pages may call the server and read its answers.
    origins: Vec<HeaderValue>,
    /// Where the server listens: on a loopback address, `Host` must name
    /// the loopback.
    host: IpAddr,
}

/// An origin as `--cors-origin` takes it: scheme and host, with a port if
/// any, nothing after.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("`{0}` is not an origin: write it as http://HOST or https://HOST[:PORT], without a path (one --cors-origin per origin; `*` is not accepted, list each site)")]
pub struct BadOrigin(pub String);

pub fn parse_origin(text: &str) -> Result<String, BadOrigin> {
    let bad = || BadOrigin(text.to_string());
    let (scheme, rest) = ["http://", "https://"]
        .into_iter()
        .find_map(|scheme| text.strip_prefix(scheme).map(|rest| (scheme, rest)))
        .ok_or_else(bad)?;
    let host = rest.strip_suffix('/').unwrap_or(rest);
    let host_ok = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-.:[]".contains(c));
    if !host_ok {
        return Err(bad());
    }
    // Browsers send origins in lower case, without a trailing slash.
    Ok(format!("{scheme}{}", host.to_ascii_lowercase()))
}

impl BrowserPolicy {
    /// The policy for origins as [`parse_origin`] writes them.
    pub fn new(origins: &[String], host: IpAddr) -> Result<Self, BadOrigin> {
        let origins = origins
            .iter()
            .map(|o| {
                let parsed = parse_origin(o)?;
                HeaderValue::from_str(&parsed).map_err(|_| BadOrigin(o.clone()))
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { origins, host })
    }

    /// CORS headers for the listed origins (none at all without any).
    pub fn cors(&self) -> CorsLayer {
        CorsLayer::new()
            .allow_origin(AllowOrigin::list(self.origins.clone()))
            .allow_methods([Method::GET, Method::POST])
            .allow_headers([header::AUTHORIZATION, header::CONTENT_TYPE])
    }

    fn origin_allowed(&self, origin: &HeaderValue) -> bool {
        self.origins.iter().any(|o| o == origin)
    }
}

/// Refuses requests from pages that were not let in (see the module doc).
pub async fn guard(
    State(policy): State<Arc<BrowserPolicy>>,
    request: Request,
    next: Next,
) -> Response {
    if policy.host.is_loopback() {
        let host = request
            .headers()
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        if !names_loopback(host) {
            tracing::warn!("refused a request addressed to `{host}` (not this computer)");
            return ApiError::forbidden(
                format!(
                    "this server answers only requests addressed to this computer \
                     (Host: localhost, 127.0.0.1 or [::1]), not `{host}`: a web page may be \
                     trying to reach it under another name"
                ),
                "forbidden_host",
            )
            .into_response();
        }
    }
    if let Some(origin) = request.headers().get(header::ORIGIN) {
        if !policy.origin_allowed(origin) {
            let origin = origin.to_str().unwrap_or("?");
            tracing::warn!(
                "refused a request from a web page at {origin} (not listed with --cors-origin)"
            );
            // `null` is a sandboxed frame or a local file: any page can be
            // that, so it is never listed (parse_origin refuses it).
            let advice = if parse_origin(origin).is_ok() {
                format!("to let that site use this server, start it with --cors-origin {origin}")
            } else {
                "such pages (sandboxed frames, local files) cannot be allowed: call the server \
                 from a program or from a page served over http(s)"
                    .to_string()
            };
            return ApiError::forbidden(
                format!("requests from web pages at {origin} are refused; {advice}"),
                "forbidden_origin",
            )
            .into_response();
        }
    }
    next.run(request).await
}

/// Whether a `Host` header (name, optional port) names this computer: a
/// loopback address, `localhost`, or the computer's own name. HTTP/1.1
/// requires the header; a request without one is refused.
fn names_loopback(host: &str) -> bool {
    names_this_computer(host, &gethostname::gethostname().to_string_lossy())
}

fn names_this_computer(host: &str, own_name: &str) -> bool {
    let name = match host.strip_prefix('[') {
        // [::1]:2022
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    let name = name.to_ascii_lowercase();
    name == "localhost"
        || name.ends_with(".localhost")
        || (!own_name.is_empty() && name == own_name.to_ascii_lowercase())
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_scheme_and_host_only() {
        assert_eq!(
            parse_origin("https://App.Example.com/").unwrap(),
            "https://app.example.com"
        );
        assert_eq!(
            parse_origin("http://[::1]:8080").unwrap(),
            "http://[::1]:8080"
        );
        assert_eq!(
            parse_origin("http://localhost:5173").unwrap(),
            "http://localhost:5173"
        );
        for bad in [
            "*",
            "example.com",
            "https://",
            "https://a.com/path",
            "ftp://a.com",
        ] {
            assert!(parse_origin(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn only_loopback_names_pass_the_host_check() {
        for ok in [
            "localhost",
            "localhost:2022",
            "127.0.0.1:2022",
            "127.0.0.5",
            "[::1]:2022",
            "app.localhost:80",
        ] {
            assert!(names_loopback(ok), "{ok}");
        }
        for bad in [
            "",
            "evil.example:2022",
            "192.168.1.2:2022",
            "localhost.evil.example",
            "[::2]:80",
        ] {
            assert!(!names_loopback(bad), "{bad}");
        }
    }
}
