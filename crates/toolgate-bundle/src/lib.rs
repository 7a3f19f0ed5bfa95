//! What toolgate decides with, loaded one way for every process: the policy,
//! the scope profile it names, the files they protect, and the files whose
//! change means "load again".
//!
//! The CLI (`check`, `hook`, `policy test`, `install`, `doctor`) and the
//! daemon both load through here, so a policy means the same thing to each
//! and the daemon watches exactly the files the policy it runs was read
//! from, whatever profile that policy names now.
//!
//! The only I/O is reading the named files and resolving their paths; the
//! home, the working directory and the sandbox posture are handed in
//! ([`LoadEnv`]).

mod error;
mod guard;
#[cfg(test)]
mod tests;

pub use error::BundleError;
pub use guard::{PolicyGuard, Writable, Writers, agent_writable};

use std::path::{Path, PathBuf};
use toolgate_core::paths::{Env, normalize_abs};
use toolgate_core::{Engine, Policy, Posture, Profile, Protected};

/// Where the built-in default policy's decisions and errors say they come
/// from: the file it ships as.
pub const DEFAULT_POLICY_ORIGIN: &str = "policies/default.toml";

/// The built-in default policy as shipped, comments and `[[test]]` cases
/// included (what `toolgate policy init` writes).
pub const DEFAULT_POLICY_TEXT: &str = include_str!("../../../policies/default.toml");

/// The built-in default policy as a deciding process reads it:
/// [`DEFAULT_POLICY_TEXT`] line for line, with its comments and `[[test]]`
/// cases blanked (`build.rs`), so every line a decision names is the
/// shipped file's.
const DEFAULT_POLICY_FOR_DECIDING: &str = include_str!(concat!(
    env!("OUT_DIR"),
    "/default_policy_for_deciding.toml"
));

/// The surroundings a policy is loaded in.
pub struct LoadEnv<'a> {
    /// The user's home directory (absolute), for `~` in rules and tests.
    pub home: String,
    /// The directory relative paths are resolved against (absolute).
    pub cwd: PathBuf,
    /// Reads the sandbox posture this process runs in; asked only when the
    /// policy names a scope profile (it costs a few file reads).
    pub posture: &'a dyn Fn() -> Posture,
}

impl LoadEnv<'_> {
    /// The environment the policy's `[[test]]` cases are judged in.
    pub fn judging_env(&self) -> Env {
        Env::new(self.home.clone(), self.cwd.to_string_lossy().into_owned())
    }
}

/// A loaded policy, ready to decide with, and what it was read from.
#[derive(Debug)]
pub struct Bundle {
    engine: Engine,
    sources: Vec<PathBuf>,
}

impl Bundle {
    /// A bundle around an engine built elsewhere (an embedding, a test). It
    /// names no files, so a daemon running it watches nothing.
    pub fn unsourced(engine: Engine) -> Bundle {
        Bundle {
            engine,
            sources: Vec::new(),
        }
    }

    /// The engine deciding with this policy (and its profile and posture).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The engine, for a process that keeps only it.
    pub fn into_engine(self) -> Engine {
        self.engine
    }

    /// The policy, with its scope profile attached if it names one.
    pub fn policy(&self) -> &Policy {
        self.engine.policy()
    }

    /// Where the policy came from (its path, or [`DEFAULT_POLICY_ORIGIN`]).
    pub fn origin(&self) -> &str {
        self.engine.policy().origin()
    }

    /// The scope profile the policy names, if any.
    pub fn profile(&self) -> Option<&Profile> {
        self.engine.policy().profile()
    }

    /// The files the agent may not change: the policy and its profile (as
    /// written and as resolved through links), and what the profile lists.
    /// Empty without a profile.
    pub fn protected_files(&self) -> &[String] {
        self.profile().map_or(&[], Profile::protected)
    }

    /// The same bundle, its engine also protecting `more`'s members (the
    /// data directory, the daemon's socket and port: what the process that
    /// loaded it knows).
    pub fn protecting(mut self, more: &Protected) -> Bundle {
        self.engine = self.engine.with_protected(more);
        self
    }

    /// The sandbox posture decisions are made in.
    pub fn posture(&self) -> &Posture {
        self.engine.posture()
    }

    /// The files this bundle was read from, as absolute paths: the policy
    /// file, then the scope profile it names. A change to any of them means
    /// the bundle should be loaded again; the built-in default has none.
    pub fn sources(&self) -> &[PathBuf] {
        &self.sources
    }
}

/// The built-in default policy (no file, no profile). Its `[[test]]` cases
/// are run by the test suite and CI, not by every short-lived process. The
/// tests also make sure it parses; should a build ever ship one that does
/// not, this is an error (which a hook answers with a denial), not a panic.
pub fn builtin() -> Result<Bundle, BundleError> {
    let policy = Policy::from_toml_str(DEFAULT_POLICY_FOR_DECIDING, DEFAULT_POLICY_ORIGIN)?;
    Ok(Bundle {
        engine: Engine::new(policy),
        sources: Vec::new(),
    })
}

/// Loads the policy at `path` (the built-in default when `None`) and runs
/// its `[[test]]` cases; the first failing case is the error.
pub fn load(path: Option<&Path>, env: &LoadEnv) -> Result<Bundle, BundleError> {
    let Some(path) = path else {
        return builtin();
    };
    let bundle = load_untested(path, env)?;
    let failures = bundle.engine.run_policy_tests(&env.judging_env());
    if let Some(first) = failures.first() {
        return Err(BundleError::TestFailed {
            origin: bundle.origin().to_string(),
            case: first.case.clone(),
            expected: first.expected.clone(),
            got: first.got.clone(),
            failing: failures.len(),
        });
    }
    Ok(bundle)
}

/// [`load`], then, unless `guard` is off or allowed, refuses a policy the
/// agent could change (see [`agent_writable`] for the rule). The built-in
/// default has no file and always passes.
pub fn load_guarded(
    path: Option<&Path>,
    env: &LoadEnv,
    guard: PolicyGuard,
) -> Result<Bundle, BundleError> {
    let bundle = load(path, env)?;
    check_guard(bundle.sources(), guard, env)?;
    Ok(bundle)
}

/// [`read_policy`], then the check of [`load_guarded`].
pub fn read_policy_guarded(
    path: &Path,
    env: &LoadEnv,
    guard: PolicyGuard,
) -> Result<Policy, BundleError> {
    let policy = read_policy(path, env)?;
    let mut files = vec![absolute(path, env)];
    if let Some(profile) = policy.profile() {
        files.push(absolute(Path::new(&profile.origin), env));
    }
    check_guard(&files, guard, env)?;
    Ok(policy)
}

/// Refuses `files` (a policy's sources) when `guard` says the agent must
/// not be able to change them and it could.
pub fn check_guard(
    files: &[PathBuf],
    guard: PolicyGuard,
    env: &LoadEnv,
) -> Result<(), BundleError> {
    let PolicyGuard::Refuse(writers) = guard else {
        return Ok(());
    };
    match agent_writable(files, writers, &env.cwd) {
        None => Ok(()),
        Some(w) => Err(BundleError::AgentWritable {
            policy: files.first().cloned().unwrap_or_default(),
            path: w.path,
            why: w.why,
        }),
    }
}

/// Loads the policy at `path` without running its `[[test]]` cases (for a
/// caller that runs and reports them all, like `toolgate policy test`).
pub fn load_untested(path: &Path, env: &LoadEnv) -> Result<Bundle, BundleError> {
    let policy = read_policy(path, env)?;
    let engine = if policy.profile().is_some() {
        Engine::new(policy).with_posture((env.posture)())
    } else {
        Engine::new(policy)
    };
    let mut sources = vec![absolute(path, env)];
    let mut read = spellings(path, env);
    if let Some(profile) = engine.policy().profile() {
        sources.push(absolute(Path::new(&profile.origin), env));
        read.extend(spellings(Path::new(&profile.origin), env));
    }
    // Every file the policy was read from is protected from the agent,
    // whatever its name or place (as written and through links).
    let own = read.iter().fold(Protected::new(), |p, f| p.file(f));
    let engine = engine.with_protected(&own);
    Ok(Bundle { engine, sources })
}

/// Reads and checks the policy at `path` (relative to the load's
/// directory) and the scope profile it names, without building an engine
/// (for a process that needs only the policy's settings, like a hook
/// reading `[hooks]`).
pub fn read_policy(path: &Path, env: &LoadEnv) -> Result<Policy, BundleError> {
    // Read relative to the load's directory; named as given.
    let text = std::fs::read_to_string(env.cwd.join(path)).map_err(|source| BundleError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    if is_blank(&text) {
        return Err(BundleError::Empty {
            path: path.to_path_buf(),
        });
    }
    let policy = Policy::from_toml_str(&text, &path.display().to_string())?;
    if let Some(stage) = &policy.approvals().model {
        toolgate_model::ModelConfig::from_stage(stage).map_err(|message| {
            BundleError::ModelStage {
                path: path.to_path_buf(),
                message,
            }
        })?;
    }
    let Some(relative) = policy.profile_path() else {
        return Ok(policy);
    };
    // A relative profile path is relative to the policy file.
    let file = path.parent().unwrap_or(Path::new(".")).join(relative);
    let bytes = std::fs::read(env.cwd.join(&file)).map_err(|source| BundleError::ProfileRead {
        policy: path.to_path_buf(),
        profile: file.clone(),
        source,
    })?;
    let text = String::from_utf8(bytes).map_err(|_| BundleError::ProfileNotUtf8 {
        profile: file.clone(),
    })?;
    let profile = Profile::parse_markdown(&text, &file.display().to_string())?;
    // The agent may not rewrite what scopes it: the policy and the profile
    // are protected, as written and as resolved through links.
    let protected = [path, file.as_path()]
        .into_iter()
        .flat_map(|p| spellings(p, env))
        .collect::<Vec<_>>();
    Ok(policy.with_profile(profile.protecting(protected)))
}

/// Whether a policy text holds nothing but blanks and comments: loaded, it
/// would mean the built-in default without saying so (a file emptied by
/// mistake, or by an agent, silently replacing a stricter policy).
fn is_blank(text: &str) -> bool {
    text.lines()
        .map(|l| l.trim_start_matches('\u{feff}').trim())
        .all(|l| l.is_empty() || l.starts_with('#'))
}

/// `path` made absolute against the load's working directory, normalized.
fn absolute(path: &Path, env: &LoadEnv) -> PathBuf {
    PathBuf::from(normalize_abs(&env.cwd.join(path).to_string_lossy()))
}

/// The ways an agent's call may name `path`: resolved through links (if it
/// exists) and as written, made absolute.
fn spellings(path: &Path, env: &LoadEnv) -> Vec<String> {
    let mut names = Vec::with_capacity(2);
    if let Ok(real) = std::fs::canonicalize(env.cwd.join(path)) {
        names.push(real.display().to_string());
    }
    names.push(absolute(path, env).display().to_string());
    names
}
