//! Text whose effect cannot be read as paths: interpreter code (`python3
//! -c`, `node -e`, a here-document fed to `perl`, a script written then
//! run), words known only in part, free strings of unknown tools.
//!
//! Code is not executed, so what it does to a path it names cannot be
//! known; naming a member is enough to stop it. What makes this general
//! rather than a list of spellings: the code is read in several
//! normalized forms, each searched for every member's name —
//!
//! - as written, lowercased, with `\xNN`, `\u00NN` and `%NN` escapes decoded;
//! - with quotes, blanks, `+`, braces and backslashes removed, so
//!   concatenated literal parts read as one (`'.cl' + 'aude/settings.json'`,
//!   Python's adjacent literals, `f"{home}/.codex/hooks.json"`);
//! - the same with `,` read as `/`, so path joins read as paths
//!   (`os.path.join(home, '.claude', 'settings.json')`,
//!   `path.join(os.homedir(), '.codex', 'hooks.json')`); pathlib's `/`
//!   needs nothing (`Path.home() / '.codex' / 'hooks.json'`);
//! - the same with every `.` removed (PHP's, Perl's and Lua's `.`/`..`
//!   concatenation: `getenv('HOME') . '/.claude/settings.json'`), against
//!   the names with their dots removed;
//!
//! plus every quoted literal resolved as a path from the working directory
//! and the home (`'../proj/toolgate.toml'`, `'~/.codex/hooks.json'`), and a
//! runtime's settings directory named beside one of its settings file names
//! anywhere in the code (`d = '.claude'; open(os.path.join(d,
//! 'settings.local.json'))`). Spellings computed at run time (`chr(46)`,
//! base64, reversed strings) are not seen: separated mode is the guarantee
//! for those.

use super::members::{Member, What, home_spelling};
use super::{Access, Certainty, Hit, Protected, stricter, verdict};
use crate::paths::{Env, is_within};

const fn m(what: What, secret: bool) -> Member {
    Member { what, secret }
}

/// Names of static members as they appear in text (lowercase).
const NEEDLES: &[(&str, Member)] = &[
    (".claude/settings.json", m(What::HookSettings, false)),
    (".claude/settings.local.json", m(What::HookSettings, false)),
    (".claude/hooks/", m(What::HookSettings, false)),
    (".claude.json", m(What::HookSettings, false)),
    (".codex/hooks.json", m(What::HookSettings, false)),
    (".codex/config.toml", m(What::HookSettings, false)),
    (".codex/requirements.toml", m(What::HookSettings, false)),
    (".gemini/settings.json", m(What::HookSettings, false)),
    (".gemini/.env", m(What::HookSettings, false)),
    (".cursor/hooks.json", m(What::HookSettings, false)),
    (".openclaw/openclaw.json", m(What::HookSettings, false)),
    (".openclaw/extensions", m(What::HookSettings, false)),
    (".config/openclaw", m(What::HookSettings, false)),
    ("/etc/claude-code", m(What::HookSettings, false)),
    ("managed-settings.json", m(What::HookSettings, false)),
    ("/etc/codex/", m(What::HookSettings, false)),
    ("/etc/gemini-cli", m(What::HookSettings, false)),
    ("/etc/cursor/", m(What::HookSettings, false)),
    ("toolgate.toml", m(What::Policy, false)),
    ("toolgate.db", m(What::Database, true)),
    ("operator.token", m(What::Token, true)),
    ("agent.token", m(What::Token, true)),
    ("link.token", m(What::Token, true)),
    ("daemon.key", m(What::Key, true)),
    ("daemon.pub", m(What::Key, false)),
    (".config/toolgate", m(What::Config, false)),
    (".local/state/toolgate", m(What::State, true)),
    ("/etc/toolgate", m(What::Config, false)),
    ("/var/lib/toolgate", m(What::State, true)),
    ("/run/toolgate", m(What::Socket, false)),
    ("bin/toolgate", m(What::Binary, false)),
    ("toolgate.service", m(What::Service, false)),
    ("systemd/user/toolgate", m(What::Service, false)),
    ("systemd/system/toolgate", m(What::Service, false)),
];

/// A runtime's settings directory and the file names it reads there: both
/// named anywhere in the same code name the settings file, however the
/// path is put together.
const PAIRS: &[(&str, &[&str])] = &[
    (".claude", &["settings", "hooks"]),
    (".codex", &["hooks", "config.toml", "requirements.toml"]),
    (".gemini", &["settings", ".env"]),
    (".cursor", &["hooks"]),
    (".openclaw", &["openclaw.json", "extensions"]),
];

/// Words that, with `toolgate` named in the same code, stop or pause it.
const PROCESS_WORDS: &[&str] = &[
    "kill",
    "sigstop",
    "sigterm",
    "sigtstp",
    "signal",
    "terminate",
    "suspend",
    "systemctl",
    "launchctl",
];

/// Words that, with a protected port in the same code, open a listener.
const LISTEN_WORDS: &[&str] = &[
    "listen", "bind", "serve", "server", "socket", "httpd", "tcp-l", "accept",
];

/// `\xNN`, `\u00NN`, `\u{NN}` and `%NN` escapes decoded (ASCII only), the
/// rest kept; lowercased.
pub(super) fn decoded_lower(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let hex = |s: &[u8]| -> Option<u8> {
        let s = std::str::from_utf8(s).ok()?;
        u8::from_str_radix(s, 16).ok().filter(u8::is_ascii)
    };
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let decoded = match c {
            b'%' if i + 3 <= b.len() => hex(&b[i + 1..i + 3]).map(|v| (v, 3)),
            b'\\' if b.get(i + 1) == Some(&b'x') && i + 4 <= b.len() => {
                hex(&b[i + 2..i + 4]).map(|v| (v, 4))
            }
            b'\\' if b.get(i + 1) == Some(&b'u') && b.get(i + 2) == Some(&b'{') => b[i + 3..]
                .iter()
                .position(|&x| x == b'}')
                .filter(|&n| (1..=6).contains(&n))
                .and_then(|n| hex(&b[i + 3..i + 3 + n]).map(|v| (v, n + 4))),
            b'\\' if b.get(i + 1) == Some(&b'u') && i + 6 <= b.len() => {
                hex(&b[i + 2..i + 6]).map(|v| (v, 6))
            }
            // `\056`: an octal escape (Python, Perl, Ruby, PHP, shells).
            b'\\'
                if i + 4 <= b.len()
                    && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c)) =>
            {
                let v = b[i + 1..i + 4]
                    .iter()
                    .fold(0u32, |acc, c| acc * 8 + u32::from(c - b'0'));
                u8::try_from(v).ok().filter(u8::is_ascii).map(|v| (v, 4))
            }
            _ => None,
        };
        match decoded {
            Some((v, n)) => {
                out.push(v.to_ascii_lowercase());
                i += n;
            }
            None => {
                out.push(c.to_ascii_lowercase());
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// The normalized forms of a text (module docs): decoded, squeezed,
/// joined, undotted.
pub(super) struct Forms {
    pub decoded: String,
    pub squeezed: String,
    pub joined: String,
    pub undotted: String,
}

impl Forms {
    pub(super) fn of(text: &str) -> Forms {
        let decoded = decoded_lower(text);
        let squeezed: String = decoded
            .chars()
            .filter(|c| {
                !matches!(c, '\'' | '"' | '`' | '+' | '\\' | '{' | '}') && !c.is_whitespace()
            })
            .collect();
        let joined: String = squeezed
            .chars()
            .map(|c| if c == ',' { '/' } else { c })
            .collect();
        let undotted: String = joined.chars().filter(|c| *c != '.').collect();
        Forms {
            decoded,
            squeezed,
            joined,
            undotted,
        }
    }

    /// Whether any form contains `needle` (lowercase); the undotted form
    /// is searched for the needle without its dots.
    pub(super) fn contain(&self, needle: &str) -> bool {
        if self.decoded.contains(needle)
            || self.squeezed.contains(needle)
            || self.joined.contains(needle)
        {
            return true;
        }
        if needle.len() < 7 {
            return false;
        }
        let mut undotted = [0u8; 64];
        let mut len = 0;
        for b in needle.bytes().filter(|b| *b != b'.') {
            if len == undotted.len() {
                return false;
            }
            undotted[len] = b;
            len += 1;
        }
        len >= 6 && std::str::from_utf8(&undotted[..len]).is_ok_and(|u| self.undotted.contains(u))
    }

    fn any(&self, words: &[&str]) -> bool {
        words
            .iter()
            .any(|w| self.decoded.contains(w) || self.squeezed.contains(w))
    }
}

/// The quoted literals of code (`'…'`, `"…"`, `` `…` ``), unescaped
/// loosely: what a path literal would hold.
fn literals(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = code.chars();
    while let Some(c) = chars.next() {
        if !matches!(c, '\'' | '"' | '`') {
            continue;
        }
        let mut lit = String::new();
        let mut closed = false;
        while let Some(d) = chars.next() {
            if d == '\\' {
                if let Some(e) = chars.next() {
                    lit.push(e);
                }
                continue;
            }
            if d == c {
                closed = true;
                break;
            }
            lit.push(d);
        }
        if closed && !lit.is_empty() && lit.len() < 4096 {
            out.push(lit);
        }
    }
    out
}

/// Whether a literal could be a path worth resolving.
fn pathlike(lit: &str) -> bool {
    !lit.contains(['\n', '\r'])
        && !lit.contains("://")
        && (lit.contains('/') || lit.starts_with('~') || lit.starts_with('.') || lit.contains('.'))
}

/// The spellings of the dynamic members a text may use: absolute, from the
/// home (`~/…` and the part after the home), relative to `cwd`.
fn dynamic_needles(p: &Protected, cwd: Option<&str>, env: &Env) -> Vec<(String, Member)> {
    let mut out = Vec::new();
    let mut add = |abs: &str, member: Member| {
        out.push((abs.to_ascii_lowercase(), member));
        if let Some(h) = home_spelling(abs, env) {
            let rest = h.trim_start_matches('~').to_ascii_lowercase();
            out.push((h.to_ascii_lowercase(), member));
            if rest.len() > 1 {
                out.push((rest, member));
            }
        }
        if let Some(cwd) = cwd
            && abs != cwd
            && is_within(abs, cwd)
        {
            let rel = abs[cwd.len()..]
                .trim_start_matches('/')
                .to_ascii_lowercase();
            if !rel.is_empty() {
                out.push((rel, member));
            }
        }
    };
    for f in &p.files {
        add(f, m(What::Policy, false));
    }
    for d in &p.data_dirs {
        add(d, m(What::State, true));
    }
    for s in &p.sockets {
        add(s, m(What::Socket, false));
    }
    out
}

/// Whether a text could name a member at all: one of the static members'
/// marks, a dynamic member's file name, or an escape that may hide them.
/// Most texts are answered by this scan alone.
pub(super) fn may_name(p: &Protected, text: &str) -> bool {
    const MARKS: &[&str] = &[
        "toolgate",
        "claude",
        "codex",
        "gemini",
        "cursor",
        "openclaw",
        "token",
        "daemon",
        "managed-settings",
        "\\",
        "%",
    ];
    let lower = text.to_ascii_lowercase();
    MARKS.iter().any(|m| lower.contains(m))
        || p.files
            .iter()
            .chain(&p.data_dirs)
            .chain(&p.sockets)
            .filter_map(|f| f.rsplit('/').next())
            .any(|name| name.len() > 2 && lower.contains(&name.to_ascii_lowercase()))
}

/// Whether code could name anything of the gate, read with escapes decoded
/// and everything but letters, digits, `/`, `-` and `_` dropped (so
/// `'.cl' + 'aude'` and `'.cl' . 'aude'` read `claude`): a mark of a member,
/// a runtime's settings or hooks, a route, a dynamic member's name, a
/// protected port. Most code is answered by this alone.
fn code_may_name(p: &Protected, code: &str) -> bool {
    const MARKS: &[&str] = &[
        "toolgate",
        "claude",
        "codex",
        "gemini",
        "cursor",
        "openclaw",
        "token",
        "daemon",
        "managedsettings",
        "hooks",
        "settings",
        "v1",
        "approvals",
    ];
    let decoded = decoded_lower(code);
    let compact: String = decoded
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '-' | '_'))
        .collect();
    let compact_name = |path: &String| -> String {
        path.rsplit('/')
            .next()
            .unwrap_or("")
            .to_ascii_lowercase()
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
            .collect()
    };
    MARKS.iter().any(|m| compact.contains(m))
        || p.files
            .iter()
            .chain(&p.data_dirs)
            .chain(&p.sockets)
            .map(compact_name)
            .any(|n| n.len() > 2 && compact.contains(&n))
        || p.ports().any(|port| names_port(&decoded, port))
}

/// The member a text names, and how it names it: a literal that resolves
/// to one, or a member's name in one of the text's forms.
pub(super) fn named_in_text(
    p: &Protected,
    text: &str,
    cwd: Option<&str>,
    env: &Env,
) -> Option<(Member, String)> {
    if !may_name(p, text) {
        return None;
    }
    named_in_forms(p, text, &Forms::of(text), cwd, env)
}

fn named_in_forms(
    p: &Protected,
    text: &str,
    forms: &Forms,
    cwd: Option<&str>,
    env: &Env,
) -> Option<(Member, String)> {
    // Quoted literals, and the whole text when it is one word, as paths
    // (a literal holding a variable is left to the name search).
    let mut candidates = literals(text);
    if !text.contains(char::is_whitespace) {
        candidates.push(text.to_string());
    }
    for lit in candidates
        .iter()
        .filter(|l| crate::wildcard::is_glob(l) && pathlike(l))
    {
        // A glob the code expands (`glob.glob('~/.c*/hooks.json')`).
        let abs = if lit.starts_with('/') || lit.starts_with('~') {
            env.resolve(lit)
        } else if let Some(cwd) = cwd {
            env.resolve_from(cwd, lit)
        } else {
            continue;
        };
        if let Some(member) = p.member_by_glob(&abs, env) {
            return Some((member, abs));
        }
    }
    let resolved: Vec<String> = candidates
        .iter()
        .filter(|l| pathlike(l) && !l.contains(['$', '{', '}']))
        .filter_map(|lit| {
            if lit.starts_with('/') || lit.starts_with('~') {
                Some(env.resolve(lit))
            } else {
                cwd.map(|cwd| env.resolve_from(cwd, lit))
            }
        })
        .collect();
    for abs in &resolved {
        if let Some(member) = p.member(abs, env) {
            return Some((member, abs.clone()));
        }
    }
    for (needle, member) in NEEDLES {
        if forms.contain(needle) {
            return Some((*member, (*needle).to_string()));
        }
    }
    for abs in &resolved {
        if let Some(member) = p.member_inside_static(abs, env) {
            return Some((member, abs.clone()));
        }
    }
    for (dir, names) in PAIRS {
        if forms.squeezed.contains(dir) && names.iter().any(|n| forms.squeezed.contains(n)) {
            return Some((m(What::HookSettings, false), format!("a file in {dir}")));
        }
    }
    if !(p.files.is_empty() && p.data_dirs.is_empty() && p.sockets.is_empty()) {
        for (needle, member) in dynamic_needles(p, cwd, env) {
            if needle.len() > 2 && forms.contain(&needle) {
                return Some((member, needle));
            }
        }
    }
    None
}

/// Whether a text names a protected port as a number of its own (`7878`,
/// `:7878`, `TCP-LISTEN:7878,fork`, `-p7878`, but not `17878`).
pub(super) fn names_port(text: &str, port: u16) -> bool {
    if !text.bytes().any(|b| b.is_ascii_digit()) {
        return false;
    }
    // The port's digits, without allocating.
    let mut buf = [0u8; 5];
    let mut n = port;
    let mut len = 0;
    loop {
        buf[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf[..len].reverse();
    let digits = &buf[..len];
    let b = text.as_bytes();
    b.windows(len).enumerate().any(|(start, w)| {
        w == digits
            && !start.checked_sub(1).is_some_and(|j| b[j].is_ascii_digit())
            && !b.get(start + len).is_some_and(u8::is_ascii_digit)
    })
}

/// What interpreter code calls for (module docs).
pub(super) fn judge(p: &Protected, code: &str, cwd: Option<&str>, env: &Env) -> Option<Hit> {
    if !code_may_name(p, code) {
        return None;
    }
    let forms = Forms::of(code);
    let mut hit = None;
    if let Some(route) = super::gate::operator_route(&forms.decoded)
        .or_else(|| super::gate::operator_route(&forms.squeezed))
    {
        return Some(Hit::block(
            "protected.operator-endpoint",
            format!(
                "requests {route}, an operator endpoint of toolgate's daemon, from code; \
                 approvals, bypasses and operators are for people, never the agent"
            ),
        ));
    }
    if let Some((member, shown)) = named_in_forms(p, code, &forms, cwd, env) {
        hit = verdict(Access::Code, member, Certainty::Certain, &shown);
    }
    if forms.decoded.contains("toolgate") && forms.any(PROCESS_WORDS) {
        hit = stricter(
            hit,
            Some(Hit::block(
                "protected.process",
                "stops or signals toolgate's process from code; stopping, pausing or disabling \
                 the gate is not the agent's to do"
                    .to_string(),
            )),
        );
    }
    if hit.is_none()
        && p.ports().any(|port| names_port(&forms.decoded, port))
        && forms.any(LISTEN_WORDS)
    {
        hit = Some(Hit::escalate(
            "protected.listener",
            "opens a listener on the toolgate daemon's port from code, where a fake daemon \
             would answer the hooks"
                .to_string(),
        ));
    }
    hit
}

impl Protected {
    /// A runtime's settings directory (`.claude`, `.codex`, …) named as a
    /// whole in code (`shutil.rmtree(os.path.expanduser('~/.claude'))`);
    /// not merely a directory above a member, which code names for many
    /// reasons.
    pub(super) fn member_inside_static(&self, abs: &str, _env: &Env) -> Option<Member> {
        let name = abs.rsplit('/').next().unwrap_or(abs).to_ascii_lowercase();
        super::members::HOOK_DIRS
            .contains(&name.as_str())
            .then_some(m(What::HookSettings, false))
    }
}
