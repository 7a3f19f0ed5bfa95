//! Prints what the shell analyzer finds in each line of stdin (`\n` in a line
//! stands for a newline). A development aid: `cargo run --example analyze`.
use std::io::BufRead;
use toolgate_core::paths::Env;
use toolgate_core::shell::analyze;

fn main() {
    let env = Env::new("/home/dev", "/home/dev/proj");
    for line in std::io::stdin().lock().lines().map_while(Result::ok) {
        let cmd = line.replace("\\n", "\n");
        let a = analyze(&cmd, &env);
        println!("{cmd}");
        for c in &a.commands {
            let via: Vec<&str> = c.via.iter().map(|v| v.wrapper.as_str()).collect();
            println!(
                "  {}{} [{}]{}{}{}{}",
                if c.wrapper { "(w) " } else { "" },
                c.argv
                    .iter()
                    .map(|w| if w.dynamic {
                        format!("?{}", w.text)
                    } else {
                        format!("{:?}", w.text)
                    })
                    .collect::<Vec<_>>()
                    .join(" "),
                via.join(" > "),
                if c.privileged { " privileged" } else { "" },
                if c.stdin_from.is_empty() {
                    String::new()
                } else {
                    format!(" stdin<-{:?}", c.stdin_from)
                },
                if c.redirects.is_empty() {
                    String::new()
                } else {
                    format!(
                        " redirects={:?}",
                        c.redirects
                            .iter()
                            .map(|r| (r.kind, &r.target.text))
                            .collect::<Vec<_>>()
                    )
                },
                c.inline_code
                    .as_ref()
                    .map(|i| format!(" code({})={:?}", i.language, i.code))
                    .unwrap_or_default(),
            );
        }
        for o in &a.opaque {
            println!("  OPAQUE {}: {}", o.reason, o.snippet);
        }
    }
}
