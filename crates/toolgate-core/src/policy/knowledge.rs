//! `[knowledge]`: the knowledge gate's settings, validated with located
//! errors (see `crate::knowledge::settings` for what each means).

use super::duration::parse_duration;
use super::error::{ErrorKind, PolicyError, line_col};
use super::schema::RawKnowledge;
use crate::knowledge::memory::Category;
use crate::knowledge::settings::{
    Enforcement, KnowledgeSettings, MAX_RULE_PATTERN, MAX_RULES, SopRule,
};
use crate::knowledge::sop::valid_sop_name;
use std::time::Duration;
use toml::Spanned;

pub(super) fn parse_knowledge(
    raw: Option<RawKnowledge>,
    src: &str,
    origin: &str,
) -> Result<KnowledgeSettings, PolicyError> {
    let mut out = KnowledgeSettings::default();
    let Some(k) = raw else { return Ok(out) };
    let at =
        |offset: usize, msg: String| PolicyError::at(origin, src, offset, ErrorKind::Value, msg);
    if let Some(e) = &k.enforcement {
        out.enforcement = Enforcement::parse(e.get_ref()).ok_or_else(|| {
            at(
                e.span().start,
                format!(
                    "enforcement = {:?} is not a level — use \"strict\", \"advisory\", \
                     \"category\" or \"disabled\"",
                    e.get_ref()
                ),
            )
        })?;
    }
    let categories = |list: &[Spanned<String>], key: &str| {
        list.iter()
            .map(|c| {
                Category::parse(c.get_ref()).ok_or_else(|| {
                    at(
                        c.span().start,
                        format!(
                            "{key} entry {:?} is not a category — use process, technical, \
                             security, gotchas, credentials or general",
                            c.get_ref()
                        ),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()
    };
    if let Some(list) = &k.block_categories {
        out.block_categories = categories(list, "block_categories")?;
    }
    if let Some(list) = &k.memory_categories {
        out.memory_categories = categories(list, "memory_categories")?;
    }
    if let Some(c) = &k.cooldown {
        let d =
            parse_duration(c.get_ref()).map_err(|m| at(c.span().start, format!("cooldown {m}")))?;
        if d > Duration::from_secs(24 * 3600) {
            return Err(at(
                c.span().start,
                format!(
                    "cooldown = {:?} is longer than a day — knowledge acknowledged a day ago \
                     is forgotten knowledge; use minutes",
                    c.get_ref()
                ),
            ));
        }
        if d < Duration::from_secs(1) {
            return Err(at(
                c.span().start,
                format!(
                    "cooldown = {:?} is shorter than a second — a retry could never \
                     acknowledge; use e.g. \"5m\"",
                    c.get_ref()
                ),
            ));
        }
        out.cooldown = d;
    }
    if let Some(v) = k.fail_open {
        out.fail_open = v;
    }
    if let Some(v) = k.show_credentials {
        out.show_credentials = v;
    }
    if let Some(v) = k.project_sops {
        out.project_sops = v;
    }
    let dirs = |list: &[Spanned<String>], key: &str| {
        list.iter()
            .map(|d| {
                let t = d.get_ref().trim();
                if t.starts_with('/') || t == "~" || t.starts_with("~/") {
                    Ok(t.to_string())
                } else {
                    Err(at(
                        d.span().start,
                        format!(
                            "{key} entry {:?} is not an absolute path — write \"/srv/sop\" or \
                             \"~/sop\"",
                            d.get_ref()
                        ),
                    ))
                }
            })
            .collect::<Result<Vec<_>, _>>()
    };
    if let Some(list) = &k.sop_dirs {
        out.sop_dirs = dirs(list, "sop_dirs")?;
    }
    if let Some(list) = &k.project_roots {
        out.context.project_roots = dirs(list, "project_roots")?;
    }
    if let Some(n) = &k.max_memories {
        out.max_memories = usize::try_from(*n.get_ref())
            .ok()
            .filter(|v| *v <= 100)
            .ok_or_else(|| {
                at(
                    n.span().start,
                    format!(
                        "max_memories = {} is out of range — use 0 to 100",
                        n.get_ref()
                    ),
                )
            })?;
    }
    if let Some(t) = &k.thresholds {
        for (v, slot) in [
            (&t.critical, &mut out.thresholds.critical),
            (&t.routine, &mut out.thresholds.routine),
            (&t.experimental, &mut out.thresholds.experimental),
        ] {
            if let Some(v) = v {
                let x = *v.get_ref();
                if !(0.0..=1.0).contains(&x) {
                    return Err(at(
                        v.span().start,
                        format!("threshold {x} is out of range — use a number from 0 to 1"),
                    ));
                }
                *slot = x;
            }
        }
    }
    if let Some(table) = &k.services {
        // Services written here replace the built-in ones of the same name
        // and add the rest.
        for (name, words) in table.get_ref() {
            let list: Option<Vec<String>> = words.as_array().and_then(|a| {
                a.iter()
                    .map(|w| w.as_str().map(|s| s.trim().to_string()))
                    .collect()
            });
            let Some(list) = list.filter(|l| !l.is_empty() && l.iter().all(|w| !w.is_empty()))
            else {
                return Err(at(
                    table.span().start,
                    format!(
                        "services.{name} must be a list of words, e.g. {name} = [\"{name}\", \
                         \"{name}ctl\"]"
                    ),
                ));
            };
            out.context.services.retain(|(n, _)| n != name);
            out.context.services.push((name.clone(), list));
        }
    }
    if k.rule.len() > MAX_RULES {
        return Err(at(
            k.rule[MAX_RULES].span().start,
            format!("more than {MAX_RULES} [[knowledge.rule]] entries — merge patterns"),
        ));
    }
    let mut rules = Vec::with_capacity(k.rule.len());
    for r in &k.rule {
        let start = r.span().start;
        let raw = r.get_ref();
        let Some(pattern) = &raw.pattern else {
            return Err(at(
                start,
                "this [[knowledge.rule]] has no `pattern` — add a regex, e.g. \
                 pattern = \"docker|compose\""
                    .to_string(),
            ));
        };
        let Some(sop) = &raw.sop else {
            return Err(at(
                start,
                "this [[knowledge.rule]] has no `sop` — name the SOP, e.g. sop = \
                 \"docker-deploy\" for docker-deploy.ai.sop"
                    .to_string(),
            ));
        };
        if pattern.get_ref().trim().is_empty() || pattern.get_ref().len() > MAX_RULE_PATTERN {
            return Err(at(
                pattern.span().start,
                format!("pattern must be 1 to {MAX_RULE_PATTERN} characters"),
            ));
        }
        let name = sop.get_ref().trim().trim_end_matches(".ai.sop");
        if !valid_sop_name(name) {
            return Err(at(
                sop.span().start,
                format!(
                    "sop = {:?} is not an SOP name — use the file name without .ai.sop \
                     (letters, digits, - _ .), e.g. \"fleet\" for fleet.ai.sop",
                    sop.get_ref()
                ),
            ));
        }
        rules.push(SopRule {
            pattern: pattern.get_ref().clone(),
            sop: name.to_string(),
            tools: raw.tools.iter().map(|t| t.trim().to_string()).collect(),
            location: line_col(src, pattern.span().start),
        });
    }
    let starts: Vec<usize> = k
        .rule
        .iter()
        .map(|r| r.get_ref().pattern.as_ref().map_or(0, |p| p.span().start))
        .collect();
    out.set_rules(rules).map_err(|(i, e)| match starts.get(i) {
        Some(start) => at(
            *start,
            format!(
                "pattern is not a valid regex: {}",
                e.lines().last().unwrap_or(&e)
            ),
        ),
        None => at(
            starts.first().copied().unwrap_or(0),
            format!(
                "the [[knowledge.rule]] patterns together are too big to compile ({}) — use \
                 fewer or simpler patterns",
                e.lines().last().unwrap_or(&e)
            ),
        ),
    })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::knowledge::memory::Category;
    use crate::knowledge::settings::Enforcement;
    use crate::policy::Policy;

    #[test]
    fn a_full_section_parses() {
        let p = Policy::from_toml_str(
            r#"
[knowledge]
enforcement = "category"
block_categories = ["security", "gotchas"]
cooldown = "2m"
fail_open = false
show_credentials = true
sop_dirs = ["/srv/sop", "~/sop"]
project_roots = ["/work"]
max_memories = 3
memory_categories = ["process"]
thresholds = { critical = 0.9, routine = 0.6, experimental = 0.1 }
services = { comfyui = ["comfyui", "flux"], docker = ["docker"] }

[[knowledge.rule]]
pattern = 'ssh|\.163'
sop = "fleet.ai.sop"
tools = ["exec"]
"#,
            "k.toml",
        )
        .unwrap();
        let k = p.knowledge();
        assert_eq!(k.enforcement, Enforcement::Category);
        assert_eq!(
            k.block_categories,
            vec![Category::Security, Category::Gotchas]
        );
        assert_eq!(k.cooldown.as_secs(), 120);
        assert!(!k.fail_open && k.show_credentials);
        assert_eq!(k.sop_dirs, vec!["/srv/sop", "~/sop"]);
        assert_eq!(k.thresholds.critical, 0.9);
        assert_eq!(k.rules()[0].sop, "fleet");
        assert_eq!(k.rules()[0].location, (16, 11));
        assert!(k.context.services.iter().any(|(n, _)| n == "comfyui"));
        assert_eq!(
            k.context
                .services
                .iter()
                .filter(|(n, _)| n == "docker")
                .count(),
            1
        );
        let d = Policy::default();
        assert_eq!(d.knowledge().enforcement, Enforcement::Strict);
        assert!(d.knowledge().fail_open);
    }

    #[test]
    fn mistakes_are_located_with_advice() {
        let err = |body: &str| {
            Policy::from_toml_str(&format!("[knowledge]\n{body}\n"), "k.toml")
                .unwrap_err()
                .to_string()
        };
        assert!(err("enforcement = \"loud\"").contains("k.toml:2:15"));
        assert!(err("cooldown = \"2d\"").contains("longer than a day"));
        assert!(err("cooldown = \"50ms\"").contains("shorter than a second"));
        assert!(err("block_categories = [\"misc\"]").contains("not a category"));
        assert!(err("sop_dirs = [\"sop\"]").contains("not an absolute path"));
        assert!(err("thresholds = { critical = 1.5 }").contains("out of range"));
        assert!(err("colour = 1").contains("unknown field"));
        assert!(err("[[knowledge.rule]]\npattern = \"(x\"\nsop = \"a\"").contains("k.toml:3:11"));
        assert!(err("[[knowledge.rule]]\npattern = \"x\"\nsop = \"../a\"").contains("SOP name"));
        assert!(err("[[knowledge.rule]]\nsop = \"a\"").contains("no `pattern`"));
        assert!(err("services = { x = \"y\" }").contains("list of words"));
    }
}
