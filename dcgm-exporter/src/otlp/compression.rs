//! The compression of OTLP pushes: `--otlp-compression none|gzip`, or the standard
//! `OTEL_EXPORTER_OTLP_[METRICS_]COMPRESSION` (default `none`, as the OTLP exporter
//! specification says). Over gRPC it is the protocol's own message compression (tonic's,
//! `grpc-encoding: gzip`); over OTLP/HTTP the request body is gzipped here (flate2) and sent
//! with `Content-Encoding: gzip` — hyper's client compresses nothing by itself.

use std::io::Write as _;

use bytes::Bytes;

/// How pushes are compressed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Compression {
    /// Sent as they are.
    #[default]
    None,
    /// gzip.
    Gzip,
}

/// A compression other than `none` and `gzip`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("OTLP compression {value:?} (from {from}): give none or gzip")]
pub struct UnknownCompression {
    /// The value.
    pub value: String,
    /// The flag or variable it came from.
    pub from: &'static str,
}

/// The gzip level, the one tonic uses for gRPC (flate2's default), so that both protocols
/// cost the same.
const LEVEL: u32 = 6;

impl Compression {
    /// Parses a setting (`none`, `gzip`, any case, blanks trimmed) given by `from`.
    ///
    /// # Errors
    ///
    /// [`UnknownCompression`] for anything else (`deflate`, `zstd` are not in the OTLP
    /// specification).
    pub fn parse(value: &str, from: &'static str) -> Result<Self, UnknownCompression> {
        match value.trim().to_ascii_lowercase().as_str() {
            "none" => Ok(Self::None),
            "gzip" => Ok(Self::Gzip),
            _ => Err(UnknownCompression {
                value: value.to_string(),
                from,
            }),
        }
    }

    /// The gRPC message encoding to send with (`None`: uncompressed).
    pub fn grpc_encoding(self) -> Option<tonic::codec::CompressionEncoding> {
        match self {
            Self::None => None,
            Self::Gzip => Some(tonic::codec::CompressionEncoding::Gzip),
        }
    }

    /// The `Content-Encoding` of an OTLP/HTTP body (`None`: no header).
    pub fn content_encoding(self) -> Option<&'static str> {
        match self {
            Self::None => None,
            Self::Gzip => Some("gzip"),
        }
    }

    /// The OTLP/HTTP body of `request`: the request itself, or its gzip.
    ///
    /// # Errors
    ///
    /// What the compressor reports (writing to memory: only if it runs out).
    pub fn http_body(self, request: &Bytes) -> std::io::Result<Bytes> {
        match self {
            Self::None => Ok(request.clone()),
            Self::Gzip => {
                // A request of the simulated node compresses about 20 times (103 KB to
                // 4.5 KB): an eighth is room enough, and the vector grows if not.
                let out = Vec::with_capacity(request.len() / 8 + 64);
                let mut e = flate2::write::GzEncoder::new(out, flate2::Compression::new(LEVEL));
                e.write_all(request)?;
                Ok(Bytes::from(e.finish()?))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read as _;

    #[test]
    fn settings_parse_and_others_are_refused() {
        assert_eq!(Compression::parse("gzip", "x"), Ok(Compression::Gzip));
        assert_eq!(Compression::parse(" GZIP ", "x"), Ok(Compression::Gzip));
        assert_eq!(Compression::parse("none", "x"), Ok(Compression::None));
        let e = Compression::parse("zstd", "--otlp-compression").unwrap_err();
        assert_eq!(e.from, "--otlp-compression");
        assert!(e.to_string().contains("none or gzip"), "{e}");
        assert_eq!(Compression::default(), Compression::None);
    }

    #[test]
    fn a_gzipped_body_gunzips_to_the_request() {
        let request = Bytes::from(b"\x0a\x03abc".repeat(1000));
        assert_eq!(Compression::None.http_body(&request).unwrap(), request);
        let body = Compression::Gzip.http_body(&request).unwrap();
        assert_eq!(&body[..2], b"\x1f\x8b");
        assert!(body.len() < request.len() / 10, "{}", body.len());
        let mut back = Vec::new();
        flate2::read::GzDecoder::new(&body[..])
            .read_to_end(&mut back)
            .unwrap();
        assert_eq!(back, request);
        assert_eq!(Compression::Gzip.content_encoding(), Some("gzip"));
        assert_eq!(Compression::None.content_encoding(), None);
        assert!(Compression::None.grpc_encoding().is_none());
    }
}
