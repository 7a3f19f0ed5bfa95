//! The daemon client's reading of answers: every piece boundary (inside
//! multi-byte characters too) reads the same answer, and every answer it
//! cannot read exactly, and every daemon failure, is an error (which the
//! hook turns into its fail-closed answer).

use super::*;
use std::net::TcpListener;
use std::thread;
use toolgate_core::{Layer, RiskClass};

/// A body with one-, two-, three- and four-byte characters.
const BODY: &str = "{\"why\":\"a é ✓ 🦀\"}";

fn with_length(body: &[u8]) -> Vec<u8> {
    let mut v = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    v.extend_from_slice(body);
    v
}

/// `body` in chunks of `size` bytes (cutting through characters).
fn chunked(body: &[u8], size: usize) -> Vec<u8> {
    let mut v = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for c in body.chunks(size) {
        v.extend_from_slice(format!("{:x};ext=1\r\n", c.len()).as_bytes());
        v.extend_from_slice(c);
        v.extend_from_slice(b"\r\n");
    }
    v.extend_from_slice(b"0\r\nx-trailer: 1\r\n\r\n");
    v
}

/// Feeds `pieces` in turn, as the client does: the answer as soon as it is
/// complete, or the error (also when the bytes run out before the answer
/// is complete, as a closed connection would).
fn read(pieces: &[&[u8]]) -> Result<(u16, String), String> {
    let mut r = AnswerReader::default();
    for p in pieces {
        if let Some(done) = r.push(p)? {
            return Ok(done);
        }
    }
    Err(r.ended())
}

fn whole(raw: &[u8]) -> Result<(u16, String), String> {
    read(&[raw])
}

#[test]
fn every_split_reads_the_same_answer() {
    let want = Ok((200, BODY.to_string()));
    let mut answers = vec![with_length(BODY.as_bytes())];
    for size in 1..=4 {
        answers.push(chunked(BODY.as_bytes(), size));
    }
    for raw in &answers {
        assert_eq!(whole(raw), want);
        for at in 0..=raw.len() {
            let (a, b) = raw.split_at(at);
            assert_eq!(read(&[a, b]), want, "split at {at}");
        }
        let bytes: Vec<&[u8]> = raw.chunks(1).collect();
        assert_eq!(read(&bytes), want, "byte by byte");
    }
}

#[test]
fn what_follows_the_answer_is_not_read() {
    let want = Ok((200, BODY.to_string()));
    for raw in [with_length(BODY.as_bytes()), chunked(BODY.as_bytes(), 3)] {
        let more = [raw.as_slice(), b"HTTP/1.1 200 OK\r\n\xff"].concat();
        assert_eq!(whole(&more), want);
        for at in 0..=more.len() {
            let (a, b) = more.split_at(at);
            assert_eq!(read(&[a, b]), want, "split at {at}");
        }
    }
}

#[test]
fn chunked_bodies_are_joined() {
    assert_eq!(
        dechunk(b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n").unwrap(),
        Some(b"hello world".to_vec())
    );
    assert!(dechunk(b"zz\r\n").is_err());
    // A short chunk is incomplete, and an answer that ends there an error.
    assert_eq!(dechunk(b"9\r\nshort"), Ok(None));
    let mut cut = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    cut.extend_from_slice(b"9\r\nshort");
    assert!(whole(&cut).is_err());
}

#[test]
fn what_it_cannot_read_exactly_is_an_error() {
    let ok = with_length(BODY.as_bytes());
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("nothing", Vec::new()),
        ("head cut short", b"HTTP/1.1 200 OK\r\ncontent-len".to_vec()),
        ("body cut short", ok[..ok.len() - 1].to_vec()),
        ("body cut inside a character", ok[..ok.len() - 4].to_vec()),
        ("not UTF-8", with_length(b"{\"why\":\"\xff\xfe\"}")),
        (
            "UTF-8 cut inside a character",
            with_length(&BODY.as_bytes()[..BODY.len() - 3]),
        ),
        ("no length", b"HTTP/1.1 200 OK\r\n\r\n{}".to_vec()),
        (
            "length and chunked",
            b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\ntransfer-encoding: chunked\r\n\r\n{}"
                .to_vec(),
        ),
        (
            "two lengths",
            b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\n{}".to_vec(),
        ),
        (
            "a signed length",
            b"HTTP/1.1 200 OK\r\ncontent-length: +2\r\n\r\n{}".to_vec(),
        ),
        (
            "gzip",
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n\r\n".to_vec(),
        ),
        (
            "HTTP/2",
            b"HTTP/2 200\r\ncontent-length: 2\r\n\r\n{}".to_vec(),
        ),
        (
            "no status",
            b"HTTP/1.1 OK\r\ncontent-length: 2\r\n\r\n{}".to_vec(),
        ),
        (
            "long status",
            b"HTTP/1.1 2000 OK\r\ncontent-length: 2\r\n\r\n{}".to_vec(),
        ),
        (
            "bare LF",
            b"HTTP/1.1 200 OK\ncontent-length: 2\r\n\r\n{}".to_vec(),
        ),
        (
            "a nameless header",
            b"HTTP/1.1 200 OK\r\n: x\r\ncontent-length: 2\r\n\r\n{}".to_vec(),
        ),
        (
            "a chunk longer than its size",
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1\r\nab\r\n0\r\n\r\n".to_vec(),
        ),
        (
            "over 4 MiB",
            [
                b"HTTP/1.1 200 OK\r\ncontent-length: 5000000\r\n\r\n".as_slice(),
                &vec![b'a'; 5_000_000],
            ]
            .concat(),
        ),
    ];
    for (what, raw) in cases {
        assert!(whole(&raw).is_err(), "{what}: {:?}", whole(&raw));
        let bytes: Vec<&[u8]> = raw.chunks(1).take(100_000).collect();
        if raw.len() <= 100_000 {
            assert!(read(&bytes).is_err(), "{what}, byte by byte");
        }
    }
    // Statuses other than 200 are read (the caller refuses them).
    assert_eq!(
        whole(b"HTTP/1.0 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n"),
        Ok((503, String::new()))
    );
    assert_eq!(whole(b"HTTP/1.1 204\r\n\r\n"), Ok((204, String::new())));
}

/// A daemon on 127.0.0.1 that reads one request and writes `answer` in
/// pieces of `piece` bytes, pausing between them; its address.
fn fake_daemon(answer: Vec<u8>, piece: usize) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let mut req = Vec::new();
        let mut buf = [0u8; 4096];
        // The request's head, then its body (the client sends both at once).
        while find(&req, b"\r\n\r\n").is_none() {
            match s.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => req.extend_from_slice(&buf[..n]),
            }
        }
        for p in answer.chunks(piece.max(1)) {
            if s.write_all(p).and_then(|()| s.flush()).is_err() {
                return;
            }
            thread::sleep(Duration::from_millis(1));
        }
    });
    format!("http://{addr}")
}

fn call() -> ToolCall {
    serde_json::from_value(json!({"tool": "Bash", "params": {"command": "ls"}})).unwrap()
}

fn decision_json() -> String {
    let d = Decision::new(
        Verdict::Allow,
        RiskClass::R0,
        0,
        Layer::Policy,
        "listed ✓ — ok 🦀",
    );
    serde_json::to_string(&d).unwrap()
}

#[test]
fn a_daemon_writing_in_pieces_is_read_whole() {
    let body = decision_json();
    for piece in [1, 2, 3, 7, 64] {
        for raw in [with_length(body.as_bytes()), chunked(body.as_bytes(), 5)] {
            let url = fake_daemon(raw, piece);
            let d = post_check(&url, "t", &call(), None).expect("a whole answer");
            assert_eq!(d.decision, Verdict::Allow);
            assert!(d.reason.ends_with("listed ✓ — ok 🦀"), "{}", d.reason);
        }
    }
}

#[test]
fn every_daemon_failure_is_an_error() {
    let body = decision_json();
    let ok = with_length(body.as_bytes());
    let failures: Vec<(&str, Vec<u8>)> = vec![
        ("closed at once", Vec::new()),
        ("short body", ok[..ok.len() - 2].to_vec()),
        (
            "bad status",
            [
                b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: ".as_slice(),
                body.len().to_string().as_bytes(),
                b"\r\n\r\n",
                body.as_bytes(),
            ]
            .concat(),
        ),
        (
            "bad status line",
            b"HTTX/1.1 200 OK\r\ncontent-length: 0\r\n\r\n".to_vec(),
        ),
        ("bad JSON", with_length(b"{\"decision\":")),
        ("not a Decision", with_length(b"{\"why\":\"\xc3\xa9\"}")),
        (
            "bad UTF-8",
            with_length(
                &body
                    .bytes()
                    .map(|b| if b == 0xf0 { 0xff } else { b })
                    .collect::<Vec<u8>>(),
            ),
        ),
        (
            "no length",
            [b"HTTP/1.1 200 OK\r\n\r\n".as_slice(), body.as_bytes()].concat(),
        ),
    ];
    for (what, raw) in failures {
        let url = fake_daemon(raw, 3);
        let e = post_check(&url, "t", &call(), None).expect_err(what);
        assert!(e.to_string().contains("daemon"), "{what}: {e:#}");
    }
    // Nobody listening.
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    drop(l);
    let e = post_check(&url, "t", &call(), None).expect_err("refused");
    assert!(e.to_string().contains("did not answer"), "{e:#}");
}

#[test]
fn a_daemon_that_stops_answering_times_out() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    // Accepted by the kernel, never answered.
    let started = Instant::now();
    let e = http_post(
        &url,
        "/v1/check",
        "t",
        "{}",
        Duration::from_millis(300),
        None,
    )
    .expect_err("a timeout");
    assert!(e.to_string().contains("did not answer"), "{e:#}");
    assert!(started.elapsed() < Duration::from_secs(5));
    drop(l);
}
