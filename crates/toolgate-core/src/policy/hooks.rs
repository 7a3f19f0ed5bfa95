//! `[hooks]`: how the command hooks (`toolgate hook <runtime>`) answer an
//! escalated call.
//!
//! ```toml
//! [hooks]
//! hold = "2m"          # wait this long for an operator before answering (default: off)
//! host_prompt = false  # let the runtime's own prompt approve, where a person sits at it
//! allow_is_final = false  # toolgate's allow also skips the runtime's own permission checks
//! ```

use super::duration::parse_duration;
use super::error::{ErrorKind, PolicyError};
use super::schema::RawHooks;
use std::time::Duration;

/// The longest `hold`: runtimes kill hooks that run much longer, and an
/// agent turn stalled for longer than this is better told to retry.
pub(crate) const MAX_HOLD: Duration = Duration::from_secs(10 * 60);

/// The `[hooks]` settings. The default holds nothing and never hands a
/// decision to the runtime's own prompt.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookSettings {
    /// How long a hook waits for an escalated call's approval before it
    /// answers; zero answers at once (deny, naming the approval).
    pub hold: Duration,
    /// Whether the runtime's own permission prompt may stand in for a
    /// toolgate approval. It is used only where the runtime says a person
    /// is at that prompt (Claude Code's `default` and `plan` modes); in
    /// every other mode an escalation is denied whatever this says.
    pub host_prompt: bool,
    /// Whether toolgate's allow is the last word. By default (false) an
    /// allowed call is answered "no opinion" where the runtime has such an
    /// answer, so the runtime's own permission rules and prompts stay in
    /// force: installing a guard never makes the agent ask less. True
    /// answers allow, which in Claude Code skips its prompts (its settings'
    /// `permissions.deny` still wins).
    pub allow_is_final: bool,
}

pub(super) fn parse_hooks(
    raw: Option<RawHooks>,
    src: &str,
    origin: &str,
) -> Result<HookSettings, PolicyError> {
    let mut out = HookSettings::default();
    let Some(h) = raw else { return Ok(out) };
    if let Some(d) = &h.hold {
        let at = |msg: String| PolicyError::at(origin, src, d.span().start, ErrorKind::Value, msg);
        let v = parse_duration(d.get_ref()).map_err(|m| at(format!("hold {m}")))?;
        if v > MAX_HOLD {
            return Err(at(format!(
                "hold = {:?} is longer than 10 minutes — runtimes give up on a hook long \
                 before that; use e.g. \"2m\"",
                d.get_ref()
            )));
        }
        out.hold = v;
    }
    if let Some(p) = h.host_prompt {
        out.host_prompt = p;
    }
    if let Some(f) = h.allow_is_final {
        out.allow_is_final = f;
    }
    Ok(out)
}
