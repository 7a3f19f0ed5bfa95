//! Properties of the shell analyzer on generated input: it never panics,
//! quoting round-trips through it, and no supported wrapping hides the
//! command it wraps (the command is found, or the analysis says it could not
//! see inside).

use proptest::prelude::*;
use toolgate_paths::Env;
use toolgate_shell::{ShellAnalysis, analyze, quote};

fn env() -> Env {
    Env::new("/home/dev", "/home/dev/proj")
}

/// True when `program` is among the commands found, or the analysis admits
/// it could not resolve something (which the engine escalates).
fn sees_or_admits(analysis: &ShellAnalysis, program: &str) -> bool {
    analysis.commands.iter().any(|c| c.program == program) || !analysis.opaque.is_empty()
}

/// Ways to run a command that still run it. Prefix wrappers (`sudo`,
/// `timeout` …) take a simple command only (`timeout 10 { rm …; }` runs a
/// program named `{`), so anything compound goes through `sh -c` first, as
/// it must in a real shell.
fn wrap(cmd: &str, how: u8) -> String {
    let q = quote(cmd);
    let simple = !cmd.contains([';', '&', '|', '(', ')', '{', '}', '\n', '<', '>'])
        && !cmd.starts_with("if ");
    let prefixed = &if simple {
        cmd.to_string()
    } else {
        format!("sh -c {q}")
    };
    match how % 16 {
        0 => format!("sudo {prefixed}"),
        1 => format!("env FOO=1 {prefixed}"),
        2 => format!("bash -c {q}"),
        3 => format!("sh -c {q}"),
        4 => format!("true && {cmd}"),
        5 => format!("ls; {cmd}"),
        6 => format!("( {cmd} )"),
        7 => format!("{{ {cmd}; }}"),
        8 => format!("if true; then {cmd}; fi"),
        // Spaced: `$((` … `))` is arithmetic to every shell, and a program
        // inside it does not run, so it is no hiding place to test.
        9 => format!("echo \"$( {cmd} )\""),
        10 => format!("cat <({cmd})"),
        11 => format!("f() {{ {cmd}; }}; f"),
        12 => format!("eval {q}"),
        13 => format!("ssh host {q}"),
        14 => format!("echo | xargs -I{{}} sh -c {q}"),
        _ => format!("timeout 10 {prefixed}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn never_panics_on_arbitrary_text(text in ".{0,400}") {
        let _ = analyze(&text, &env());
    }

    #[test]
    fn never_panics_on_shell_like_text(text in r#"[a-z$(){}\[\]<>|&;'"`\\ \n\t=*~!#-]{0,300}"#) {
        let _ = analyze(&text, &env());
    }

    /// `quote` yields one word that the analyzer reads back unchanged.
    #[test]
    fn quoting_round_trips(arg in "[^\u{0}]{0,60}") {
        let a = analyze(&format!("printf %s {}", quote(&arg)), &env());
        prop_assert!(a.opaque.is_empty(), "opaque: {:?}", a.opaque);
        prop_assert_eq!(a.commands.len(), 1);
        let argv: Vec<&str> = a.commands[0].argv.iter().map(|w| w.text.as_str()).collect();
        prop_assert_eq!(argv, vec!["printf", "%s", arg.as_str()]);
        prop_assert!(!a.commands[0].argv[2].dynamic);
    }

    #[test]
    fn wrapping_never_hides_the_wrapped_program(hows in proptest::collection::vec(any::<u8>(), 1..4)) {
        let mut cmd = "rm -rf /srv/data".to_string();
        for h in hows {
            cmd = wrap(&cmd, h);
        }
        let a = analyze(&cmd, &env());
        prop_assert!(sees_or_admits(&a, "rm"), "hidden: {}", cmd);
    }
}

#[test]
fn deep_nesting_is_bounded() {
    let deep = format!("{}rm -rf /{}", "$(".repeat(5000), ")".repeat(5000));
    assert!(sees_or_admits(&analyze(&deep, &env()), "rm"));
    let long = "a && ".repeat(20_000) + "rm -rf /";
    assert!(sees_or_admits(&analyze(&long, &env()), "rm"));
    let chain = "env ".repeat(3000) + "rm -rf /";
    assert!(sees_or_admits(&analyze(&chain, &env()), "rm"));
}
