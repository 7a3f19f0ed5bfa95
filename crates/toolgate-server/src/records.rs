//! Reading the audit log back as what the dashboard shows: decision
//! records and approval events. The audit log is the single source, so what
//! other processes decide or vote shows up as well.

use serde::Deserialize;
use serde_json::{Value, json};
use toolgate_store::{AuditRow, Store, StoreError};

/// Most audit rows one `/v1/decisions` page reads before handing back a
/// cursor, so a rare filter over a long log cannot stall the daemon.
pub const MAX_SCAN: usize = 50_000;

/// A decision record (docs/http-api.md) from a `decision` audit entry;
/// `None` for other kinds or unreadable entries.
pub fn decision_record(entry: &Value) -> Option<Value> {
    if entry.get("kind")?.as_str()? != "decision" {
        return None;
    }
    let data = entry.get("data")?;
    let call = data.get("call").cloned().unwrap_or(Value::Null);
    let field = |v: &Value, k: &str| v.get(k).cloned().unwrap_or(Value::Null);
    Some(json!({
        "seq": field(entry, "seq"),
        "ts": field(entry, "ts"),
        "trace": field(entry, "trace"),
        "tool": field(&call, "tool"),
        "decision": field(data, "decision"),
        "risk": field(data, "risk"),
        "score": field(data, "score"),
        "layer": field(data, "layer"),
        "reason": field(data, "reason"),
        "approval": field(data, "approval"),
        "agent": field(&call, "agent"),
        "session": field(&call, "session"),
        "summary": field(data, "summary"),
        "call": call,
    }))
}

/// Filters for `/v1/decisions`; every given one must match exactly.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct DecisionFilter {
    /// `allow`, `block` or `escalate`.
    pub decision: Option<String>,
    /// The tool name as the agent sent it.
    pub tool: Option<String>,
    /// `R0` … `R4`.
    pub risk: Option<String>,
    /// The deciding layer.
    pub layer: Option<String>,
    /// The agent.
    pub agent: Option<String>,
    /// The session.
    pub session: Option<String>,
}

impl DecisionFilter {
    fn matches(&self, record: &Value) -> bool {
        let checks = [
            ("decision", &self.decision),
            ("tool", &self.tool),
            ("risk", &self.risk),
            ("layer", &self.layer),
            ("agent", &self.agent),
            ("session", &self.session),
        ];
        checks.iter().all(|(k, want)| match want {
            None => true,
            Some(w) if w.is_empty() => true,
            Some(w) => record.get(*k).and_then(Value::as_str) == Some(w.as_str()),
        })
    }
}

/// One page of decisions, newest first, and the cursor for the next.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    /// The records.
    pub decisions: Vec<Value>,
    /// Pass as `before` for older records; `None` at the start of the log.
    pub next_before: Option<u64>,
}

/// Reads decisions older than `before` matching `filter`, at most `limit`.
pub fn decisions(
    store: &dyn Store,
    filter: &DecisionFilter,
    before: u64,
    limit: usize,
) -> Result<Page, StoreError> {
    let mut out = Vec::new();
    let mut scanned = 0usize;
    let mut last_seq = None;
    store.scan_audit_back(before, &mut |row: AuditRow| {
        scanned += 1;
        last_seq = Some(row.seq);
        if let Ok(entry) = serde_json::from_str::<Value>(&row.entry)
            && let Some(r) = decision_record(&entry)
            && filter.matches(&r)
        {
            out.push(r);
        }
        out.len() < limit && scanned < MAX_SCAN
    })?;
    let next_before = last_seq.filter(|&s| s > 1 && (out.len() >= limit || scanned >= MAX_SCAN));
    Ok(Page {
        decisions: out,
        next_before,
    })
}

/// The live event for an audit entry, if it is one the dashboard shows:
/// `(json, approval id and event)`.
pub fn live_event(entry: &Value) -> Option<(Value, Option<(String, String)>)> {
    let kind = entry.get("kind")?.as_str()?;
    if kind == "decision" {
        let mut r = decision_record(entry)?;
        r["type"] = json!("decision");
        return Some((r, None));
    }
    let data = entry.get("data")?;
    if let Some(event) = kind.strip_prefix("approval.") {
        let id = data.get("approval")?.as_str()?.to_string();
        let v = json!({
            "type": "approval",
            "event": event,
            "id": id,
            "state": data.get("state").cloned().unwrap_or(Value::Null),
            "seq": entry.get("seq").cloned().unwrap_or(Value::Null),
            "approval": Value::Null,
        });
        return Some((v, Some((id, event.to_string()))));
    }
    if kind == "policy.loaded" {
        let event = data
            .get("result")
            .and_then(Value::as_str)
            .unwrap_or("reloaded");
        let v = json!({
            "type": "policy",
            "event": event,
            "origin": data.get("origin").cloned().unwrap_or(Value::Null),
            "error": data.get("error").cloned().unwrap_or(Value::Null),
        });
        return Some((v, None));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(seq: u64, decision: &str, tool: &str) -> Value {
        json!({"seq": seq, "ts": "2026-11-22T00:00:00.000Z", "trace": "t", "kind": "decision",
               "data": {"call": {"tool": tool, "params": {}, "agent": "a"}, "decision": decision,
                        "risk": "R1", "score": 3, "layer": "exec", "reason": "r", "approval": null}})
    }

    #[test]
    fn records_and_filters() {
        let r = decision_record(&entry(7, "block", "exec")).unwrap();
        assert_eq!(r["seq"], 7);
        assert_eq!(r["tool"], "exec");
        assert_eq!(r["agent"], "a");
        let f = DecisionFilter {
            decision: Some("block".into()),
            ..Default::default()
        };
        assert!(f.matches(&r));
        let f = DecisionFilter {
            tool: Some("Bash".into()),
            ..Default::default()
        };
        assert!(!f.matches(&r));
        assert!(decision_record(&json!({"kind": "verdict", "data": {}})).is_none());
    }

    #[test]
    fn approval_and_policy_events() {
        let e = json!({"seq": 3, "kind": "approval.approved", "data": {"approval": "ab", "state": "approved"}});
        let (v, a) = live_event(&e).unwrap();
        assert_eq!(v["type"], "approval");
        assert_eq!(a, Some(("ab".to_string(), "approved".to_string())));
        let e = json!({"seq": 4, "kind": "policy.loaded", "data": {"result": "rejected", "origin": "p.toml", "error": "bad"}});
        let (v, _) = live_event(&e).unwrap();
        assert_eq!(v["event"], "rejected");
        assert!(live_event(&json!({"kind": "verdict", "data": {}})).is_none());
    }
}
