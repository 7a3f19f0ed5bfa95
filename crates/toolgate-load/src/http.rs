//! Two HTTP/1.1 clients for `POST /v1/check` over one keep-alive connection.
//!
//! [`RawConn`] (the default) writes a pre-built request with one `write` and
//! reads the answer into a reused buffer: a few microseconds of CPU per
//! request, exactly one TCP connection per worker, nothing hidden. That
//! matters on a 2-core box where the generator and the daemon share the CPU:
//! every microsecond the client burns is a microsecond the daemon waits.
//! [`ReqwestConn`] goes through reqwest/hyper instead, to cross-check the raw
//! client's figures against a general-purpose one.

use std::io;
use std::net::SocketAddr;

use tokio::net::TcpStream;

/// Where to send checks, and with which token.
#[derive(Clone, Debug)]
pub(crate) struct Target {
    /// The daemon's address.
    pub addr: SocketAddr,
    /// The `Host` header value (`127.0.0.1:7878`).
    pub host: String,
    /// The full URL of the check endpoint, for reqwest and messages.
    pub check_url: String,
    /// The agent token.
    pub token: String,
}

impl Target {
    /// Parses `--url` (`http://HOST:PORT`, optionally with a path prefix)
    /// and resolves it.
    pub(crate) async fn resolve(url: &str, token: &str) -> anyhow::Result<Self> {
        let parsed = reqwest::Url::parse(url).map_err(|e| {
            anyhow::anyhow!("--url {url:?} is not a URL ({e}); e.g. http://127.0.0.1:7878")
        })?;
        anyhow::ensure!(
            parsed.scheme() == "http",
            "--url {url}: only plain http:// is supported (the daemon listens on loopback without TLS)"
        );
        let host = parsed
            .host_str()
            .ok_or_else(|| anyhow::anyhow!("--url {url} has no host"))?;
        let port = parsed.port_or_known_default().unwrap_or(80);
        let addr = tokio::net::lookup_host((host, port))
            .await
            .map_err(|e| anyhow::anyhow!("--url {url}: cannot resolve {host}: {e}"))?
            .next()
            .ok_or_else(|| anyhow::anyhow!("--url {url}: {host} resolves to no address"))?;
        let base = parsed.as_str().trim_end_matches('/');
        let host_header = match parsed.port() {
            Some(p) => format!("{host}:{p}"),
            None => host.to_owned(),
        };
        Ok(Self {
            addr,
            host: host_header,
            check_url: format!("{base}/v1/check"),
            token: token.to_owned(),
        })
    }

    /// The path part of the check URL (`/v1/check`, after any prefix).
    pub(crate) fn check_path(&self) -> String {
        reqwest::Url::parse(&self.check_url)
            .map(|u| u.path().to_owned())
            .unwrap_or_else(|_| "/v1/check".into())
    }

    /// The complete HTTP/1.1 request bytes for one body.
    pub(crate) fn raw_request(&self, body: &[u8]) -> Vec<u8> {
        let mut req = format!(
            "POST {} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            self.check_path(),
            self.host,
            self.token,
            body.len()
        )
        .into_bytes();
        req.extend_from_slice(body);
        req
    }
}

/// One request, ready for either client.
#[derive(Clone, Debug)]
pub(crate) struct Prepared {
    /// The whole HTTP/1.1 request (head and body), for [`RawConn`].
    pub raw: Vec<u8>,
    /// The JSON body alone, for [`ReqwestConn`].
    pub body: Vec<u8>,
}

/// Why a request got no HTTP answer.
#[derive(Debug)]
pub(crate) enum SendError {
    /// Connecting, writing or reading failed, or the peer closed early.
    Io(io::Error),
    /// The answer was not HTTP/1.1 this client understands.
    Protocol(String),
}

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SendError::Io(e) => write!(f, "{e}"),
            SendError::Protocol(m) => write!(f, "bad HTTP answer: {m}"),
        }
    }
}

impl From<io::Error> for SendError {
    fn from(e: io::Error) -> Self {
        SendError::Io(e)
    }
}

/// A connection that can carry one request at a time.
pub(crate) enum Conn {
    /// The hand-rolled HTTP/1.1 client.
    Raw(RawConn),
    /// reqwest, limited to one connection.
    Reqwest(ReqwestConn),
}

impl Conn {
    /// Sends one request and returns the status and body (borrowed until the
    /// next call).
    pub(crate) async fn roundtrip(&mut self, req: &Prepared) -> Result<(u16, &[u8]), SendError> {
        match self {
            Conn::Raw(c) => c.roundtrip(&req.raw).await,
            Conn::Reqwest(c) => c.roundtrip(&req.body).await,
        }
    }
}

/// An HTTP/1.1 keep-alive connection that sends pre-built requests.
pub(crate) struct RawConn {
    addr: SocketAddr,
    stream: Option<TcpStream>,
    buf: Vec<u8>,
}

impl RawConn {
    /// A connection to `addr`, opened now.
    pub(crate) async fn connect(addr: SocketAddr) -> io::Result<Self> {
        let mut c = Self {
            addr,
            stream: None,
            buf: Vec::with_capacity(8192),
        };
        c.stream = Some(open(addr).await?);
        Ok(c)
    }

    /// Sends `request` (complete HTTP/1.1 bytes) and reads one answer. Opens
    /// a new connection first if the last one was closed. The stream is
    /// taken out while in use: an error, or a timeout dropping this future,
    /// drops (closes) it, and the next request reconnects.
    pub(crate) async fn roundtrip(&mut self, request: &[u8]) -> Result<(u16, &[u8]), SendError> {
        let stream = match self.stream.take() {
            Some(s) => s,
            None => open(self.addr).await?,
        };
        write_all(&stream, request).await?;
        self.buf.clear();
        let parsed = loop {
            if let Parse::Complete(r) = parse_response(&self.buf).map_err(SendError::Protocol)? {
                break r;
            }
            let old = self.buf.len();
            self.buf.resize(old + 16 * 1024, 0);
            let read = read_some(&stream, &mut self.buf[old..]).await;
            self.buf.truncate(old + *read.as_ref().unwrap_or(&0));
            if read? == 0 {
                // A body delimited by the end of the connection is complete now.
                if let Some(r) = until_close(&self.buf) {
                    break r;
                }
                return Err(SendError::Io(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the daemon closed the connection before answering",
                )));
            }
        };
        if !parsed.close {
            self.stream = Some(stream);
        }
        if let Some(body) = parsed.body_owned {
            self.buf = body;
            return Ok((parsed.status, &self.buf));
        }
        Ok((parsed.status, &self.buf[parsed.body.0..parsed.body.1]))
    }
}

/// Reads what is available (at least one byte, or 0 at end of stream).
pub(crate) async fn read_some(stream: &TcpStream, into: &mut [u8]) -> io::Result<usize> {
    loop {
        match stream.try_read(into) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => stream.readable().await?,
            other => return other,
        }
    }
}

async fn open(addr: SocketAddr) -> io::Result<TcpStream> {
    let s = TcpStream::connect(addr).await?;
    s.set_nodelay(true)?;
    Ok(s)
}

/// Writes all of `data`.
pub(crate) async fn write_all(stream: &TcpStream, mut data: &[u8]) -> io::Result<()> {
    while !data.is_empty() {
        match stream.try_write(data) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => data = &data[n..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => stream.writable().await?,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// A parsed answer: status, where the body is, whether the server will
/// close the connection.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Response {
    /// The HTTP status code.
    pub status: u16,
    /// The body's byte range in the buffer (content-length bodies).
    pub body: (usize, usize),
    /// The decoded body, for chunked answers.
    pub body_owned: Option<Vec<u8>>,
    /// `Connection: close` (or HTTP/1.0): do not reuse the connection.
    pub close: bool,
}

/// How far parsing got.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Parse {
    /// More bytes are needed.
    Partial,
    /// One whole answer.
    Complete(Response),
}

/// Parses one HTTP/1.x answer from the start of `buf`: status line, headers,
/// and a body delimited by `Content-Length` or chunked encoding. An answer
/// with neither is [`Parse::Partial`] until the connection closes (see
/// [`until_close`]).
pub(crate) fn parse_response(buf: &[u8]) -> Result<Parse, String> {
    let Some(head_end) = find(buf, b"\r\n\r\n") else {
        if buf.len() > 64 * 1024 {
            return Err("headers longer than 64 KiB".into());
        }
        return Ok(Parse::Partial);
    };
    let head =
        std::str::from_utf8(&buf[..head_end]).map_err(|_| "headers are not UTF-8".to_owned())?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or_default();
    if !version.starts_with("HTTP/1.") {
        return Err(format!("status line {status_line:?}"));
    }
    let status: u16 = parts
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("status line {status_line:?}"))?;
    let mut close = version == "HTTP/1.0";
    let mut length = None;
    let mut chunked = false;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            return Err(format!("header line {line:?}"));
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            length = Some(
                value
                    .parse::<usize>()
                    .map_err(|_| format!("Content-Length {value:?}"))?,
            );
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value.to_ascii_lowercase().contains("chunked");
        } else if name.eq_ignore_ascii_case("connection") {
            let v = value.to_ascii_lowercase();
            close = v.contains("close") || (close && !v.contains("keep-alive"));
        }
    }
    let start = head_end + 4;
    let no_body = status == 204 || status == 304 || (100..200).contains(&status);
    if no_body {
        return Ok(Parse::Complete(Response {
            status,
            body: (start, start),
            body_owned: None,
            close,
        }));
    }
    if chunked {
        return Ok(match dechunk(&buf[start..])? {
            Some(body) => Parse::Complete(Response {
                status,
                body: (0, 0),
                body_owned: Some(body),
                close,
            }),
            None => Parse::Partial,
        });
    }
    match length {
        Some(len) if buf.len() >= start + len => Ok(Parse::Complete(Response {
            status,
            body: (start, start + len),
            body_owned: None,
            close,
        })),
        _ => Ok(Parse::Partial),
    }
}

/// The answer in `buf` when the connection has closed: complete if its
/// body was delimited by the close (no length, not chunked).
pub(crate) fn until_close(buf: &[u8]) -> Option<Response> {
    let head_end = find(buf, b"\r\n\r\n")?;
    let head = std::str::from_utf8(&buf[..head_end])
        .ok()?
        .to_ascii_lowercase();
    if head.contains("\r\ncontent-length:") || head.contains("\r\ntransfer-encoding:") {
        return None;
    }
    let status = head.split(' ').nth(1)?.parse().ok()?;
    Some(Response {
        status,
        body: (head_end + 4, buf.len()),
        body_owned: None,
        close: true,
    })
}

/// Decodes a chunked body; `None` until the last chunk and trailers are in.
fn dechunk(mut data: &[u8]) -> Result<Option<Vec<u8>>, String> {
    let mut body = Vec::new();
    loop {
        let Some(line_end) = find(data, b"\r\n") else {
            return Ok(None);
        };
        let size_text = std::str::from_utf8(&data[..line_end])
            .map_err(|_| "chunk size is not text".to_owned())?;
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| format!("chunk size {size_text:?}"))?;
        data = &data[line_end + 2..];
        if size == 0 {
            // Trailers end with an empty line.
            return Ok(
                if data.starts_with(b"\r\n") || find(data, b"\r\n\r\n").is_some() {
                    Some(body)
                } else {
                    None
                },
            );
        }
        if data.len() < size + 2 {
            return Ok(None);
        }
        body.extend_from_slice(&data[..size]);
        data = &data[size + 2..];
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// reqwest with one connection: each worker owns its own client and sends
/// one request at a time, so the pool never holds more than one.
pub(crate) struct ReqwestConn {
    client: reqwest::Client,
    url: String,
    auth: String,
    body: Vec<u8>,
}

impl ReqwestConn {
    /// A client for `target` (connects on first use).
    pub(crate) fn new(target: &Target) -> anyhow::Result<Self> {
        // reqwest is built without a TLS crypto provider of its own.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(1)
            .tcp_nodelay(true)
            .http1_only()
            .no_proxy()
            .build()?;
        Ok(Self {
            client,
            url: target.check_url.clone(),
            auth: format!("Bearer {}", target.token),
            body: Vec::new(),
        })
    }

    async fn roundtrip(&mut self, body: &[u8]) -> Result<(u16, &[u8]), SendError> {
        let to_io = |e: reqwest::Error| SendError::Io(io::Error::other(e));
        let resp = self
            .client
            .post(&self.url)
            .header("authorization", &self.auth)
            .header("content-type", "application/json")
            .body(body.to_vec())
            .send()
            .await
            .map_err(to_io)?;
        let status = resp.status().as_u16();
        self.body = resp.bytes().await.map_err(to_io)?.to_vec();
        Ok((status, &self.body))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn complete(buf: &[u8]) -> Response {
        match parse_response(buf).unwrap() {
            Parse::Complete(r) => r,
            Parse::Partial => panic!("partial: {:?}", String::from_utf8_lossy(buf)),
        }
    }

    #[test]
    fn content_length_answers_wait_for_the_whole_body() {
        let full = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 20\r\n\r\n{\"decision\":\"allow\"}";
        for cut in 0..full.len() {
            assert_eq!(
                parse_response(&full[..cut]).unwrap(),
                Parse::Partial,
                "cut at {cut}"
            );
        }
        let r = complete(full);
        assert_eq!(r.status, 200);
        assert_eq!(&full[r.body.0..r.body.1], b"{\"decision\":\"allow\"}");
        assert!(!r.close);
    }

    #[test]
    fn chunked_answers_are_decoded() {
        let full = b"HTTP/1.1 401 Unauthorized\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;x=y\r\n world\r\n0\r\n\r\n";
        for cut in 0..full.len() {
            assert_eq!(
                parse_response(&full[..cut]).unwrap(),
                Parse::Partial,
                "cut at {cut}"
            );
        }
        let r = complete(full);
        assert_eq!(r.status, 401);
        assert_eq!(r.body_owned.as_deref(), Some(&b"hello world"[..]));
    }

    #[test]
    fn connection_close_and_bodies_ended_by_close() {
        let r = complete(
            b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
        );
        assert!(r.close);
        assert_eq!(r.status, 503);
        let r = complete(b"HTTP/1.1 204 No Content\r\n\r\n");
        assert_eq!(r.body.0, r.body.1);
        let buf = b"HTTP/1.0 200 OK\r\n\r\nbody";
        assert_eq!(parse_response(buf).unwrap(), Parse::Partial);
        let r = until_close(buf).unwrap();
        assert_eq!((&buf[r.body.0..r.body.1], r.status), (&b"body"[..], 200));
        assert!(until_close(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nbody").is_none());
    }

    #[test]
    fn garbage_is_a_protocol_error() {
        assert!(parse_response(b"SSH-2.0-OpenSSH\r\n\r\n").is_err());
        assert!(parse_response(b"HTTP/1.1 abc\r\n\r\n").is_err());
        assert!(parse_response(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n").is_err());
        assert!(
            parse_response(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n").is_err()
        );
    }

    #[tokio::test]
    async fn a_target_builds_the_request_bytes() {
        let t = Target::resolve("http://127.0.0.1:7878/", "tok")
            .await
            .unwrap();
        assert_eq!(t.check_url, "http://127.0.0.1:7878/v1/check");
        let req = String::from_utf8(t.raw_request(b"{}")).unwrap();
        assert_eq!(
            req,
            "POST /v1/check HTTP/1.1\r\nHost: 127.0.0.1:7878\r\nAuthorization: Bearer tok\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
        );
        let t = Target::resolve("http://localhost:9/gate", "t")
            .await
            .unwrap();
        assert_eq!(t.check_path(), "/gate/v1/check");
        assert!(Target::resolve("https://127.0.0.1:1", "t").await.is_err());
        assert!(Target::resolve("127.0.0.1:7878", "t").await.is_err());
    }
}
