//! The answer table: for each runtime and each of its permission modes,
//! every answer a hook can give, and whether the call can run after it.
//!
//! The facts were observed with the real clients (the versions are in each
//! runtime's table and in docs/integrations.md); where a fact was not
//! observed, the table says the call runs, because a guard must assume the
//! worst of an answer it has not seen obeyed. Tests read this table: no
//! reply toolgate gives for a blocked or escalated call may be an answer
//! after which the call runs (see [`HookAnswer::kind`] and the property test
//! in `tests.rs`), and docs/integrations.md is rendered from it.

use serde_json::Value;

/// What the runtime does with a call after a hook answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::VariantArray)]
pub enum Outcome {
    /// The call runs (or may run: not observed to be stopped).
    #[strum(to_string = "runs")]
    Runs,
    /// The call does not run.
    #[strum(to_string = "stopped")]
    Stops,
    /// The runtime asks the person at its own prompt; it runs only if they
    /// say yes. Only meaningful in a mode with a person at the prompt.
    #[strum(to_string = "person at the prompt decides")]
    PersonDecides,
}

impl Outcome {
    /// The word the docs use.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// An answer a hook can give, as the runtime reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::IntoStaticStr, strum::VariantArray)]
pub enum AnswerKind {
    /// Exit 0, JSON saying allow (with no replacement input).
    #[strum(to_string = "allow")]
    Allow,
    /// Exit 0, JSON saying allow, with replacement input.
    #[strum(to_string = "allow + new input")]
    AllowWithInput,
    /// Exit 0, JSON saying deny (or block).
    #[strum(to_string = "deny")]
    Deny,
    /// Exit 0, JSON asking the runtime to prompt its user.
    #[strum(to_string = "ask")]
    Ask,
    /// Exit 0, JSON deferring to the runtime's own permission logic.
    #[strum(to_string = "defer")]
    Defer,
    /// Exit 0, JSON with no decision (`{}` or only extra context).
    #[strum(to_string = "no decision (`{}`)")]
    NoDecision,
    /// Exit 0 with output the runtime does not accept (not JSON, unknown
    /// fields, a decision it rejects).
    #[strum(to_string = "malformed / rejected JSON")]
    Malformed,
    /// Exit code 2 with a reason on stderr.
    #[strum(to_string = "exit 2 + stderr")]
    Exit2,
    /// Exit code 2 with nothing on stderr.
    #[strum(to_string = "exit 2, empty stderr")]
    Exit2Silent,
    /// Exit code 1 or any code other than 0 and 2.
    #[strum(to_string = "exit 1 / other code")]
    ExitOther,
    /// The hook did not answer within the entry's timeout.
    #[strum(to_string = "timeout")]
    Timeout,
    /// The hook was killed by a signal or could not be started.
    #[strum(to_string = "crash")]
    Crash,
}

impl AnswerKind {
    /// Every answer, in the order the docs list them.
    pub const ALL: [AnswerKind; 12] = [
        AnswerKind::Allow,
        AnswerKind::AllowWithInput,
        AnswerKind::Deny,
        AnswerKind::Ask,
        AnswerKind::Defer,
        AnswerKind::NoDecision,
        AnswerKind::Malformed,
        AnswerKind::Exit2,
        AnswerKind::Exit2Silent,
        AnswerKind::ExitOther,
        AnswerKind::Timeout,
        AnswerKind::Crash,
    ];

    /// The label the docs use.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// One row of a mode's table.
#[derive(Debug, Clone, Copy)]
pub struct Fact {
    /// The answer.
    pub answer: AnswerKind,
    /// What the runtime then does with the call.
    pub outcome: Outcome,
    /// How it was established, or a caveat; empty when plain.
    pub note: &'static str,
}

/// A permission mode of a runtime and what each answer does in it.
#[derive(Debug, Clone, Copy)]
pub struct Mode {
    /// The mode as the runtime's payload names it (`permission_mode`), or as
    /// its command line does when the payload does not carry one.
    pub name: &'static str,
    /// True when a person sits at the runtime's own prompt in this mode, so
    /// its prompt can stand in for an approval (`[hooks] host_prompt`).
    pub person_at_prompt: bool,
    /// Every answer's outcome; an answer missing here is taken to run.
    pub facts: &'static [Fact],
}

impl Mode {
    /// What the runtime does after `answer` in this mode; `Runs` for an
    /// answer the table does not list.
    pub fn outcome(&self, answer: AnswerKind) -> Outcome {
        self.facts
            .iter()
            .find(|f| f.answer == answer)
            .map_or(Outcome::Runs, |f| f.outcome)
    }
}

/// One runtime's table: the client version observed and its modes. The
/// first mode is the one assumed when a payload names none or one the
/// table does not know: the most permissive, so an unknown mode fails closed.
#[derive(Debug, Clone, Copy)]
pub struct AnswerTable {
    /// The client and version the facts were observed with.
    pub observed: &'static str,
    /// The modes, most permissive first.
    pub modes: &'static [Mode],
}

impl AnswerTable {
    /// The mode a payload's `permission_mode` names; the first (most
    /// permissive) for `None` or a name the table does not know.
    pub fn mode(&self, name: Option<&str>) -> &Mode {
        name.and_then(|n| self.modes.iter().find(|m| m.name.eq_ignore_ascii_case(n)))
            .unwrap_or(&self.modes[0])
    }
}

/// What a hook process prints and how it exits.
#[derive(Debug, Clone, PartialEq)]
pub struct HookAnswer {
    /// The JSON printed on stdout (may be `{}`).
    pub stdout: Value,
    /// The exit code.
    pub exit: u8,
    /// Text for stderr, if any (read by runtimes on exit 2).
    pub stderr: Option<String>,
}

impl HookAnswer {
    /// A JSON answer on stdout with exit 0.
    pub fn json(stdout: Value) -> HookAnswer {
        HookAnswer {
            stdout,
            exit: 0,
            stderr: None,
        }
    }

    /// This answer's kind as `classify` (the runtime's reading of exit-0
    /// JSON) sees it; the exit code decides first, as every runtime does.
    pub fn kind(&self, classify: fn(&Value) -> AnswerKind) -> AnswerKind {
        match self.exit {
            0 => classify(&self.stdout),
            2 if self.stderr.as_deref().is_some_and(|s| !s.trim().is_empty()) => AnswerKind::Exit2,
            2 => AnswerKind::Exit2Silent,
            _ => AnswerKind::ExitOther,
        }
    }
}

/// Shorthand for table rows.
pub(crate) const fn fact(answer: AnswerKind, outcome: Outcome, note: &'static str) -> Fact {
    Fact {
        answer,
        outcome,
        note,
    }
}

/// The table as Markdown, one section per mode: what docs/integrations.md
/// carries (a test keeps the two equal).
#[cfg(test)]
pub(super) fn render_markdown(title: &str, table: &AnswerTable) -> String {
    let mut out = format!("### {title}\n\nObserved with {}.\n\n", table.observed);
    out.push_str("| answer |");
    for m in table.modes {
        out.push_str(&format!(" `{}` |", m.name));
    }
    out.push_str("\n| --- |");
    for _ in table.modes {
        out.push_str(" --- |");
    }
    out.push('\n');
    for answer in AnswerKind::ALL {
        out.push_str(&format!("| {} |", answer.as_str()));
        for m in table.modes {
            let cell = match m.facts.iter().find(|f| f.answer == answer) {
                Some(f) if f.note.is_empty() => f.outcome.as_str().to_string(),
                Some(f) => format!("{} ({})", f.outcome.as_str(), f.note),
                None => "runs (not observed: assumed)".to_string(),
            };
            out.push_str(&format!(" {cell} |"));
        }
        out.push('\n');
    }
    let people: Vec<&str> = table
        .modes
        .iter()
        .filter(|m| m.person_at_prompt)
        .map(|m| m.name)
        .collect();
    out.push_str(&format!(
        "\nA person sits at the runtime's prompt in: {}. A mode the table does not know is \
         read as `{}`.\n",
        if people.is_empty() {
            "no mode".to_string()
        } else {
            people
                .iter()
                .map(|m| format!("`{m}`"))
                .collect::<Vec<_>>()
                .join(", ")
        },
        table.modes[0].name
    ));
    out
}
