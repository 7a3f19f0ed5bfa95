//! The I/O half of the knowledge gate (docs/knowledge.md): finding the SOPs and
//! memories that apply to a call (SOP files cached and re-read when they
//! change, memory searches cached until a memory changes), counting what
//! happened for metrics, and acknowledging what was shown. What to do with
//! the knowledge is decided by `toolgate_core::knowledge`; the gate
//! records it (see `gate.rs`).

mod files;
mod stats;

pub use stats::{KnowledgeSnapshot, KnowledgeStats, LOOKUP_BUCKETS_US};

use crate::{Clock, random_hex};
use files::{Origin, SopFiles};
use serde_json::json;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use toolgate_core::NormalizedCall;
use toolgate_core::knowledge::context::{CallContext, extract};
use toolgate_core::knowledge::enforce::{Found, FoundSop};
use toolgate_core::knowledge::memory::{Memory, MemoryQuery};
use toolgate_core::knowledge::settings::{KnowledgeSettings, memory_terms};
use toolgate_core::knowledge::sop::SOP_SUFFIX;
use toolgate_core::paths::Env;
use toolgate_core::{AuditEvent, AuditKind, RiskClass, ToolCall, redact_text};
use toolgate_store::{Ack, Shown, Store, StoreError};

/// What a lookup found for one call, and what went wrong finding it.
#[derive(Debug, Clone, Default)]
pub struct Lookup {
    /// The knowledge that applies.
    pub found: Found,
    /// Sources that failed (an unreadable SOP, the memory store), each a
    /// sentence naming the source. Credentials never appear here.
    pub errors: Vec<String>,
    /// Microseconds the lookup took.
    pub elapsed_us: u64,
}

/// At most this many SOPs are shown for one call (the first in rule,
/// project, service order): knowledge nobody reads to the end is not read.
pub(crate) const MAX_SOPS_PER_CALL: usize = 8;

/// Memory searches kept before the cache starts over.
const MAX_CACHED_SEARCHES: usize = 1024;

type SearchKey = (Vec<String>, u64, usize);
/// Cached memory searches, valid for one memory revision.
type SearchCache = (u64, HashMap<SearchKey, Arc<Vec<Memory>>>);

/// Finds knowledge for calls under one `[knowledge]` configuration.
/// Cheap to share; every method may be called from many threads.
pub struct KnowledgeBase {
    settings: Arc<KnowledgeSettings>,
    sop_dirs: Vec<PathBuf>,
    files: SopFiles,
    searches: Mutex<SearchCache>,
    stats: Arc<KnowledgeStats>,
    /// Whether any SOP directory or project root exists, and when that
    /// was last checked.
    dirs_present: Mutex<Option<(Instant, bool)>>,
    /// The memory revision, and when it was last read.
    rev: Mutex<Option<(Instant, u64)>>,
    recheck: Duration,
}

/// How often the memory revision and the SOP directories' existence are
/// re-checked: a memory added or an SOP directory created applies within
/// this time.
const RECHECK: Duration = Duration::from_millis(250);

impl KnowledgeBase {
    /// A knowledge base for `settings`; `~` in SOP directories is the home
    /// of `base`. Counts go to `stats` (shared across policy reloads).
    pub fn new(
        settings: Arc<KnowledgeSettings>,
        base: &Env,
        stats: Arc<KnowledgeStats>,
    ) -> KnowledgeBase {
        let sop_dirs = settings
            .sop_dirs
            .iter()
            .map(|d| PathBuf::from(base.resolve(d)))
            .collect();
        KnowledgeBase {
            settings,
            sop_dirs,
            files: SopFiles::new(Duration::from_secs(1)),
            searches: Mutex::new((u64::MAX, HashMap::new())),
            stats,
            dirs_present: Mutex::new(None),
            rev: Mutex::new(None),
            recheck: RECHECK,
        }
    }

    /// The same, re-checking SOP files, directories and the memory
    /// revision on every lookup instead of at most once a second (for tests
    /// that edit files and memories).
    pub fn revalidating_always(mut self) -> KnowledgeBase {
        self.files = SopFiles::new(Duration::ZERO);
        self.recheck = Duration::ZERO;
        self
    }

    /// The settings it applies.
    pub fn settings(&self) -> &Arc<KnowledgeSettings> {
        &self.settings
    }

    /// Its counters.
    pub fn stats(&self) -> &Arc<KnowledgeStats> {
        &self.stats
    }

    /// The SOP directories, resolved.
    pub fn sop_dirs(&self) -> &[PathBuf] {
        &self.sop_dirs
    }

    /// The knowledge for a call (as the engine normalized it, judged in
    /// `env`) at risk class `risk`:
    /// the SOPs its rules, projects and services name, and the memories
    /// its context words find above the threshold for that risk. A source
    /// that fails is reported in [`Lookup::errors`], not fatal.
    pub fn lookup(
        &self,
        store: &dyn Store,
        n: &NormalizedCall,
        env: &Env,
        risk: RiskClass,
    ) -> Lookup {
        let start = Instant::now();
        let rev = self.memories_rev(store);
        let files = !self.settings.rules().is_empty() || self.dirs_present(env);
        if !files && matches!(rev, Ok(0)) {
            // No knowledge anywhere: skip extracting the call's context.
            let out = Lookup {
                elapsed_us: start.elapsed().as_micros() as u64,
                ..Lookup::default()
            };
            self.stats.looked_up(&out);
            return out;
        }
        let local = env.with_cwd(&n.cwd);
        let ctx = extract(n, &local, &self.settings.context);
        let mut out = Lookup::default();
        self.find_sops(&ctx, &mut out);
        match rev {
            Ok(0) => {}
            Ok(rev) => self.find_memories(store, &ctx, risk, rev, &mut out),
            Err(e) => out.errors.push(format!("memory store: {e}")),
        }
        out.elapsed_us = start.elapsed().as_micros() as u64;
        self.stats.looked_up(&out);
        out
    }

    fn find_sops(&self, ctx: &CallContext, out: &mut Lookup) {
        let mut seen: Vec<PathBuf> = Vec::new();
        for wanted in self.settings.sops_for(ctx) {
            let mut paths: Vec<(PathBuf, Origin)> = Vec::new();
            if wanted.named {
                paths.extend(self.sop_dirs.iter().map(|d| {
                    (
                        d.join(format!("{}{SOP_SUFFIX}", wanted.name)),
                        Origin::Library,
                    )
                }));
            }
            if self.settings.project_sops
                && let Some(dir) = &wanted.project_dir
            {
                match self.files.list(std::path::Path::new(dir)) {
                    Ok(list) => paths.extend(list.into_iter().map(|p| (p, Origin::Project))),
                    Err(e) => out.errors.push(e),
                }
            }
            for (p, origin) in paths {
                if seen.contains(&p) {
                    continue;
                }
                if out.found.sops.len() >= MAX_SOPS_PER_CALL {
                    return;
                }
                let (got, cached) = self.files.get(&p, origin);
                self.stats.sop_read(cached);
                match got {
                    Ok(Some(sop)) if !sop.is_empty() => {
                        out.found.sops.push(FoundSop {
                            sop,
                            reason: wanted.reason.clone(),
                        });
                    }
                    Ok(_) => {}
                    Err(e) => out.errors.push(e),
                }
                seen.push(p);
            }
        }
    }

    /// The memory revision, read at most every [`RECHECK`].
    fn memories_rev(&self, store: &dyn Store) -> Result<u64, StoreError> {
        let mut slot = self.rev.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((at, rev)) = *slot
            && at.elapsed() < self.recheck
        {
            return Ok(rev);
        }
        let rev = store.memories_rev()?;
        *slot = Some((Instant::now(), rev));
        Ok(rev)
    }

    /// Whether an SOP directory or (with project SOPs) a project root
    /// exists, checked at most every [`RECHECK`].
    fn dirs_present(&self, env: &Env) -> bool {
        let mut slot = self.dirs_present.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((at, present)) = *slot
            && at.elapsed() < self.recheck
        {
            return present;
        }
        let roots = self
            .settings
            .project_sops
            .then_some(&self.settings.context.project_roots)
            .into_iter()
            .flatten()
            .map(|r| PathBuf::from(env.resolve(r)));
        let present = self
            .sop_dirs
            .iter()
            .cloned()
            .chain(roots)
            .any(|d| d.is_dir());
        *slot = Some((Instant::now(), present));
        present
    }

    fn find_memories(
        &self,
        store: &dyn Store,
        ctx: &CallContext,
        risk: RiskClass,
        rev: u64,
        out: &mut Lookup,
    ) {
        let s = &self.settings;
        if s.max_memories == 0 || s.memory_categories.is_empty() {
            return;
        }
        let terms = memory_terms(ctx);
        if terms.is_empty() {
            return;
        }
        let min = s.thresholds.for_risk(risk);
        let key: SearchKey = (terms, min.to_bits(), s.max_memories);
        {
            let mut cache = self.searches.lock().unwrap_or_else(|e| e.into_inner());
            if cache.0 != rev {
                *cache = (rev, HashMap::new());
            } else if let Some(hit) = cache.1.get(&key) {
                self.stats.search(true);
                out.found.memories = hit.as_ref().clone();
                return;
            }
        }
        self.stats.search(false);
        let q = MemoryQuery {
            terms: key.0.clone(),
            min_confidence: min,
            categories: s.memory_categories.clone(),
            limit: s.max_memories,
        };
        match store.search_memories(&q) {
            Ok(found) => {
                let found = Arc::new(found);
                let mut cache = self.searches.lock().unwrap_or_else(|e| e.into_inner());
                if cache.0 == rev {
                    if cache.1.len() >= MAX_CACHED_SEARCHES {
                        cache.1.clear();
                    }
                    cache.1.insert(key, found.clone());
                }
                out.found.memories = found.as_ref().clone();
            }
            Err(e) => out.errors.push(format!("memory store: {e}")),
        }
    }
}

/// Where an acknowledgement of `call`'s knowledge applies: its session,
/// else its agent, else everything that names neither.
pub fn ack_scope(call: &ToolCall) -> String {
    let nonempty = |s: &Option<String>| {
        s.as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    if let Some(s) = nonempty(&call.session) {
        format!("session:{s}")
    } else if let Some(a) = nonempty(&call.agent) {
        format!("agent:{a}")
    } else {
        "default".to_string()
    }
}

/// Acknowledges the knowledge shown under `id` (from a `TOOLGATE_ACK` line),
/// for its scope, until the cooldown `ttl_ms` runs out; audited. `by` names
/// who acknowledged (an agent, a person). With `scope`, only knowledge
/// shown in that scope (an agent acknowledges for itself). Fails when the
/// id is unknown, too old, or shown in another scope.
pub fn acknowledge_shown(
    store: &dyn Store,
    clock: &dyn Clock,
    id: &str,
    by: &str,
    scope: Option<&str>,
    ttl_ms: i64,
) -> Result<Shown, AckError> {
    let now = clock.now_ms();
    let mut tx = store.begin()?;
    let trace = random_hex()?;
    let shown = acknowledge_in(&mut *tx, id, by, "explicit", scope, now, ttl_ms, &trace)?;
    tx.commit()?;
    Ok(shown)
}

/// Inside `tx`: checks that `id` names knowledge shown (in `scope`, when
/// given) and not yet too old, then records its acknowledgements (`how`:
/// `explicit`, `tool`) and the audit event.
#[allow(clippy::too_many_arguments)]
pub(crate) fn acknowledge_in(
    tx: &mut dyn toolgate_store::Tx,
    id: &str,
    by: &str,
    how: &str,
    scope: Option<&str>,
    now: i64,
    ttl_ms: i64,
    trace: &str,
) -> Result<Shown, AckError> {
    let id = id.trim();
    if id.is_empty() || id.len() > 64 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(AckError::Unknown(id.chars().take(64).collect()));
    }
    let Some(shown) = tx.shown(id)? else {
        return Err(AckError::Unknown(id.to_string()));
    };
    if shown.expires_ms <= now {
        return Err(AckError::Expired(id.to_string()));
    }
    if scope.is_some_and(|s| s != shown.scope) {
        return Err(AckError::OtherScope(id.to_string()));
    }
    put_acks(tx, &shown, by, how, now, ttl_ms, trace)?;
    Ok(shown)
}

/// Records acknowledgements of every key of `shown`, and the audit event.
pub(crate) fn put_acks(
    tx: &mut dyn toolgate_store::Tx,
    shown: &Shown,
    by: &str,
    how: &str,
    now: i64,
    ttl_ms: i64,
    trace: &str,
) -> Result<(), StoreError> {
    let by = redact_text(by).into_owned();
    for key in &shown.keys {
        tx.put_ack(&Ack {
            key: key.clone(),
            scope: shown.scope.clone(),
            by: by.clone(),
            reason: Some(format!("knowledge {} ({how})", shown.id)),
            created_ms: now,
            expires_ms: now.saturating_add(ttl_ms),
        })?;
    }
    tx.append(&AuditEvent {
        ts_ms: now,
        trace: trace.to_string(),
        kind: AuditKind::KnowledgeAcked,
        data: json!({
            "id": shown.id,
            "scope": redact_text(&shown.scope),
            "keys": shown.keys,
            "how": how,
            "by": by,
            "until_ms": now.saturating_add(ttl_ms),
        }),
    })?;
    Ok(())
}

/// Why an explicit acknowledgement failed.
#[derive(Debug, thiserror::Error)]
pub enum AckError {
    /// No knowledge was shown under this id.
    #[error(
        "no knowledge was shown under id {0:?} — copy the id from the TOOLGATE_ACK line of the \
         blocked call"
    )]
    Unknown(String),
    /// It was shown too long ago.
    #[error("knowledge {0} was shown too long ago to acknowledge — retry the call to see it again")]
    Expired(String),
    /// It was shown to another session or agent.
    #[error(
        "knowledge {0} was shown to another session or agent; each acknowledges its own (send \
         the \"session\" or \"agent\" of the held call)"
    )]
    OtherScope(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}
