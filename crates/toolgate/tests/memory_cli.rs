//! `toolgate memory …` as a user runs it: the real binary on a data
//! directory of its own.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// A fresh data directory (`data` in a temporary directory, not made yet:
/// toolgate makes it), removed with that directory, and anything put
/// beside it, when dropped (the second field is only held for that).
struct DataDir(PathBuf, #[allow(dead_code)] tempfile::TempDir);

impl DataDir {
    fn new() -> DataDir {
        let tmp = tempfile::Builder::new()
            .prefix("toolgate-memory-cli-")
            .tempdir()
            .unwrap();
        DataDir(tmp.path().join("data"), tmp)
    }

    fn run(&self, args: &[&str]) -> Output {
        self.run_with(args, "")
    }

    fn run_with(&self, args: &[&str], stdin: &str) -> Output {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(args)
            .env("HOME", "/home/dev")
            .env("TOOLGATE_DATA_DIR", &self.0)
            .env("TOOLGATE_SYNC", "normal")
            .env("USER", "tester")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("toolgate runs");
        let mut pipe = child.stdin.take().expect("stdin");
        let input = stdin.to_string();
        let writer = std::thread::spawn(move || pipe.write_all(input.as_bytes()));
        let out = child.wait_with_output().expect("toolgate finishes");
        if let Err(e) = writer.join().expect("writer thread") {
            assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "write stdin: {e}");
        }
        out
    }

    /// Whether no memory is kept: the data directory was never made (a
    /// reading command would refuse it), or it lists none.
    fn no_memories(&self) -> bool {
        !self.0.exists() || self.ok(&["memory", "list", "--json"]).is_empty()
    }

    /// Runs and expects exit 0; returns stdout.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        stdout(&out)
    }
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn json_lines(text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn ids(text: &str) -> Vec<u64> {
    json_lines(text)
        .iter()
        .map(|m| m["id"].as_u64().unwrap())
        .collect()
}

#[test]
fn add_list_search_remove() {
    let d = DataDir::new();
    let id = d.ok(&[
        "memory",
        "add",
        "pg_dump on billing locks it for minutes",
        "--category",
        "gotchas,technical",
        "--confidence",
        "0.9",
        "--source",
        "inc-42",
    ]);
    assert_eq!(id.trim(), "1");
    let added = d.ok(&[
        "memory",
        "add",
        "host 10.0.0.163 is flaky",
        "--category",
        "process",
        "--category",
        "Technical",
        "--confidence",
        "0.5",
        "--json",
    ]);
    let m = &json_lines(&added)[0];
    assert_eq!(m["id"], 2);
    assert_eq!(m["categories"], serde_json::json!(["process", "technical"]));
    assert_eq!(m["confidence"], 0.5);
    d.ok(&[
        "memory",
        "add",
        "rotate the vault token monthly",
        "--confidence",
        "1",
    ]);

    let table = d.ok(&["memory", "list", "--table"]);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 4, "{table}");
    assert!(
        lines[0].contains("ID") && lines[0].contains("TEXT"),
        "{table}"
    );
    assert!(
        lines[1].contains("rotate the vault token"),
        "newest first: {table}"
    );
    assert!(
        lines[3].contains("pg_dump") && lines[3].contains("inc-42"),
        "{table}"
    );
    assert_eq!(ids(&d.ok(&["memory", "list", "--json"])), vec![3, 2, 1]);
    assert_eq!(
        ids(&d.ok(&["memory", "list", "--category", "technical", "--json"])),
        vec![2, 1]
    );
    assert_eq!(
        ids(&d.ok(&["memory", "list", "--limit", "1", "--json"])),
        vec![3]
    );
    let general = d.ok(&["memory", "list", "--category", "general", "--json"]);
    assert_eq!(
        json_lines(&general)[0]["categories"],
        serde_json::json!(["general"])
    );

    assert_eq!(
        ids(&d.ok(&["memory", "search", "pg_dump", "--json"])),
        vec![1]
    );
    assert_eq!(
        ids(&d.ok(&["memory", "search", "10.0.0.163", "--json"])),
        vec![2]
    );
    assert!(
        d.ok(&["memory", "search", "10.0.0.16", "--json"])
            .is_empty()
    );
    // All words must be there.
    assert_eq!(
        ids(&d.ok(&["memory", "search", "billing", "locks", "--json"])),
        vec![1]
    );
    assert!(
        d.ok(&["memory", "search", "billing", "flaky", "--json"])
            .is_empty()
    );
    let table = d.ok(&["memory", "search", "flaky", "--table"]);
    assert!(table.contains("host 10.0.0.163 is flaky"), "{table}");
    // Query syntax is just text.
    for hostile in ["\"a\" OR x*", "NEAR(", "*", "\"", "--", "a:b"] {
        let out = d.run(&["memory", "search", "--", hostile]);
        assert_eq!(out.status.code(), Some(0), "{hostile:?}: {}", stderr(&out));
    }
    let none = d.ok(&["memory", "search", "nothing-like-it", "--table"]);
    assert!(none.contains("no memory"), "{none}");
    // Piped, nothing found is no lines at all.
    assert!(d.ok(&["memory", "search", "nothing-like-it"]).is_empty());

    assert!(
        d.ok(&["memory", "remove", "2"])
            .contains("removed memory 2")
    );
    assert!(d.ok(&["memory", "search", "flaky", "--json"]).is_empty());
    let again = d.run(&["memory", "remove", "2"]);
    assert_eq!(again.status.code(), Some(1));
    assert!(stderr(&again).contains("no memory 2"), "{}", stderr(&again));

    // Every change is in the audit chain, which still verifies.
    d.ok(&["audit", "verify"]);
    let log = d.ok(&["audit", "export"]);
    assert_eq!(log.matches("memory.changed").count(), 4, "{log}");
    assert!(log.contains("\"by\":\"tester\""), "{log}");
}

#[test]
fn bad_add_input_exits_2_and_changes_nothing() {
    let d = DataDir::new();
    for args in [
        &[
            "memory",
            "add",
            "x",
            "--category",
            "misc",
            "--confidence",
            "0.5",
        ][..],
        &["memory", "add", "x", "--confidence", "1.5"],
        &["memory", "add", "   ", "--confidence", "0.5"],
        &["memory", "add", "x"],
        &["memory", "list", "--category", "nope"],
        &["memory", "remove", "abc"],
    ] {
        let out = d.run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).is_empty());
    }
    let out = d.run(&[
        "memory",
        "add",
        "x",
        "--category",
        "misc",
        "--confidence",
        "0.5",
    ]);
    assert!(
        stderr(&out).contains("unknown category"),
        "{}",
        stderr(&out)
    );
    assert!(d.no_memories());
}

#[test]
fn export_then_import_round_trips() {
    let src = DataDir::new();
    src.ok(&[
        "memory",
        "add",
        "pg_dump on billing locks it for minutes",
        "--category",
        "gotchas",
        "--confidence",
        "0.9",
        "--source",
        "inc-42",
    ]);
    src.ok(&[
        "memory",
        "add",
        "the staging vault token is in 1password \"Infra\"\nrotate monthly",
        "--category",
        "credentials,process",
        "--confidence",
        "0.75",
    ]);
    src.ok(&[
        "memory",
        "add",
        "Café Zürich: ünïcödé ok",
        "--confidence",
        "0",
    ]);
    let exported = src.ok(&["memory", "export"]);
    assert_eq!(ids(&exported), vec![1, 2, 3], "oldest first");

    // Into a file too, private to the user.
    let file = src.0.join("memories.jsonl");
    src.ok(&["memory", "export", file.to_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), exported);
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o077, 0, "{mode:o}");

    let dst = DataDir::new();
    // Something there already: imported ones get new ids after it.
    dst.ok(&["memory", "add", "already here", "--confidence", "0.5"]);
    let out = dst.ok(&["memory", "import", file.to_str().unwrap()]);
    assert_eq!(out.trim(), "imported 3 memories (ids 2–4)");
    let again = dst.run_with(&["memory", "import", "-"], &exported);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert_eq!(stdout(&again).trim(), "imported 3 memories (ids 5–7)");

    let strip = |v: serde_json::Value| {
        let mut v = v;
        let o = v.as_object_mut().unwrap();
        o.remove("id");
        o.remove("created_ms");
        v
    };
    let before: Vec<_> = json_lines(&exported).into_iter().map(strip).collect();
    let after: Vec<_> = json_lines(&dst.ok(&["memory", "export"]))
        .into_iter()
        .skip(1)
        .map(strip)
        .collect();
    assert_eq!(after[..3], before[..]);
    assert_eq!(after[3..], before[..]);
    dst.ok(&["audit", "verify"]);
    // The credentials memory's text is not in the audit log.
    let log = src.ok(&["audit", "export"]);
    assert!(!log.contains("1password"), "{log}");
    assert!(log.contains("[credentials withheld]"), "{log}");
}

#[test]
fn a_bad_line_names_file_and_line_and_imports_nothing() {
    let d = DataDir::new();
    let file = d.0.with_extension("jsonl");
    let mut text = String::new();
    text.push_str("# memories for the billing team\n\n");
    for i in 0..50 {
        text.push_str(&format!(
            "{{\"text\":\"lesson {i}\",\"categories\":[\"process\"],\"confidence\":0.5}}\n"
        ));
    }
    text.push_str("{\"text\":\"no confidence\"}\n"); // line 53
    text.push_str("{\"text\":\"x\",\"confidence\":0.5,\"colour\":\"red\"}\n"); // 54
    text.push_str("not json at all\n"); // 55
    text.push_str("{\"text\":\"x\",\"confidence\":0.5,\"categories\":[\"misc\"]}\n"); // 56
    std::fs::write(&file, &text).unwrap();
    let name = file.to_str().unwrap();
    let out = d.run(&["memory", "import", name]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    for (line, what) in [
        (53, "no confidence"),
        (54, "unknown field"),
        (55, "not JSON"),
        (56, "unknown category"),
    ] {
        let prefix = format!("{name}:{line}: ");
        assert!(
            err.lines()
                .any(|l| l.starts_with(&prefix) && l.contains(what)),
            "{prefix}{what}: {err}"
        );
    }
    assert!(
        err.contains("4 bad lines") && err.contains("nothing was imported"),
        "{err}"
    );
    assert!(stdout(&out).is_empty());
    assert!(d.no_memories());

    // Many bad lines: the first 20 are named, then a count.
    let bad: String = (0..30).map(|_| "{}\n").collect();
    let out = d.run_with(&["memory", "import", "-"], &bad);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(
        err.lines().filter(|l| l.starts_with("<stdin>:")).count(),
        20,
        "{err}"
    );
    assert!(err.contains("10 more"), "{err}");
    assert!(err.contains("30 bad lines"), "{err}");

    // A missing file is bad input too.
    let out = d.run(&["memory", "import", "/nonexistent/memories.jsonl"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("cannot read"), "{}", stderr(&out));
    // Invalid UTF-8 is reported by line.
    let raw = d.0.with_extension("bin");
    std::fs::write(&raw, b"{\"text\":\"ok\",\"confidence\":1}\n\xff\xfe\n").unwrap();
    let out = d.run(&["memory", "import", raw.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains(":2: not UTF-8"), "{}", stderr(&out));
    let _ = std::fs::remove_file(&raw);
    let _ = std::fs::remove_file(&file);

    // Nothing at all to import is fine.
    let out = d.run_with(&["memory", "import", "-"], "# nothing\n\n");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(d.no_memories());
}

#[test]
fn a_big_import_is_one_transaction() {
    let d = DataDir::new();
    let text: String = (0..20_000)
        .map(|i| format!("{{\"text\":\"host h{i} note\",\"confidence\":0.5}}\n"))
        .collect();
    let out = d.run_with(&["memory", "import", "-"], &text);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "imported 20000 memories (ids 1–20000)");
    assert_eq!(
        ids(&d.ok(&["memory", "search", "h12345", "--json"])),
        vec![12346]
    );
    let log = d.ok(&["audit", "export"]);
    assert_eq!(log.lines().count(), 1, "one audit entry for the import");
}

/// `toolgate knowledge` end to end: a check held for knowledge, `ack` by id
/// (a bad id is refused), then calls the knowledge covers run; `show` and
/// `status` explain the set-up without recording.
#[test]
fn knowledge_is_held_acknowledged_shown_and_explained() {
    let d = DataDir::new();
    let conf = d.0.with_extension("conf");
    std::fs::create_dir_all(conf.join("sop")).unwrap();
    std::fs::write(
        conf.join("sop/fleet.ai.sop"),
        "# Fleet\n## Preflight\ncheck uptime first\n## Credentials\npw Hunter2-xyz\n",
    )
    .unwrap();
    let policy = conf.join("policy.toml");
    std::fs::write(
        &policy,
        format!(
            "[knowledge]\nsop_dirs = [{:?}]\n[[knowledge.rule]]\npattern = 'ssh'\nsop = \"fleet\"\n",
            conf.join("sop").display().to_string()
        ),
    )
    .unwrap();
    let policy = policy.to_str().unwrap();
    d.ok(&[
        "memory",
        "add",
        "web1 drains slowly",
        "--category",
        "gotchas",
        "--confidence",
        "0.9",
    ]);
    let call =
        |cmd: &str| format!(r#"{{"tool":"exec","params":{{"command":"{cmd}"}},"session":"s1"}}"#);
    let out = d.run_with(&["check", "--policy", policy], &call("ssh web1 uptime"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["decision"], "block", "{v}");
    let ctx = v["context"].as_str().unwrap();
    assert!(
        ctx.contains("check uptime first") && ctx.contains("web1 drains slowly"),
        "{ctx}"
    );
    assert!(!ctx.contains("Hunter2"), "{ctx}");
    let id = v["block_reason"]
        .as_str()
        .unwrap()
        .split('|')
        .nth(1)
        .unwrap()
        .to_string();

    let bad = d.run(&["knowledge", "ack", "00ff", "--policy", policy]);
    assert_eq!(bad.status.code(), Some(1), "{}", stderr(&bad));
    assert!(
        stderr(&bad).contains("no knowledge was shown"),
        "{}",
        stderr(&bad)
    );
    let done = d.ok(&["knowledge", "ack", &id, "--policy", policy]);
    assert!(
        done.contains("acknowledged 2 item(s) for session:s1"),
        "{done}"
    );

    let out = d.run_with(&["check", "--policy", policy], &call("ssh web1 df"));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["decision"], "allow", "{v}");

    let shown = d.run_with(
        &["knowledge", "show", "--policy", policy],
        &call("ssh web1 ls"),
    );
    let text = stdout(&shown);
    assert!(
        text.contains("enforcement strict") && text.contains("check uptime first"),
        "{text}"
    );
    let status = d.ok(&["knowledge", "status", "--policy", policy]);
    assert!(
        status.contains("1 SOP(s) fleet") && status.contains("memories: 1"),
        "{status}"
    );
    let bad = d.run_with(&["knowledge", "show"], "not json");
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("not a ToolCall"), "{}", stderr(&bad));
    d.ok(&["audit", "verify"]);
}
