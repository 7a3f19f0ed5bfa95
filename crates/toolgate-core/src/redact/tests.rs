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
            "mysql ",
            "-p",
            "curl -u ",
            "sshpass -p ",
            "htpasswd -b f u ",
            "smbclient -U u%",
            "openssl -passin pass:",
            "sqlplus u/",
            "bash -c ",
            "%",
            ",",
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
        prop_assume!(!super::programs::mentions_client(&text));
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

// ---- passwords on the command lines of common clients ------------------

/// Every spelling a client accepts: attached, `=`, a separate word, quoted,
/// in a cluster, behind a path or a wrapper, inside `sh -c`.
#[test]
fn client_password_flags() {
    let cases: &[(&str, &str)] = &[
        (
            "mysql -uroot -pS3cret db",
            "mysql -uroot -p[REDACTED:password] db",
        ),
        ("mysql -vpS3cret db", "mysql -vp[REDACTED:password] db"),
        ("mysql -p=S3cret db", "mysql -p=[REDACTED:password] db"),
        (
            "mysql --password=S3cret db",
            "mysql --password=[REDACTED:password] db",
        ),
        (
            "mysql --password S3cret db",
            "mysql --password [REDACTED:password] db",
        ),
        ("mysql -p'S3 cret' db", "mysql -p'[REDACTED:password]' db"),
        ("mysql '-pS3cret' db", "mysql '-p[REDACTED:password]' db"),
        (
            "mysql -p\"S3cret\" db",
            "mysql -p\"[REDACTED:password]\" db",
        ),
        ("mysql -p\\S3cret db", "mysql -p\\[REDACTED:password] db"),
        ("mysql -p'$ecret' db", "mysql -p'[REDACTED:password]' db"),
        ("mariadb -pS3cret", "mariadb -p[REDACTED:password]"),
        (
            "/usr/bin/mysqldump -pS3cret db > x.sql",
            "/usr/bin/mysqldump -p[REDACTED:password] db > x.sql",
        ),
        ("mysql.exe -pS3cret", "mysql.exe -p[REDACTED:password]"),
        (
            "mysqladmin -u root password S3cret",
            "mysqladmin -u root password [REDACTED:password]",
        ),
        (
            "sudo -u db mysql -pS3cret",
            "sudo -u db mysql -p[REDACTED:password]",
        ),
        (
            "docker exec -i db mysql -pS3cret",
            "docker exec -i db mysql -p[REDACTED:password]",
        ),
        (
            "bash -c \"mysql -pS3cret -e 'show tables'\"",
            "bash -c \"mysql -p[REDACTED:password] -e 'show tables'\"",
        ),
        (
            "ssh h 'mysql -pS3cret'",
            "ssh h 'mysql -p[REDACTED:password]'",
        ),
        (
            "echo hi; mysql -pS3cret; ls -pKept",
            "echo hi; mysql -p[REDACTED:password]; ls -pKept",
        ),
        (
            "mysql -p\"a b\"; rm -rf x",
            "mysql -p\"[REDACTED:password]\"; rm -rf x",
        ),
        (
            "psql postgresql://app:S3cret@db/x",
            "psql postgresql://app:[REDACTED:url-password]@db/x",
        ),
        (
            "psql 'host=db password=S3cret'",
            "psql 'host=db password=[REDACTED:password]'",
        ),
        (
            "curl -u alice:S3cret https://x",
            "curl -u alice:[REDACTED:password] https://x",
        ),
        (
            "curl -ualice:S3cret https://x",
            "curl -ualice:[REDACTED:password] https://x",
        ),
        (
            "curl -su alice:S3cret https://x",
            "curl -su alice:[REDACTED:password] https://x",
        ),
        (
            "curl --user alice:S3cret https://x",
            "curl --user alice:[REDACTED:password] https://x",
        ),
        (
            "curl --user=alice:S3cret https://x",
            "curl --user=alice:[REDACTED:password] https://x",
        ),
        (
            "curl -u 'alice:S3 cret' https://x",
            "curl -u 'alice:[REDACTED:password]' https://x",
        ),
        (
            "curl -u alice:'S3 cret' https://x",
            "curl -u alice:'[REDACTED:password]' https://x",
        ),
        (
            "curl --proxy-user p:S3cret https://x",
            "curl --proxy-user p:[REDACTED:password] https://x",
        ),
        (
            "curl -U p:S3cret https://x",
            "curl -U p:[REDACTED:password] https://x",
        ),
        (
            "curl --oauth2-bearer S3cret https://x",
            "curl --oauth2-bearer [REDACTED:token] https://x",
        ),
        (
            "sshpass -p S3cret ssh h",
            "sshpass -p [REDACTED:password] ssh h",
        ),
        (
            "sshpass -pS3cret ssh h",
            "sshpass -p[REDACTED:password] ssh h",
        ),
        (
            "docker login -u me -p S3cret r.io",
            "docker login -u me -p [REDACTED:password] r.io",
        ),
        (
            "docker login -u me --password S3cret r.io",
            "docker login -u me --password [REDACTED:password] r.io",
        ),
        (
            "docker login -u me --password=S3cret r.io",
            "docker login -u me --password=[REDACTED:password] r.io",
        ),
        (
            "podman login -pS3cret q.io",
            "podman login -p[REDACTED:password] q.io",
        ),
        (
            "helm registry login r.io -u me -p S3cret",
            "helm registry login r.io -u me -p [REDACTED:password]",
        ),
        (
            "redis-cli -a S3cret ping",
            "redis-cli -a [REDACTED:password] ping",
        ),
        (
            "redis-cli -h h -aS3cret",
            "redis-cli -h h -a[REDACTED:password]",
        ),
        (
            "redis-cli --pass S3cret ping",
            "redis-cli --pass [REDACTED:password] ping",
        ),
        (
            "htpasswd -b .htpasswd alice S3cret",
            "htpasswd -b .htpasswd alice [REDACTED:password]",
        ),
        (
            "htpasswd -bc .htpasswd alice S3cret",
            "htpasswd -bc .htpasswd alice [REDACTED:password]",
        ),
        (
            "htpasswd -nb alice S3cret",
            "htpasswd -nb alice [REDACTED:password]",
        ),
        (
            "htpasswd -B -C 10 -b f alice S3cret",
            "htpasswd -B -C 10 -b f alice [REDACTED:password]",
        ),
        (
            "openssl enc -aes-256-cbc -k S3cret -in a",
            "openssl enc -aes-256-cbc -k [REDACTED:password] -in a",
        ),
        (
            "openssl enc -aes-256-cbc -pass pass:S3cret",
            "openssl enc -aes-256-cbc -pass [REDACTED:password]",
        ),
        (
            "openssl pkcs12 -passin pass:S3cret -passout pass:S3cret",
            "openssl pkcs12 -passin pass:[REDACTED:password] -passout pass:[REDACTED:password]",
        ),
        (
            "openssl enc -K 00112233445566778899 -iv 00",
            "openssl enc -K [REDACTED:key] -iv 00",
        ),
        (
            "mongosh -u admin -p S3cret",
            "mongosh -u admin -p [REDACTED:password]",
        ),
        (
            "mongodump -u a -pS3cret",
            "mongodump -u a -p[REDACTED:password]",
        ),
        (
            "ldapsearch -x -D cn=admin -w S3cret -b dc=x",
            "ldapsearch -x -D cn=admin -w [REDACTED:password] -b dc=x",
        ),
        (
            "ldapsearch -xwS3cret -b dc=x",
            "ldapsearch -xw[REDACTED:password] -b dc=x",
        ),
        (
            "ldappasswd -a S3cret -s S3cret uid=x",
            "ldappasswd -a [REDACTED:password] -s [REDACTED:password] uid=x",
        ),
        (
            "sqlcmd -S srv -U sa -P S3cret",
            "sqlcmd -S srv -U sa -P [REDACTED:password]",
        ),
        (
            "sqlcmd -S srv -U sa -PS3cret",
            "sqlcmd -S srv -U sa -P[REDACTED:password]",
        ),
        (
            "smbclient //srv/share -U alice%S3cret",
            "smbclient //srv/share -U alice%[REDACTED:password]",
        ),
        (
            "smbclient -Ualice%S3cret //srv/share",
            "smbclient -Ualice%[REDACTED:password] //srv/share",
        ),
        (
            "smbclient --user=alice%S3cret //srv/share",
            "smbclient --user=alice%[REDACTED:password] //srv/share",
        ),
        (
            "smbclient //srv/share S3cret -U alice",
            "smbclient //srv/share [REDACTED:password] -U alice",
        ),
        (
            "wget --password=S3cret ftp://x",
            "wget --password=[REDACTED:password] ftp://x",
        ),
        (
            "wget --http-password S3cret http://x",
            "wget --http-password [REDACTED:password] http://x",
        ),
        (
            "wget --ftp-passwd=S3cret ftp://x",
            "wget --ftp-passwd=[REDACTED:password] ftp://x",
        ),
        (
            "git clone https://alice:S3cret@github.com/x/y",
            "git clone https://alice:[REDACTED:url-password]@github.com/x/y",
        ),
        ("7z x -pS3cret a.7z", "7z x -p[REDACTED:password] a.7z"),
        (
            "zip -P S3cret a.zip f",
            "zip -P [REDACTED:password] a.zip f",
        ),
        (
            "unrar x -hpS3cret a.rar",
            "unrar x -hp[REDACTED:password] a.rar",
        ),
        (
            "keytool -genkey -storepass S3cret -keypass S3cret",
            "keytool -genkey -storepass [REDACTED:password] -keypass [REDACTED:password]",
        ),
        (
            "sqlplus scott/S3cret@orcl",
            "sqlplus scott/[REDACTED:password]@orcl",
        ),
        (
            "sqlplus -S scott/S3cret",
            "sqlplus -S scott/[REDACTED:password]",
        ),
        (
            "sqlldr userid=scott/S3cret control=x.ctl",
            "sqlldr userid=scott/[REDACTED:password] control=x.ctl",
        ),
        (
            "xfreerdp /u:admin /p:S3cret /v:host",
            "xfreerdp /u:admin /p:[REDACTED:password] /v:host",
        ),
        (
            "lftp -u alice,S3cret ftp.x",
            "lftp -u alice,[REDACTED:password] ftp.x",
        ),
        (
            "http -a alice:S3cret example.org",
            "http -a alice:[REDACTED:password] example.org",
        ),
        ("vault login S3cret", "vault login [REDACTED:token]"),
        (
            "gh secret set API --body S3cret",
            "gh secret set API --body [REDACTED:secret]",
        ),
        (
            "gh secret set API -b S3cret",
            "gh secret set API -b [REDACTED:secret]",
        ),
        (
            "kubectl create secret generic s --from-literal=db=S3cret",
            "kubectl create secret generic s --from-literal=db=[REDACTED:secret]",
        ),
        (
            "rabbitmqctl add_user alice S3cret",
            "rabbitmqctl add_user alice [REDACTED:password]",
        ),
        (
            "nmcli dev wifi connect Home password S3cret",
            "nmcli dev wifi connect Home password [REDACTED:password]",
        ),
        (
            "psexec.py corp/admin:S3cret@10.0.0.1",
            "psexec.py corp/admin:[REDACTED:password]@10.0.0.1",
        ),
        (
            "impacket-secretsdump admin:S3cret@dc",
            "impacket-secretsdump admin:[REDACTED:password]@dc",
        ),
        (
            "ssh-keygen -t ed25519 -N S3cret -f k",
            "ssh-keygen -t ed25519 -N [REDACTED:password] -f k",
        ),
        (
            "plink -pw S3cret host",
            "plink -pw [REDACTED:password] host",
        ),
        (
            "ipmitool -H h -U admin -P S3cret power status",
            "ipmitool -H h -U admin -P [REDACTED:password] power status",
        ),
        (
            "mosquitto_pub -u me -P S3cret -t x -m y",
            "mosquitto_pub -u me -P [REDACTED:password] -t x -m y",
        ),
        (
            "snmpwalk -v3 -A S3cret -X S3cret h",
            "snmpwalk -v3 -A [REDACTED:password] -X [REDACTED:password] h",
        ),
        (
            "rclone lsd --sftp-pass S3cret x:",
            "rclone lsd --sftp-pass [REDACTED:password] x:",
        ),
        (
            "mc alias set s3 https://x AKEY S3cret",
            "mc alias set s3 https://x AKEY [REDACTED:secret-key]",
        ),
        (
            "wpa_passphrase Home S3cret",
            "wpa_passphrase Home [REDACTED:password]",
        ),
        ("isql dsn sa S3cret", "isql dsn sa [REDACTED:password]"),
        (
            "crackmapexec smb h -u a -p S3cret",
            "crackmapexec smb h -u a -p [REDACTED:password]",
        ),
        (
            "{\"command\":\"mysql -pS3cret\"}",
            "{\"command\":\"mysql -p[REDACTED:password]\"}",
        ),
        (
            "run `mysql -pS3cret` first",
            "run `mysql -p[REDACTED:password]` first",
        ),
    ];
    for (text, expected) in cases {
        gone(text, "S3cret", expected);
    }
}

/// What looks like a password flag but is not one, or names the password
/// rather than holding it.
#[test]
fn client_flags_that_are_not_passwords() {
    for text in [
        "mysql -u root -p db",
        "mysql -p db",
        "mysql -p$MYSQL_PWD db",
        "mysql -p\"$MYSQL_PWD\" db",
        "mysql -p\"${PW}\" db",
        "mysql -p`cat pw` db",
        "curl -u alice https://x",
        "curl -u \"$USER:$PASS\" https://x",
        "docker run -p 8080:80 nginx",
        "docker login -u me --password-stdin r.io",
        "wget --user=a --ask-password http://x/f",
        "openssl rsa -passin env:PW -in k",
        "openssl rsa -passin file:pw.txt -in k",
        "ls -pS3cret",
        "ldapsearch -x -s sub -a always -b dc=x",
        "7z a -p a.7z dir",
        "vault login -method=userpass username=me",
        "gh variable set NAME --body value",
        "kubectl create configmap c --from-literal=k=v",
        "htpasswd -c .htpasswd alice",
        "smbclient -L //srv -N",
        "sqlplus /nolog @script.sql",
        "ls -la",
    ] {
        kept(text);
    }
}

/// A password spelled any way a client accepts never survives, and
/// redaction stays idempotent around it.
fn client_secret() -> impl Strategy<Value = (String, String)> {
    // `Zq` occurs nowhere else in the text, so its survival is the
    // password's.
    let pw = "Zq[A-Za-z0-9!#%+,.:=@^_~-]{0,12}[A-Za-z0-9]";
    (pw, 0usize..14).prop_map(|(p, form)| {
        let q = format!("'{p}'");
        let text = match form {
            0 => format!("mysql -u root -p{p} db"),
            1 => format!("mysql -p{q} -e 'select 1'"),
            2 => format!("sshpass -p {q} ssh host"),
            3 => format!("curl -u alice:{q} https://x"),
            4 => format!("curl --user=alice:{p} https://x"),
            5 => format!("docker login -u me -p {q} r.io"),
            6 => format!("redis-cli -a {q} ping"),
            7 => format!("htpasswd -b .htpasswd alice {q}"),
            8 => format!("openssl enc -k {q} -in a"),
            9 => format!("ldapsearch -x -w {q} -b dc=x"),
            10 => format!("sqlcmd -U sa -P {q}"),
            11 => format!("smbclient -U 'alice%{p}' //s/x"),
            12 => format!("bash -c \"mysql -p{q}\""),
            _ => format!("mongosh -p {q}"),
        };
        (text, p)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn client_passwords_never_survive(
        before in "[a-z ./;&|-]{0,20}",
        (text, pw) in client_secret(),
        after in "[a-z ./-]{0,20}",
    ) {
        let whole = format!("{before}; {text} {after}");
        let out = r(&whole);
        prop_assert!(!out.contains("Zq"), "{:?} survived in {:?}", pw, out);
        prop_assert_eq!(r(&out), out);
    }
}
