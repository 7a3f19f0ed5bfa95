//! Shell functions, judged where they run: a call analyzes the body with
//! the call's arguments as `$1`, `$2`, … (`f(){ rm -rf "$1"; }; f ~` is
//! `rm -rf ~`), and a body no call covered is analyzed once at the end with
//! its arguments unknown, so a function defined for later (`export -f`, a
//! sourced file) is still judged.

use super::analyzer::Analyzer;
use super::scope::{Defined, Scope};
use super::types::*;

/// Function calls analyzed again with their arguments, per analysis: a
/// script calling a function a thousand times is judged on its first calls
/// and on the body with unknown arguments.
const MAX_FUNCTION_CALLS: usize = 16;

/// The longest function body kept to analyze at its calls; a longer one
/// is analyzed where it is defined, with unknown arguments.
pub(crate) const MAX_FUNCTION_BODY: usize = 4096;

/// Most bodies analyzed in the final pass (each may define more).
const MAX_UNCALLED: usize = 64;

/// The `via` entry marking analysis inside function `name` (the fork-bomb
/// rule looks for it).
fn marker(name: &str) -> String {
    format!("function {name}")
}

impl Analyzer<'_> {
    /// Records a function definition whose body is `body`; `false` when the
    /// body is too long to keep (the caller then analyzes it in place).
    pub(crate) fn define_function(&mut self, name: &str, body: &str, scope: &mut Scope) -> bool {
        if body.len() > MAX_FUNCTION_BODY {
            scope.state_mut().functions.push((name.to_string(), None));
            return false;
        }
        scope
            .state_mut()
            .functions
            .push((name.to_string(), Some(body.to_string())));
        let mut inner = scope.clone();
        inner.via.push(Via {
            wrapper: marker(name),
        });
        self.defined.push(Defined {
            name: name.to_string(),
            body: body.to_string(),
            scope: inner,
            covered: false,
            missed: false,
        });
        true
    }

    /// Analyzes a call of a function defined earlier with its arguments;
    /// `false` when `argv` is not such a call (or is one inside the same
    /// function: a recursive call is judged by the body already analyzed).
    pub(crate) fn call_function(&mut self, argv: &[Word], scope: &Scope) -> bool {
        let Some(first) = argv.first().filter(|w| !w.dynamic) else {
            return false;
        };
        let Some(body) = scope.function_body(&first.text).map(str::to_string) else {
            return false;
        };
        let mark = marker(&first.text);
        if scope.via.iter().any(|v| v.wrapper == mark) {
            return false;
        }
        let entry = self.defined.iter().rposition(|d| d.name == first.text);
        if self.function_calls >= MAX_FUNCTION_CALLS {
            if let Some(i) = entry {
                self.defined[i].missed = true;
            }
            return false;
        }
        self.function_calls += 1;
        if let Some(i) = entry {
            self.defined[i].covered = true;
        }
        let mut inner = scope.clone();
        let args = &argv[1..];
        let vars = &mut inner.state_mut().vars;
        for (i, w) in args.iter().enumerate().take(9) {
            vars.insert((i + 1).to_string(), (!w.dynamic).then(|| w.text.clone()));
        }
        // `"$@"` is one word per argument; a single known one is exact.
        let all = match args {
            [only] if !only.dynamic => Some(only.text.clone()),
            [] => Some(String::new()),
            _ => None,
        };
        vars.insert("@".to_string(), all.clone());
        vars.insert("*".to_string(), all);
        vars.insert("#".to_string(), Some(args.len().to_string()));
        inner.via.push(Via { wrapper: mark });
        inner.redirects.clear();
        self.analyze_text(&body, &mut inner);
        true
    }

    /// Analyzes, with unknown arguments, every function body that no call
    /// covered.
    pub(crate) fn analyze_uncalled(&mut self) {
        let mut done = 0;
        while done < MAX_UNCALLED {
            let Some(i) = self.defined.iter().position(|d| !d.covered || d.missed) else {
                return;
            };
            let d = self.defined.remove(i);
            let mut scope = d.scope;
            self.analyze_text(&d.body, &mut scope);
            done += 1;
        }
        if self.defined.iter().any(|d| !d.covered || d.missed) {
            self.opaque(
                "the script defines too many functions to analyze",
                &self.defined[0].name.clone(),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::analyze;
    use toolgate_paths::Env;

    fn shown(text: &str) -> Vec<String> {
        let env = Env::new("/home/dev", "/home/dev/proj");
        analyze(text, &env)
            .commands
            .iter()
            .map(|c| c.display())
            .collect()
    }

    #[test]
    fn a_call_runs_the_body_with_its_arguments() {
        let cmds = shown(r#"f(){ rm -rf "$1"; }; f ~"#);
        assert!(cmds.iter().any(|c| c == "rm -rf ~"), "{cmds:?}");
        // Only the call's reading: the body with `$1` unknown is not added.
        assert!(!cmds.iter().any(|c| c.contains("$1")), "{cmds:?}");
        let cmds = shown(r#"g(){ f "$@"; }; f(){ rm -rf "$1"; }; g /"#);
        assert!(cmds.iter().any(|c| c == "rm -rf /"), "{cmds:?}");
    }

    #[test]
    fn an_uncalled_body_is_judged_with_unknown_arguments() {
        let cmds = shown(r#"f(){ rm -rf "$1"; }"#);
        assert!(cmds.iter().any(|c| c.starts_with("rm -rf")), "{cmds:?}");
        // Past the call budget, the body is judged with unknown arguments too.
        let many: Vec<String> = (0..20).map(|i| format!("f a{i}")).collect();
        let cmds = shown(&format!(
            r#"f(){{ rm -rf "$1"; }}; {}; f ~"#,
            many.join("; ")
        ));
        assert!(cmds.iter().any(|c| c.contains("$1")), "{cmds:?}");
    }

    #[test]
    fn recursion_is_followed_once() {
        let cmds = shown(":(){ :|:& };:");
        assert!(cmds.iter().filter(|c| *c == ":").count() >= 2, "{cmds:?}");
        assert!(cmds.len() < 10, "{cmds:?}");
    }
}
