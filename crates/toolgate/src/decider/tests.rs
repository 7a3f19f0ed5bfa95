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
            return Ok((done.status, done.body));
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

/// The daemon at `url`, with no key to check: the reading of answers alone
/// (`Decider::new` never builds one; these tests reach `post_check`).
fn unpinned(url: &str) -> Daemon {
    Daemon {
        endpoint: Endpoint::parse(url).unwrap().unwrap(),
        token: Some("t".into()),
        key: None,
        uid: None,
    }
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
            let d = post_check(&unpinned(&url), &call(), None).expect("a whole answer");
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
        let e = post_check(&unpinned(&url), &call(), None).expect_err(what);
        assert!(e.to_string().contains("daemon"), "{what}: {e:#}");
    }
    // Nobody listening.
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    drop(l);
    let e = post_check(&unpinned(&url), &call(), None).expect_err("refused");
    assert!(e.to_string().contains("did not answer"), "{e:#}");
}

#[test]
fn a_daemon_that_stops_answering_times_out() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    // Accepted by the kernel, never answered.
    let started = Instant::now();
    let e = http_post(
        &unpinned(&url),
        "/v1/check",
        "{}",
        None,
        Duration::from_millis(300),
        None,
    )
    .expect_err("a timeout");
    assert!(e.to_string().contains("did not answer"), "{e:#}");
    assert!(started.elapsed() < Duration::from_secs(5));
    drop(l);
}

/// Reads one whole request (head and `Content-Length` body) from `s`:
/// the nonce header's value and the body.
fn read_request(s: &mut impl Read) -> Option<(Option<String>, Vec<u8>)> {
    let mut req = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = find(&req, b"\r\n\r\n") {
            break i;
        }
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return None,
            Ok(n) => req.extend_from_slice(&buf[..n]),
        }
    };
    let head = String::from_utf8_lossy(&req[..head_end]).to_string();
    let header = |name: &str| {
        head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
    };
    let len: usize = header("content-length")?.parse().ok()?;
    while req.len() < head_end + 4 + len {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return None,
            Ok(n) => req.extend_from_slice(&buf[..n]),
        }
    }
    Some((
        header(proof::NONCE_HEADER),
        req[head_end + 4..head_end + 4 + len].to_vec(),
    ))
}

/// How a fake daemon signs its answer.
#[derive(Clone, Copy, Debug)]
enum Signing {
    /// As the real one does.
    Right,
    /// Not at all.
    Unsigned,
    /// With a nonce of its own (an answer captured earlier, replayed).
    OtherNonce,
    /// Over the decision `block`, answering `allow`.
    OtherDecision,
    /// Over another request than the one sent.
    OtherRequest,
}

/// A daemon on 127.0.0.1 that answers one check with an allow, signed by
/// `key` as `how` says; its URL.
fn signing_daemon(key: toolgate_gate::DaemonKey, how: Signing) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let Some((nonce, request)) = read_request(&mut s) else {
            return;
        };
        let body = decision_json();
        let nonce = nonce.unwrap_or_default();
        let message = match how {
            Signing::Right | Signing::Unsigned => {
                proof::message(&nonce, &request, 200, "allow", body.as_bytes())
            }
            Signing::OtherNonce => proof::message(
                "0123456789abcdef0123456789abcdef",
                &request,
                200,
                "allow",
                body.as_bytes(),
            ),
            Signing::OtherDecision => {
                proof::message(&nonce, &request, 200, "block", body.as_bytes())
            }
            Signing::OtherRequest => proof::message(&nonce, b"{}", 200, "allow", body.as_bytes()),
        };
        let sig = match how {
            Signing::Unsigned => String::new(),
            _ => format!("{}: {}\r\n", proof::SIGNATURE_HEADER, key.sign(&message)),
        };
        let answer = format!(
            "HTTP/1.1 200 OK\r\n{sig}content-length: {}\r\n\r\n{body}",
            body.len()
        );
        let _ = s.write_all(answer.as_bytes());
    });
    format!("http://{addr}")
}

fn pinned(url: &str, key: &toolgate_gate::DaemonKey) -> Daemon {
    Daemon {
        key: Some(key.public()),
        ..unpinned(url)
    }
}

#[test]
fn only_an_answer_signed_by_the_pinned_key_for_this_call_counts() {
    let key = toolgate_gate::DaemonKey::from_seed([5; 32]);
    let url = signing_daemon(toolgate_gate::DaemonKey::from_seed([5; 32]), Signing::Right);
    let d = post_check(&pinned(&url, &key), &call(), None).expect("a proven answer");
    assert_eq!(d.decision, Verdict::Allow);
    for how in [
        Signing::Unsigned,
        Signing::OtherNonce,
        Signing::OtherDecision,
        Signing::OtherRequest,
    ] {
        let url = signing_daemon(toolgate_gate::DaemonKey::from_seed([5; 32]), how);
        let e = post_check(&pinned(&url, &key), &call(), None).expect_err("unproven");
        assert!(e.to_string().contains("does not prove"), "{how:?}: {e:#}");
    }
    // The wait path (`?wait=`) is held to the same proof.
    let cancel = AtomicBool::new(false);
    let wait = Some((Duration::from_secs(1), &cancel));
    let url = signing_daemon(toolgate_gate::DaemonKey::from_seed([5; 32]), Signing::Right);
    let d = post_check(&pinned(&url, &key), &call(), wait).expect("a proven wait");
    assert_eq!(d.decision, Verdict::Allow);
    let url = signing_daemon(
        toolgate_gate::DaemonKey::from_seed([5; 32]),
        Signing::OtherNonce,
    );
    let e = post_check(&pinned(&url, &key), &call(), wait).expect_err("a replayed wait");
    assert!(e.to_string().contains("does not prove"), "{e:#}");
    // Signed right, by another key.
    let url = signing_daemon(toolgate_gate::DaemonKey::from_seed([6; 32]), Signing::Right);
    let e = post_check(&pinned(&url, &key), &call(), None).expect_err("another key");
    assert!(e.to_string().contains("does not verify"), "{e:#}");
}

#[test]
fn two_signatures_are_an_unreadable_answer() {
    let raw = b"HTTP/1.1 200 OK\r\nx-toolgate-signature: aa\r\nX-Toolgate-Signature: bb\r\ncontent-length: 2\r\n\r\n{}";
    assert!(whole(raw).is_err());
    let mut r = AnswerReader::default();
    let one = b"HTTP/1.1 200 OK\r\nx-toolgate-signature: aa\r\ncontent-length: 2\r\n\r\n{}";
    let a = r.push(one).unwrap().unwrap();
    assert_eq!(a.signature.as_deref(), Some("aa"));
}

/// A fake daemon on a Unix socket this process binds, answering one
/// check with an allow.
fn socket_daemon(dir: &Path) -> PathBuf {
    let path = dir.join("tg.sock");
    let l = std::os::unix::net::UnixListener::bind(&path).unwrap();
    thread::spawn(move || {
        // A refused caller hangs up without a request: wait for the next.
        while let Ok((mut s, _)) = l.accept() {
            if read_request(&mut s).is_none() {
                continue;
            }
            let body = decision_json();
            let _ = s.write_all(
                format!(
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{body}",
                    body.len()
                )
                .as_bytes(),
            );
        }
    });
    path
}

#[test]
fn a_socket_counts_only_when_the_pinned_user_serves_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = socket_daemon(dir.path());
    let me = crate::peer::effective_uid();
    let daemon = |uid| Daemon {
        endpoint: Endpoint::Unix(path.clone()),
        token: None,
        key: None,
        uid: Some(uid),
    };
    let e = post_check(&daemon(me.wrapping_add(1)), &call(), None).expect_err("wrong uid");
    assert!(
        e.to_string().contains(&format!("served by uid {me}")),
        "{e:#}"
    );
    let d = post_check(&daemon(me), &call(), None).expect("the pinned user's socket");
    assert_eq!(d.decision, Verdict::Allow);
    // Nobody there.
    let gone = Daemon {
        endpoint: Endpoint::Unix(dir.path().join("none.sock")),
        ..daemon(me)
    };
    let e = post_check(&gone, &call(), None).expect_err("no socket");
    assert!(e.to_string().contains("did not answer"), "{e:#}");
}

fn args(url: Option<&str>, key: Option<&str>, uid: Option<u32>) -> DeciderArgs {
    DeciderArgs {
        policy: None,
        url: url.map(str::to_string),
        daemon_key: key.map(str::to_string),
        daemon_uid: uid,
        token: Some("agent-token".into()),
    }
}

#[test]
fn a_daemon_named_without_its_pin_is_refused() {
    let data = DataDirArgs {
        data_dir: Some("/nonexistent/tg".into()),
        store: Some("none".into()),
    };
    let key = toolgate_gate::DaemonKey::from_seed([1; 32])
        .public()
        .to_string();
    let err = |a: DeciderArgs| match Decider::new(&a, &data) {
        Ok(_) => panic!("accepted: {a:?}"),
        Err(e) => e.to_string(),
    };
    assert!(err(args(Some("http://127.0.0.1:1"), None, None)).contains("not pinned"));
    assert!(err(args(Some("unix:/run/x.sock"), None, None)).contains("--daemon-uid"));
    assert!(err(args(Some("http://127.0.0.1:1"), None, Some(5))).contains("--daemon-key"));
    assert!(err(args(None, Some(&key), None)).contains("give its --url"));
    assert!(err(args(Some("none"), None, Some(1))).contains("give its --url"));
    // Without a daemon, `--store none` leaves nothing to decide with.
    assert!(err(args(Some("none"), None, None)).contains("--store none"));
    assert!(err(args(Some("unix:run/x.sock"), None, Some(1))).contains("absolute"));
    assert!(err(args(Some("https://h:1"), Some(&key), None)).contains("http://HOST:PORT"));
    // Pinned, they build (nothing is contacted yet).
    for a in [
        args(Some("http://127.0.0.1:1"), Some(&key), None),
        args(Some("unix:/run/x.sock"), None, Some(0)),
    ] {
        assert!(
            matches!(Decider::new(&a, &data), Ok(Decider::Daemon(_))),
            "{a:?}"
        );
    }
}

#[test]
fn endpoints_and_the_builtin_word_read_as_written() {
    assert_eq!(Endpoint::parse(" none ").unwrap(), None);
    assert_eq!(Endpoint::parse("").unwrap(), None);
    assert_eq!(
        Endpoint::parse("unix:/run/toolgate/toolgate.sock").unwrap(),
        Some(Endpoint::Unix("/run/toolgate/toolgate.sock".into()))
    );
    let tcp = Endpoint::parse("http://127.0.0.1:7878/").unwrap().unwrap();
    assert_eq!(tcp.shown(), "http://127.0.0.1:7878");
    assert!(Endpoint::parse("http://h:1/path").is_err());
    assert_eq!(policy_file(Some(Path::new("builtin"))), None);
    assert_eq!(
        policy_file(Some(Path::new("./builtin"))),
        Some(Path::new("./builtin"))
    );
}
