//! A scrape's body as it arrives: decompressed when it came gzip-compressed, checked
//! against the URL's budgets as it streams (the run's stop flag, the time spent waiting for
//! the server, `--max-page-mib` on the decompressed bytes), and handed on in chunks that
//! end on whole UTF-8 characters, so that the page is read while it arrives and never
//! held whole ([`Stream::run`]).

use std::fmt;
use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use flate2::read::MultiGzDecoder;

/// A read's most: large enough that a 100 MiB page takes few calls, small enough that the
/// stop flag and the deadline are looked at often.
pub const CHUNK: usize = 1 << 16;

/// The least buffer a body is read with (a tiny page's Content-Length asks for less).
const LEAST_CHUNK: usize = 4 << 10;

/// Why a 200 answer's body was not read: a budget it went over, or the way it failed.
/// The headers arrived, so none of these is "no answer".
#[derive(Debug)]
pub enum BodyError {
    /// The Content-Length alone is over the limit: refused before reading a byte.
    Announced { length: u64, limit: u64 },
    /// More than the limit came (no Content-Length, or a false one): refused while reading.
    Streamed { limit: u64 },
    /// A gzip body decompressed to more than the limit from its first `wire` bytes.
    Inflated { limit: u64, wire: u64 },
    /// The deadline passed while the body came in: `took` waiting for the server (the
    /// time the monitor spent reading what came is its own, not the server's).
    TooSlow {
        bytes: u64,
        took: Duration,
        limit: Duration,
    },
    /// The run ended while the body came in.
    Stopped { bytes: u64 },
    /// The connection failed part way (closed early, reset), or the gzip stream is broken.
    Broken { bytes: u64, error: std::io::Error },
    /// The body is not UTF-8 text, so not an exposition page.
    NotText { at: u64 },
    /// Compressed in a way the monitor did not ask for.
    Encoding(String),
}

impl fmt::Display for BodyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = |t: Duration| humantime::format_duration(Duration::from_millis(t.as_millis() as u64));
        match self {
            BodyError::Announced { length, limit } => write!(
                f,
                "page too large: its Content-Length says {}, over the {} limit; refused before reading (see --max-page-mib)",
                mib(*length),
                mib(*limit)
            ),
            BodyError::Streamed { limit } => write!(
                f,
                "page too large: more than the {} limit came without a Content-Length that said so; refused while reading (see --max-page-mib)",
                mib(*limit)
            ),
            BodyError::Inflated { limit, wire } => write!(
                f,
                "page too large: its gzip body decompressed to more than the {} limit from its first {}; refused while reading (see --max-page-mib, which counts decompressed bytes)",
                mib(*limit),
                kib(*wire)
            ),
            BodyError::TooSlow { bytes, took, limit } => write!(
                f,
                "body too slow: {bytes} bytes in {}, past the {} deadline (the headers arrived; see --timeout)",
                d(*took),
                d(*limit)
            ),
            BodyError::Stopped { bytes } => write!(f, "stopped by the run's end after {bytes} bytes of the body"),
            BodyError::Broken { bytes, error } => {
                write!(f, "reading body failed after {bytes} bytes: {error}")
            }
            BodyError::NotText { at } => write!(f, "reading body failed: not UTF-8 text (byte {at})"),
            BodyError::Encoding(encoding) => write!(
                f,
                "reading body failed: sent with Content-Encoding {encoding:?}, which the monitor did not ask for (it asks for gzip)"
            ),
        }
    }
}

/// Bytes as MiB for people: "299.0 MiB".
pub fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
}

fn kib(bytes: u64) -> String {
    format!("{:.1} KiB", bytes as f64 / 1024.0)
}

/// A reader that counts the bytes read through it (a gzip body's bytes as sent).
struct Counted<R> {
    inner: R,
    bytes: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
}

/// The body as sent, or decompressed on the way.
enum Source<R> {
    Plain(R),
    /// Every member of the body (RFC 1952 allows several, one after another, as Go's
    /// reader, so Prometheus, reads them); bytes after the last that are not a member are
    /// an error, not ignored.
    Gzip(Box<MultiGzDecoder<Counted<R>>>),
}

impl<R: Read> Source<R> {
    /// By the answer's Content-Encoding: none, identity or gzip (what the monitor asks for),
    /// as a list of the codings applied (`gzip, identity` is gzip).
    fn new(inner: R, encoding: Option<&str>) -> Result<Source<R>, BodyError> {
        let given = encoding.unwrap_or("").trim().to_ascii_lowercase();
        let codings: Vec<&str> = given
            .split(',')
            .map(str::trim)
            .filter(|c| !c.is_empty() && *c != "identity")
            .collect();
        match codings.as_slice() {
            [] => Ok(Source::Plain(inner)),
            ["gzip" | "x-gzip"] => Ok(Source::Gzip(Box::new(MultiGzDecoder::new(Counted {
                inner,
                bytes: 0,
            })))),
            _ => Err(BodyError::Encoding(given)),
        }
    }

    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Source::Plain(r) => r.read(buf),
            Source::Gzip(r) => r.read(buf),
        }
    }

    /// The compressed bytes read so far, for a gzip body.
    fn wire(&self) -> Option<u64> {
        match self {
            Source::Plain(_) => None,
            Source::Gzip(r) => Some(r.get_ref().bytes),
        }
    }
}

/// One body to read, with its budgets: what the request already took of the time, the
/// deadline, the limit on decompressed bytes, and the flag that ends the run.
pub struct Stream<'a> {
    /// The time from sending the request to its headers (the server's, as the body's).
    pub before: Duration,
    pub timeout: Duration,
    pub limit: u64,
    pub stop: &'a AtomicBool,
    /// The Content-Length, which sizes the read buffer (capped at [`CHUNK`]).
    pub length: Option<u64>,
}

impl Stream<'_> {
    /// Reads `source` (sent with `encoding`) to its end, handing each chunk to `sink`: the
    /// chunks end on whole UTF-8 characters, except for the last one over the limit. The
    /// decompressed size on success.
    ///
    /// The limit is checked on every chunk, so a gzip bomb stops at the limit, not at its
    /// end; the chunk that goes over it is handed on, so that a reader with the same limit
    /// sees the page over it too.
    pub fn run(
        &self,
        source: impl Read,
        encoding: Option<&str>,
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<u64, BodyError> {
        let mut source = Source::new(source, encoding)?;
        let size = self.length.map_or(CHUNK, |n| (n as usize).saturating_add(4));
        let mut buffer = vec![0u8; size.clamp(LEAST_CHUNK, CHUNK)];
        let (mut bytes, mut cut, mut waited) = (0u64, 0usize, self.before);
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return Err(BodyError::Stopped { bytes });
            }
            if waited >= self.timeout {
                return Err(self.too_slow(bytes, waited));
            }
            let left = (self.limit - bytes).saturating_add(1);
            let room = (buffer.len() - cut).min(usize::try_from(left).unwrap_or(usize::MAX));
            let began = Instant::now();
            let read = source.read(&mut buffer[cut..cut + room]);
            waited += began.elapsed();
            let n = match read {
                Ok(0) if cut > 0 => {
                    return Err(BodyError::NotText {
                        at: bytes - cut as u64,
                    })
                }
                Ok(0) => return Ok(bytes),
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) if is_timeout(&e) => return Err(self.too_slow(bytes, waited)),
                Err(error) => return Err(BodyError::Broken { bytes, error }),
            };
            bytes += n as u64;
            let filled = cut + n;
            if bytes > self.limit {
                sink(&buffer[..filled]);
                return Err(match source.wire() {
                    Some(wire) => BodyError::Inflated {
                        limit: self.limit,
                        wire,
                    },
                    None => BodyError::Streamed { limit: self.limit },
                });
            }
            let whole = match std::str::from_utf8(&buffer[..filled]) {
                Ok(_) => filled,
                // A character cut by the read: kept for the next one.
                Err(e) if e.error_len().is_none() => e.valid_up_to(),
                Err(e) => {
                    return Err(BodyError::NotText {
                        at: bytes - filled as u64 + e.valid_up_to() as u64,
                    })
                }
            };
            sink(&buffer[..whole]);
            buffer.copy_within(whole..filled, 0);
            cut = filled - whole;
        }
    }

    fn too_slow(&self, bytes: u64, took: Duration) -> BodyError {
        BodyError::TooSlow {
            bytes,
            took,
            limit: self.timeout,
        }
    }
}

/// Whether a read failed on the deadline (the socket's, or ureq's own).
pub fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
    ) || matches!(
        e.get_ref().and_then(|inner| inner.downcast_ref::<ureq::Error>()),
        Some(ureq::Error::Timeout(_))
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn stream(limit: u64, timeout: Duration, stop: &AtomicBool) -> Stream<'_> {
        Stream {
            before: Duration::ZERO,
            timeout,
            limit,
            stop,
            length: None,
        }
    }

    /// Reads `body` through `s`, one byte at a time when `drip`: what the sink got.
    fn read(s: &Stream<'_>, body: &[u8], encoding: Option<&str>) -> (Vec<u8>, Result<u64, BodyError>) {
        let mut got = Vec::new();
        let result = s.run(body, encoding, &mut |chunk| got.extend_from_slice(chunk));
        (got, result)
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    /// A body is read within its budgets: up to the limit exactly, and refused past it,
    /// after the deadline, once the run stops, or when it is not text; each says why.
    #[test]
    fn a_body_is_read_within_its_budgets() {
        let running = AtomicBool::new(false);
        let minute = Duration::from_secs(60);
        let (got, size) = read(&stream(10, minute, &running), b"0123456789", None);
        assert_eq!((got.as_slice(), size.unwrap()), (&b"0123456789"[..], 10));
        let (_, over) = read(&stream(10, minute, &running), b"0123456789a", None);
        assert!(matches!(over, Err(BodyError::Streamed { limit: 10 })), "{over:?}");
        let big = vec![b'x'; 3 * CHUNK];
        let (got, _) = read(&stream(3 * CHUNK as u64, minute, &running), &big, None);
        assert_eq!(got.len(), 3 * CHUNK);
        let (_, late) = read(&stream(10, Duration::ZERO, &running), b"01", None);
        let late = late.unwrap_err().to_string();
        assert!(late.starts_with("body too slow: 0 bytes in 0s"), "{late}");
        let stopped = AtomicBool::new(true);
        let (_, stop) = read(&stream(10, minute, &stopped), b"01", None);
        assert!(matches!(stop, Err(BodyError::Stopped { bytes: 0 })), "{stop:?}");
        let (_, binary) = read(&stream(10, minute, &running), b"ab\xff", None);
        assert_eq!(
            binary.unwrap_err().to_string(),
            "reading body failed: not UTF-8 text (byte 2)"
        );
        let (_, cut) = read(
            &stream(10, minute, &running),
            "ab\u{e9}".as_bytes().split_last().unwrap().1,
            None,
        );
        assert_eq!(
            cut.unwrap_err().to_string(),
            "reading body failed: not UTF-8 text (byte 2)"
        );
        assert_eq!(
            BodyError::Announced {
                length: 299 << 20,
                limit: 100 << 20
            }
            .to_string(),
            "page too large: its Content-Length says 299.0 MiB, over the 100.0 MiB limit; refused before reading (see --max-page-mib)"
        );
        let (_, brotli) = read(&stream(10, minute, &running), b"x", Some("br"));
        assert!(brotli
            .unwrap_err()
            .to_string()
            .contains("Content-Encoding \"br\""));
    }

    /// Chunks end on whole characters, however the reads cut them: a page of two-byte
    /// characters read through a one-byte-at-a-time source comes out as it went in.
    #[test]
    fn chunks_end_on_whole_characters() {
        struct OneByte<'a>(&'a [u8]);
        impl Read for OneByte<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let Some((first, rest)) = self.0.split_first() else {
                    return Ok(0);
                };
                buf[0] = *first;
                self.0 = rest;
                Ok(1)
            }
        }
        let page = "temp{room=\"é\"} 21\n".repeat(50);
        let running = AtomicBool::new(false);
        let s = stream(1 << 20, Duration::from_secs(60), &running);
        let mut text = String::new();
        s.run(OneByte(page.as_bytes()), None, &mut |chunk| {
            text.push_str(std::str::from_utf8(chunk).expect("whole characters"))
        })
        .unwrap();
        assert_eq!(text, page);
    }

    /// A gzip body is read decompressed, and the limit counts decompressed bytes: a bomb
    /// (a few KiB that inflate to 64 MiB) stops at the limit, and the refusal names the
    /// limit, the decompressed size and the flag.
    #[test]
    fn gzip_is_decompressed_and_a_bomb_is_refused_at_the_limit() {
        let running = AtomicBool::new(false);
        let minute = Duration::from_secs(60);
        let page = b"vllm:num_requests_running 1\n".repeat(1000);
        let (got, size) = read(&stream(1 << 20, minute, &running), &gzip(&page), Some("gzip"));
        assert_eq!((got, size.unwrap()), (page.clone(), page.len() as u64));
        // Content-Encoding lists the codings applied: identity among them is none.
        for listed in ["gzip, identity", "identity,gzip", " GZIP "] {
            let (got, size) = read(&stream(1 << 20, minute, &running), &gzip(&page), Some(listed));
            assert_eq!(
                (got, size.unwrap()),
                (page.clone(), page.len() as u64),
                "{listed}"
            );
        }
        let (_, twice) = read(
            &stream(1 << 20, minute, &running),
            &gzip(&gzip(&page)),
            Some("gzip, gzip"),
        );
        assert!(twice.unwrap_err().to_string().contains("\"gzip, gzip\""));
        let bomb = gzip(&vec![b'\n'; 64 << 20]);
        assert!(bomb.len() < 128 << 10, "{} bytes", bomb.len());
        let (got, refused) = read(&stream(1 << 20, minute, &running), &bomb, Some("gzip"));
        assert!(
            got.len() > 1 << 20 && got.len() <= (1 << 20) + CHUNK,
            "{}",
            got.len()
        );
        let refused = refused.unwrap_err();
        assert!(
            matches!(refused, BodyError::Inflated { limit, .. } if limit == 1 << 20),
            "{refused:?}"
        );
        let said = refused.to_string();
        assert!(
            said.starts_with(
                "page too large: its gzip body decompressed to more than the 1.0 MiB limit from its first "
            ) && said
                .ends_with("; refused while reading (see --max-page-mib, which counts decompressed bytes)"),
            "{said}"
        );
        let (_, broken) = read(
            &stream(1 << 20, minute, &running),
            &gzip(&page)[..40],
            Some("gzip"),
        );
        assert!(matches!(broken, Err(BodyError::Broken { .. })), "{broken:?}");
    }

    /// A gzip body in two members is read whole (the second member's lines were lost), and
    /// bytes after a member that are not another one are an error, not ignored.
    #[test]
    fn every_gzip_member_is_read_and_trailing_bytes_are_refused() {
        let running = AtomicBool::new(false);
        let minute = Duration::from_secs(60);
        let (first, second) = (
            b"a_total{engine=\"0\"} 1\n".to_vec(),
            b"a_total{engine=\"1\"} 2\n".to_vec(),
        );
        let two = [gzip(&first), gzip(&second)].concat();
        let (got, size) = read(&stream(1 << 20, minute, &running), &two, Some("gzip"));
        assert_eq!((got, size.unwrap()), ([first.clone(), second].concat(), 44));
        let trailing = [gzip(&first), b"not gzip".to_vec()].concat();
        let (_, broken) = read(&stream(1 << 20, minute, &running), &trailing, Some("gzip"));
        assert!(matches!(broken, Err(BodyError::Broken { .. })), "{broken:?}");
    }
}
