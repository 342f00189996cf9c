//! The checks of a request head that hyper leaves to the application: exactly one valid
//! `Host`, and a `Transfer-Encoding` that frames the body once. Each one refused is a request
//! that proxies in front of the exporter might frame differently (request smuggling).

use hyper::Version;
use hyper::header::{self, HeaderMap};
use hyper::http::request::Parts;
use hyper::http::uri::Authority;

/// Why a request head is refused (400), if it is.
pub fn check(parts: &Parts) -> Result<(), &'static str> {
    host(&parts.headers, parts.version)?;
    transfer_encoding(&parts.headers)
}

/// HTTP/1.1 requires exactly one `Host` header (RFC 9112 section 3.2), and its value must be
/// an authority (`host[:port]`, no user information); it may be empty.
fn host(headers: &HeaderMap, version: Version) -> Result<(), &'static str> {
    let mut hosts = headers.get_all(header::HOST).iter();
    let Some(value) = hosts.next() else {
        return if version == Version::HTTP_11 {
            Err("no Host")
        } else {
            Ok(())
        };
    };
    if hosts.next().is_some() {
        return Err("more than one Host");
    }
    let bytes = value.as_bytes();
    if bytes.is_empty() {
        return Ok(());
    }
    match Authority::try_from(bytes) {
        Ok(a) if !a.as_str().contains('@') => Ok(()),
        _ => Err("Host is not host[:port]"),
    }
}

/// `chunked` at most once across every `Transfer-Encoding` header (RFC 9112 section 6.1: a
/// sender must not apply it twice), and no `Transfer-Encoding` line given twice.
fn transfer_encoding(headers: &HeaderMap) -> Result<(), &'static str> {
    let values: Vec<_> = headers.get_all(header::TRANSFER_ENCODING).iter().collect();
    if values.len() > 1 {
        return Err("Transfer-Encoding given more than once");
    }
    let chunked = values
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter(|c| c.trim().eq_ignore_ascii_case("chunked"))
        .count();
    if chunked > 1 {
        return Err("chunked applied more than once");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(lines: &[(&str, &str)], version: Version) -> Parts {
        let mut b = hyper::Request::builder().uri("/metrics").version(version);
        for (k, v) in lines {
            b = b.header(*k, *v);
        }
        b.body(()).unwrap().into_parts().0
    }

    #[test]
    fn hosts_that_are_not_an_authority_are_refused() {
        let h = |v| check(&head(&[("host", v)], Version::HTTP_11));
        assert_eq!(h("a b/c@d"), Err("Host is not host[:port]"));
        assert_eq!(h("user@host"), Err("Host is not host[:port]"));
        assert_eq!(h("host/path"), Err("Host is not host[:port]"));
        assert_eq!(h("exporter:9400"), Ok(()));
        assert_eq!(h("[::1]:9400"), Ok(()));
        assert_eq!(h(""), Ok(()));
        assert_eq!(check(&head(&[], Version::HTTP_11)), Err("no Host"));
        assert_eq!(check(&head(&[], Version::HTTP_10)), Ok(()));
        let two = head(&[("host", "a"), ("host", "b")], Version::HTTP_11);
        assert_eq!(check(&two), Err("more than one Host"));
    }

    #[test]
    fn chunked_twice_is_refused_in_one_line_or_two() {
        let h = |l: &[(&str, &str)]| {
            let mut all = vec![("host", "x")];
            all.extend_from_slice(l);
            check(&head(&all, Version::HTTP_11))
        };
        assert_eq!(h(&[("transfer-encoding", "chunked")]), Ok(()));
        assert_eq!(
            h(&[
                ("transfer-encoding", "chunked"),
                ("transfer-encoding", "chunked")
            ]),
            Err("Transfer-Encoding given more than once")
        );
        assert_eq!(
            h(&[("transfer-encoding", "chunked, Chunked")]),
            Err("chunked applied more than once")
        );
    }
}
