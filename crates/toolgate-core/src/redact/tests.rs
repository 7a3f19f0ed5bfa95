use super::*;
use proptest::prelude::*;
use serde_json::json;

fn r(s: &str) -> String {
    redact_text(s).into_owned()
}

/// `secret` is gone from the redaction of `text`, which equals `expected`
/// and is a fixed point.
#[track_caller]
fn gone(text: &str, secret: &str, expected: &str) {
    let out = r(text);
    assert_eq!(out, expected, "redacting {text:?}");
    assert!(!out.contains(secret), "{secret:?} survived in {out:?}");
    assert_eq!(r(&out), out, "not idempotent on {text:?}");
}

#[track_caller]
fn kept(text: &str) {
    assert!(
        matches!(redact_text(text), Cow::Borrowed(_)),
        "{text:?} was changed to {:?}",
        r(text)
    );
}

const GHP: &str = "ghp_16C7e42F292c6912E7710c838347Ae178B4a";

// ---- token formats, one per kind ----------------------------------------

#[test]
fn aws_access_key_id() {
    gone(
        "aws sts get-caller-identity # key AKIAIOSFODNN7EXAMPLE, region x",
        "AKIAIOSFODNN7EXAMPLE",
        "aws sts get-caller-identity # key [REDACTED:aws-access-key-id], region x",
    );
    gone(
        "id=ASIAY34FZKBOKMUTVV7A",
        "ASIAY34FZKBOKMUTVV7A",
        "id=[REDACTED:aws-access-key-id]",
    );
}

#[test]
fn aws_secret_access_key_value_only() {
    let secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
    gone(
        &format!("aws configure set aws_secret_access_key {secret} --profile p"),
        secret,
        "aws configure set aws_secret_access_key [REDACTED:aws-secret-access-key] --profile p",
    );
    // With `=` or `:` the assignment rule takes it (kind from the name).
    gone(
        &format!("AWS_SECRET_ACCESS_KEY={secret}"),
        secret,
        "AWS_SECRET_ACCESS_KEY=[REDACTED:secret]",
    );
    gone(
        &format!(r#"{{"SecretAccessKey": "{secret}"}}"#),
        secret,
        r#"{"SecretAccessKey": "[REDACTED:secret]"}"#,
    );
}

#[test]
fn github_tokens() {
    gone(
        &format!("git push https://{GHP}@github.com/o/r.git"),
        GHP,
        "git push https://[REDACTED:github-token]@github.com/o/r.git",
    );
    let fine = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEF";
    gone(
        &format!("gh auth status -t {fine}"),
        fine,
        "gh auth status -t [REDACTED:github-token]",
    );
    // As the user of a URL, next to a password.
    gone(
        &format!("https://{GHP}:x-oauth-basic@github.com"),
        GHP,
        "https://[REDACTED:github-token]:[REDACTED:url-password]@github.com",
    );
}

#[test]
fn openai_and_anthropic_keys() {
    let openai = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z";
    gone(
        &format!("OPENAI={openai} python x.py"),
        openai,
        "OPENAI=[REDACTED:openai-key] python x.py",
    );
    let legacy = "sk-T3BlbkFJa1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t";
    gone(
        &format!("key: {legacy}"),
        legacy,
        "key: [REDACTED:openai-key]",
    );
    let anthropic = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789";
    gone(
        &format!("x {anthropic} y"),
        anthropic,
        "x [REDACTED:anthropic-key] y",
    );
}

#[test]
fn slack_tokens_and_webhooks() {
    gone(
        "curl -d token=xoxb-1234567890-abcdefghij slack.com/api",
        "xoxb-1234567890",
        "curl -d token=[REDACTED:token] slack.com/api",
    );
    gone(
        "use xoxp-1234567890-abcdefghij now",
        "xoxp-1234567890",
        "use [REDACTED:slack-token] now",
    );
    gone(
        "app xapp-1-A0123456789-abcdef",
        "xapp-1-A0123",
        "app [REDACTED:slack-token]",
    );
    gone(
        "curl -X POST https://hooks.slack.com/services/T0001/B0002/XXXXXXXXXXXXXXXXXXXXXXXX -d x",
        "T0001/B0002",
        "curl -X POST https://hooks.slack.com/services/[REDACTED:slack-webhook] -d x",
    );
}

#[test]
fn stripe_google_jwt() {
    gone(
        "stripe --api sk_live_4eC39HqLyjWDarjtT1zdp7dc done",
        "4eC39HqLyjWDarjtT1zdp7dc",
        "stripe --api [REDACTED:stripe-key] done",
    );
    gone(
        "rk_test_4eC39HqLyjWDarjtT1zdp7dc",
        "4eC39HqLyjWDarjtT1zdp7dc",
        "[REDACTED:stripe-key]",
    );
    let google = "AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI";
    gone(
        &format!("maps?q=x&k={google}"),
        google,
        "maps?q=x&k=[REDACTED:google-api-key]",
    );
    let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
    gone(&format!("jwt={jwt};"), jwt, "jwt=[REDACTED:jwt];");
}

#[test]
fn private_key_blocks() {
    let block = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\nbase64body==\n-----END RSA PRIVATE KEY-----";
    gone(
        &format!("cat > id <<EOF\n{block}\nEOF"),
        "MIIEowIBAAKCAQEA7",
        "cat > id <<EOF\n[REDACTED:private-key]\nEOF",
    );
    for label in [
        "OPENSSH PRIVATE KEY",
        "EC PRIVATE KEY",
        "PGP PRIVATE KEY BLOCK",
    ] {
        let text = format!("a -----BEGIN {label}-----\nb3BlbnNz\n-----END {label}----- z");
        gone(&text, "b3BlbnNz", "a [REDACTED:private-key] z");
    }
    // Unterminated: to the end of the text.
    gone(
        "key:\n-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkq\nmore",
        "MIIEvQ",
        "key:\n[REDACTED:private-key]",
    );
    // As a quoted value, a JSON-escaped block stays on one line.
    gone(
        r#"{"private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQ\n-----END PRIVATE KEY-----\n", "x": 1}"#,
        "MIIEvQ",
        r#"{"private_key": "[REDACTED:private-key]", "x": 1}"#,
    );
    // Glued to something else that matches, a block is still taken whole.
    for glued in [
        "xoxb-1234567890",
        "password=a",
        "--passwordX",
        "https://:a",
        "sk-abcdefghijklmnopqrstu",
    ] {
        let text = format!(
            "{glued}-----BEGIN RSA PRIVATE KEY-----\nS3CR3TB0DY\n-----END RSA PRIVATE KEY-----@h"
        );
        let out = r(&text);
        assert!(!out.contains("S3CR3TB0DY"), "{text:?} -> {out:?}");
        assert_eq!(r(&out), out);
    }
    // Public keys and certificates are not secrets.
    kept("-----BEGIN PUBLIC KEY-----\nMIIBIjANBg\n-----END PUBLIC KEY-----");
    kept("-----BEGIN CERTIFICATE-----\nMIIBIjANBg\n-----END CERTIFICATE-----");
}

#[test]
fn http_authorization() {
    gone(
        "curl -H 'Authorization: Bearer abcdef123456789' https://api.x.com",
        "abcdef123456789",
        "curl -H 'Authorization: Bearer [REDACTED:bearer-token]' https://api.x.com",
    );
    gone(
        "curl -H \"authorization: basic dXNlcjpwYXNz\" x",
        "dXNlcjpwYXNz",
        "curl -H \"authorization: basic [REDACTED:basic-auth]\" x",
    );
    gone(
        "AUTHORIZATION: token abc123\r\nHost: x",
        "abc123",
        "AUTHORIZATION: token [REDACTED:authorization]\r\nHost: x",
    );
    // A multi-part scheme loses everything after the scheme word.
    gone(
        "Authorization: AWS4-HMAC-SHA256 Credential=AKID/x, Signature=fe5f80f77d5fa3be",
        "fe5f80f77d5fa3be",
        "Authorization: AWS4-HMAC-SHA256 [REDACTED:authorization]",
    );
    gone(
        r#"{"headers": {"Proxy-Authorization": "Bearer abc.def-123"}}"#,
        "abc.def-123",
        r#"{"headers": {"Proxy-Authorization": "Bearer [REDACTED:bearer-token]"}}"#,
    );
    gone(
        "wget --header=x Bearer eyX0Zm9vYmFy",
        "eyX0Zm9vYmFy",
        "wget --header=x Bearer [REDACTED:bearer-token]",
    );
    // A reference to a variable is not the secret.
    kept("curl -H \"Authorization: Bearer $GITHUB_TOKEN\" x");
    kept("the Bearer authentication scheme; a bearer instrument");
}

#[test]
fn cookie_header() {
    gone(
        "curl -H 'Cookie: sid=abc123; theme=dark' x",
        "abc123",
        "curl -H 'Cookie: [REDACTED:cookie]' x",
    );
}

#[test]
fn assignments() {
    let cases = [
        (
            "PASSWORD=hunter2 ./run",
            "PASSWORD=[REDACTED:password] ./run",
        ),
        (
            "DB_PASSWORD='hun ter2' x",
            "DB_PASSWORD='[REDACTED:password]' x",
        ),
        (
            "export GITHUB_TOKEN=abc",
            "export GITHUB_TOKEN=[REDACTED:token]",
        ),
        (
            "GET /x?api_key=abc123&page=2",
            "GET /x?api_key=[REDACTED:api-key]&page=2",
        ),
        (
            "client_secret = \"abc\\\"def\"; next",
            "client_secret = \"[REDACTED:client-secret]\"; next",
        ),
        (
            "mytool --password hunter2 -v",
            "mytool --password [REDACTED:password] -v",
        ),
        (
            "mytool --token=abc -v",
            "mytool --token=[REDACTED:token] -v",
        ),
        (
            "x --api-key \"a b\" y",
            "x --api-key \"[REDACTED:api-key]\" y",
        ),
        ("password: hunter2", "password: [REDACTED:password]"),
        (
            "PGPASSWORD=hunter2 psql",
            "PGPASSWORD=[REDACTED:password] psql",
        ),
        (
            "-H 'X-Api-Key: abc123'",
            "-H 'X-Api-Key: [REDACTED:api-key]'",
        ),
        (
            "{'refresh_token': 'abc', 'n': 1}",
            "{'refresh_token': '[REDACTED:refresh-token]', 'n': 1}",
        ),
        ("pass=\"unterminated", "pass=\"[REDACTED:password]"),
    ];
    for (text, expected) in cases {
        let out = r(text);
        assert_eq!(out, expected, "redacting {text:?}");
        assert_eq!(r(&out), out);
    }
}

#[test]
fn assignments_that_are_not_secrets() {
    kept("curl -d max_tokens=100 -d temperature=0.2");
    kept("gh auth login --with-token-file /tmp/x --token-file path");
    kept("x --password-file /run/p password_file=/a passwordFile=/b");
    kept("token_count=3 tokenLimit: 4 keyboard=us key=value cache_key=abc");
    kept("PGPASSWORD=$PGPASS psql; TOKEN=${TOKEN}");
    kept("if password == x: pass");
    kept("PWD=/home/dev/proj cd $PWD");
    kept("the password is secret; enter your token");
}

#[test]
fn url_userinfo_password() {
    gone(
        "psql postgres://app:s3cr3t@db.internal:5432/app",
        "s3cr3t",
        "psql postgres://app:[REDACTED:url-password]@db.internal:5432/app",
    );
    gone(
        "redis-cli -u redis://:p@ss@cache:6379",
        "p@ss",
        "redis-cli -u redis://:[REDACTED:url-password]@cache:6379",
    );
    kept("https://example.com:8080/path?q=a@b ssh://git@github.com/x git@github.com:o/r");
}

#[test]
fn never_redacted() {
    kept("git checkout 3f786850e387550fdab836ed7e6dc881de23001b");
    kept("id 123e4567-e89b-12d3-a456-426614174000");
    kept("the task-force uses sk-learn (scikit-learn) on a desk-top");
    kept("echo aGVsbG8gd29ybGQ= | base64 -d");
    kept("cat /etc/passwd ~/.ssh/id_rsa.pub ./secrets/README.md");
    kept("ghp_short AKIA sk-ant-short xoxb-1");
    kept("pip install sk-learn-extension-packages-for-everyone");
    kept("");
}

/// Inputs the properties once shrank to (see proptest-regressions).
#[test]
fn found_by_properties() {
    let block = "-----BEGIN RSA PRIVATE KEY-----\nAA0A+a\n-----END RSA PRIVATE KEY-----";
    let ghp = "ghp_aAAA0AAA00a0a0A0A00AaaaAa0AaAaaaaAaA";
    for text in [
        format!("password={block}#"),
        format!("--password{ghp}0{block}"),
        format!("https://:a{block}@"),
        format!("AIzaAA_0--A_a-aA_0a-_A0A0__aAa0a-a_0AA-DB_PASSWORD=Aa[REDACTED:password]{ghp}"),
    ] {
        let out = r(&text);
        assert!(
            !out.contains("AA0A+a") && !out.contains(ghp),
            "{text:?} -> {out:?}"
        );
        assert_eq!(r(&out), out, "not idempotent on {text:?}");
    }
}

// ---- keys ------------------------------------------------------------

#[test]
fn secret_keys() {
    for key in [
        "password",
        "DB_PASSWORD",
        "passwd",
        "passphrase",
        "client_secret",
        "clientSecret",
        "GITHUB_TOKEN",
        "access_token",
        "authToken",
        "apiKey",
        "APIKey",
        "api-key",
        "x-api-key",
        "X-API-KEY",
        "OPENAI_API_KEY",
        "aws_secret_access_key",
        "AccessKeyId",
        "private_key",
        "privateKey",
        "session_key",
        "refresh_token",
        "Authorization",
        "Proxy-Authorization",
        "Cookie",
        "Set-Cookie",
        "credentials",
        "pwd",
        "pass",
        "auth",
        "--password",
        "PGPASSWORD",
        "db.password",
        "user password",
        "secrets",
        "api_keys",
        "Cookies",
    ] {
        assert!(
            super::keys::secret_key_kind(key).is_some(),
            "{key} should be secret"
        );
    }
    for key in [
        "max_tokens",
        "maxTokens",
        "tokens_used",
        "tokens",
        "token_count",
        "tokenCount",
        "token_limit",
        "token_usage",
        "token_type",
        "max_token",
        "author",
        "keyboard",
        "key",
        "passage",
        "tokenizer",
        "primary_key",
        "public_key",
        "cache_key",
        "secretary",
        "--token-file",
        "--password-file",
        "password_file",
        "passwordFile",
        "token_url",
        "PWD",
        "path",
        "",
    ] {
        assert!(
            super::keys::secret_key_kind(key).is_none(),
            "{key} should not be secret"
        );
    }
}

#[test]
fn kinds_from_keys() {
    let kind = |k| secret_key_kind(k).unwrap_or("-");
    assert_eq!(kind("DB_PASSWORD"), "password");
    assert_eq!(kind("x-api-key"), "api-key");
    assert_eq!(kind("client_secret"), "client-secret");
    assert_eq!(kind("refreshToken"), "refresh-token");
    assert_eq!(kind("Authorization"), "authorization");
}

// ---- JSON ------------------------------------------------------------

#[test]
fn tool_call_value() {
    let call = json!({
        "tool": "exec",
        "params": {
            "command": "curl -H 'Authorization: Bearer abcdef123456789' https://api.x.com",
            "env": {"GITHUB_TOKEN": GHP, "PATH": "/usr/bin"},
            "args": ["--verbose", ["nested", format!("deep {GHP}")]],
            "timeout": 30
        }
    });
    let before = call.clone();
    let out = redact_value(&call);
    assert_eq!(call, before, "the original is untouched");
    assert_eq!(
        out,
        json!({
            "tool": "exec",
            "params": {
                "command": "curl -H 'Authorization: Bearer [REDACTED:bearer-token]' https://api.x.com",
                "env": {"GITHUB_TOKEN": "[REDACTED:token]", "PATH": "/usr/bin"},
                "args": ["--verbose", ["nested", "deep [REDACTED:github-token]"]],
                "timeout": 30
            }
        })
    );
    assert_eq!(redact_value(&out), out);
}

#[test]
fn secret_keys_replace_any_value() {
    let v = json!({
        "password": 12345,
        "credentials": {"user": "bob", "pin": 1},
        "api_keys": ["a", "b"],
        "apiKey": "k",
        "token": null,
        "secret": "",
        "password_required": true,
        "max_tokens": 100,
        "list": [{"client_secret": "s"}, "PASSWORD=x"]
    });
    assert_eq!(
        redact_value(&v),
        json!({
            "password": "[REDACTED:password]",
            "credentials": "[REDACTED:credential]",
            "api_keys": "[REDACTED:api-key]",
            "apiKey": "[REDACTED:api-key]",
            "token": null,
            "secret": "",
            "password_required": true,
            "max_tokens": 100,
            "list": [{"client_secret": "[REDACTED:client-secret]"}, "PASSWORD=[REDACTED:password]"]
        })
    );
}

#[test]
fn in_place_reports_change() {
    let mut v = json!({"a": ["x", {"token": "t"}], "b": "plain"});
    assert!(redact_in_place(&mut v));
    assert_eq!(
        v,
        json!({"a": ["x", {"token": "[REDACTED:token]"}], "b": "plain"})
    );
    assert!(!redact_in_place(&mut v), "second pass changes nothing");
    let mut clean = json!({"command": "ls -la", "n": 1, "ok": null});
    assert!(!redact_in_place(&mut clean));
}

#[test]
fn marker_shape() {
    assert!(r(GHP).starts_with(MARK_PREFIX));
    assert!(is_marker("[REDACTED:github-token]"));
    assert!(!is_marker("[REDACTED:]"));
    assert!(!is_marker("[REDACTED:x] y"));
}

// ---- properties --------------------------------------------------------

/// A generated secret and the part of it that must not survive.
fn secret() -> impl Strategy<Value = (String, String)> {
    prop_oneof![
        "[A-Za-z0-9]{36}".prop_map(|b| (format!("ghp_{b}"), b)),
        "[A-Za-z0-9_]{30}".prop_map(|b| (format!("github_pat_{b}"), b)),
        "[A-Z0-9]{16}".prop_map(|b| (format!("AKIA{b}"), b)),
        "[A-Za-z0-9_-]{30}".prop_map(|b| (format!("sk-ant-{b}"), b)),
        "[A-Za-z0-9]{40}".prop_map(|b| (format!("sk-proj-{b}9Zz"), b)),
        "[A-Za-z0-9]{24}".prop_map(|b| (format!("xoxb-{b}"), b)),
        "[A-Za-z0-9]{24}".prop_map(|b| (format!("sk_live_{b}"), b)),
        "[A-Za-z0-9_-]{35}".prop_map(|b| (format!("AIza{b}"), b)),
        "[A-Za-z0-9_-]{20}".prop_map(|b| (format!("eyJhbGci.eyJ{b}.sig"), b)),
        "[A-Za-z0-9+/]{40}".prop_map(|b| (
            format!("-----BEGIN RSA PRIVATE KEY-----\n{b}\n{b}\n-----END RSA PRIVATE KEY-----"),
            b
        )),
        "[A-Za-z0-9]{16}".prop_map(|b| (format!("postgres://app:{b}@db/x"), b)),
        "[A-Za-z0-9]{16}".prop_map(|b| (format!("DB_PASSWORD={b}"), b)),
        "[A-Za-z0-9]{16}".prop_map(|b| (format!("Authorization: Bearer {b}"), b)),
    ]
}

/// Pieces that exercise the scanner's edges, glued together at random.
fn tricky_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[ -~]{0,6}",
        "\\PC{0,3}",
        secret().prop_map(|(s, _)| s),
        prop::sample::select(vec![
            "password",
            "PASSWORD",
            "token",
            "_key",
            "api_key",
            "--password",
            "--token-file",
            "max_tokens",
            "PWD",
            "Cookie",
            "Authorization",
            "Bearer ",
            "Basic ",
            "=",
            ": ",
            "\":",
            "\"",
            "'",
            " ",
            "\n",
            "\\",
            "$",
            "${X}",
            "&",
            ";",
            "https://",
            "u:",
            "@",
            "/",
            "-",
            "_",
            "[REDACTED:password]",
            "[REDACTED",
            "]",
            "sk-",
            "eyJabcdef.",
            "AKIA",
            "ghp_",
            "-----BEGIN RSA PRIVATE KEY-----",
            "-----END RSA PRIVATE KEY-----",
        ])
        .prop_map(str::to_owned),
    ];
    prop::collection::vec(piece, 0..14).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn idempotent_on_tricky_text(text in tricky_text()) {
        let once = r(&text);
        prop_assert_eq!(r(&once), once.clone());
        prop_assert!(matches!(redact_text(&once), Cow::Borrowed(_)));
    }

    #[test]
    fn idempotent_on_any_text(text in any::<String>()) {
        let once = r(&text);
        prop_assert_eq!(r(&once), once);
    }

    #[test]
    fn embedded_secret_never_survives(
        before in "[ -~]{0,40}",
        (secret, body) in secret(),
        after in "[ -~]{0,40}",
    ) {
        let text = format!("{before} {secret} {after}");
        let out = r(&text);
        prop_assert!(!out.contains(&body), "{:?} survived in {:?}", body, out);
        prop_assert!(out.contains(MARK_PREFIX));
        prop_assert_eq!(r(&out), out);
    }

    #[test]
    fn plain_text_is_borrowed(text in "[a-z ./_-]{0,80}") {
        let triggers = [
            "pass", "pwd", "secret", "token", "key", "auth", "cookie", "credential", "xox", "xapp",
        ];
        prop_assume!(!triggers.iter().any(|t| text.contains(t)));
        prop_assert!(matches!(redact_text(&text), Cow::Borrowed(_)));
    }

    #[test]
    fn json_idempotent_and_original_untouched(
        value in json_value(),
    ) {
        let before = value.clone();
        let once = redact_value(&value);
        prop_assert_eq!(&value, &before);
        prop_assert_eq!(redact_value(&once), once.clone());
        let mut in_place = value.clone();
        let changed = redact_in_place(&mut in_place);
        prop_assert_eq!(&in_place, &once);
        prop_assert_eq!(changed, in_place != value);
    }
}

fn json_value() -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        prop::sample::select(vec![
            "password",
            "token",
            "max_tokens",
            "env",
            "command",
            "x"
        ])
        .prop_map(str::to_owned),
        "[a-zA-Z_-]{0,8}",
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        tricky_text().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 4, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(key.clone(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Text mixing ordinary words with pieces of every secret shape, so the
/// scanner matches often.
fn shaped_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-zA-Z0-9 _./:=@-]{0,12}",
        Just("AKIA".to_string()),
        Just("ghp_".to_string()),
        Just("sk-".to_string()),
        Just("xoxb-".to_string()),
        Just("eyJ".to_string()),
        Just("AIza".to_string()),
        Just("sk_live_".to_string()),
        Just("://u:".to_string()),
        Just("Bearer ".to_string()),
        Just("-----BEGIN RSA PRIVATE KEY-----".to_string()),
        Just("PASSWORD=".to_string()),
        Just("Authorization: ".to_string()),
        Just("hooks.slack.com/services/".to_string()),
        "[A-Za-z0-9]{16,40}",
    ];
    prop::collection::vec(piece, 0..8).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    /// The prefilter only skips text the scanner would not match anyway.
    #[test]
    fn the_prefilter_never_hides_a_scanner_match(text in shaped_text()) {
        if super::scan::scanner_matches(&text) {
            prop_assert!(super::scan::prefilter_passes(&text), "{text:?}");
        }
    }

    #[test]
    fn the_prefilter_never_hides_a_match_in_arbitrary_text(text in "\\PC{0,60}") {
        if super::scan::scanner_matches(&text) {
            prop_assert!(super::scan::prefilter_passes(&text), "{text:?}");
        }
    }
}
