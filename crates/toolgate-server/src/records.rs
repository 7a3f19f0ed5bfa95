//! Reading the audit log back as what the dashboard shows: decision
//! records and approval events. The audit log is the single source, so what
//! other processes decide or vote shows up as well.

use serde_json::{Value, json};
use toolgate_store::{DecisionFields, Store, StoreError};

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
        "outcome": outcome_of(data),
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

/// What a decision came to as a person reads it (`allow`, `hold`,
/// `escalate`, `block`): a knowledge hold is a `block` on the wire but not
/// a refusal. `null` for a decision this version does not know.
fn outcome_of(data: &Value) -> Value {
    crate::stats::Outcome::of_data(data).map_or(Value::Null, |o| {
        serde_json::to_value(o).unwrap_or(Value::Null)
    })
}

/// The store's query from `/v1/decisions`' parameters: an empty parameter
/// (`?agent=`) filters nothing.
fn given(mut filter: DecisionFields) -> DecisionFields {
    let DecisionFields {
        decision,
        tool,
        risk,
        layer,
        agent,
        session,
    } = &mut filter;
    for value in [decision, tool, risk, layer, agent, session] {
        value.take_if(|v| v.is_empty());
    }
    filter
}

/// One page of decisions, newest first, and the cursor for the next.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    /// The records.
    pub decisions: Vec<Value>,
    /// Pass as `before` for older records; `None` at the start of the log.
    pub next_before: Option<u64>,
}

/// Reads decisions older than `before` matching `filter`, at most `limit`,
/// through the store's decisions index (no scan of the audit log).
pub fn decisions(
    store: &dyn Store,
    filter: &DecisionFields,
    before: u64,
    limit: usize,
) -> Result<Page, StoreError> {
    let rows = store.decisions(&given(filter.clone()), before, limit)?;
    let next_before = if rows.len() >= limit {
        rows.last().map(|r| r.seq).filter(|&s| s > 1)
    } else {
        None
    };
    let decisions = rows
        .iter()
        .filter_map(|row| serde_json::from_str::<Value>(&row.entry).ok())
        .filter_map(|entry| decision_record(&entry))
        .collect();
    Ok(Page {
        decisions,
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
        // The store's index reads the same fields the record shows, so a
        // filter on any of them finds what the record says.
        let keys = DecisionFields::of_text(&entry(7, "block", "exec").to_string()).unwrap();
        for (column, value) in DecisionFields::COLUMNS.iter().zip(keys.values()) {
            assert_eq!(r[*column].as_str(), value, "{column}");
        }
        assert!(decision_record(&json!({"kind": "verdict", "data": {}})).is_none());
        // An empty parameter filters nothing.
        let f = DecisionFields {
            decision: Some("block".into()),
            agent: Some(String::new()),
            ..Default::default()
        };
        assert_eq!(
            given(f),
            DecisionFields {
                decision: Some("block".into()),
                ..Default::default()
            }
        );
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
