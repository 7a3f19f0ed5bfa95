//! `[organization]`: who is inside, so that a message to a colleague and a
//! message to the world are judged differently (docs/tool-effects.md).
//!
//! ```toml
//! [organization]
//! domains = ["acme.com"]            # email and web domains that are ours
//! code_orgs = ["acme"]              # GitHub/GitLab owners that are ours
//! private_channels = ["#dev-team"]  # chat channels that are not public
//! chat_workspaces = ["acme"]        # chat workspaces whose members are colleagues
//! cloud_accounts = ["123456789012"] # cloud accounts and projects that are ours
//! production = ["prd-eu"]           # more names that mark production
//! ```
//!
//! Without the section nobody is inside: every recipient counts as outside.

use super::error::{ErrorKind, PolicyError};
use super::schema::RawOrganization;
use toml::Spanned;

/// The `[organization]` settings: every entry lowercased and trimmed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Organization {
    /// Email and web domains that are the organisation's (`acme.com`); a
    /// subdomain of one is inside too (`eu.acme.com`), a lookalike is not.
    pub domains: Vec<String>,
    /// Code-hosting owners (GitHub organisations and users, GitLab groups).
    pub code_orgs: Vec<String>,
    /// Chat channels that are not public, by name (`#dev-team`, the `#`
    /// optional) or id (`C0DEVTEAM`).
    pub private_channels: Vec<String>,
    /// Chat workspaces whose members (named by user id) are colleagues.
    pub chat_workspaces: Vec<String>,
    /// Cloud accounts, projects and subscriptions that are the organisation's.
    pub cloud_accounts: Vec<String>,
    /// Names that mark production, besides `prod`, `production`, `prd` and `live`.
    pub production: Vec<String>,
    /// Whether the policy has the section at all.
    pub configured: bool,
}

impl Organization {
    /// Whether an email address (`Bob <bob@acme.com>` too) is inside: the
    /// domain after its last `@` is one of ours or a subdomain of one.
    pub fn email_inside(&self, address: &str) -> bool {
        let a = address.trim();
        let a = match (a.rfind('<'), a.rfind('>')) {
            (Some(i), Some(j)) if i < j => &a[i + 1..j],
            _ => a,
        };
        match a.rsplit_once('@') {
            Some((local, domain)) if !local.is_empty() => self.domain_inside(domain),
            _ => false,
        }
    }

    /// Whether a host or domain is one of ours or under one
    /// (`eu.acme.com`); `acme.com.evil.io` and `acme.co` are not.
    pub fn domain_inside(&self, host: &str) -> bool {
        let h = host.trim().trim_end_matches('.').to_ascii_lowercase();
        !h.is_empty()
            && self
                .domains
                .iter()
                .any(|d| h == *d || h.strip_suffix(d.as_str()).is_some_and(|p| p.ends_with('.')))
    }

    /// Whether a code-hosting owner (`acme`, or the owner part of
    /// `acme/api` or `acme/group/sub`) is ours.
    pub fn owner_inside(&self, owner: &str) -> bool {
        let o = owner.trim().trim_start_matches('@');
        let o = o.split('/').next().unwrap_or(o).to_ascii_lowercase();
        !o.is_empty() && self.code_orgs.contains(&o)
    }

    /// Whether a chat channel (`#dev-team`, `dev-team`, an id) is one of the
    /// private ones.
    pub fn channel_private(&self, channel: &str) -> bool {
        let c = channel.trim().trim_start_matches('#').to_ascii_lowercase();
        !c.is_empty() && self.private_channels.contains(&c)
    }

    /// Whether a cloud account, project or subscription id is ours.
    pub fn cloud_account_inside(&self, account: &str) -> bool {
        let a = account.trim().to_ascii_lowercase();
        !a.is_empty() && self.cloud_accounts.contains(&a)
    }
}

pub(super) fn parse_organization(
    raw: Option<RawOrganization>,
    src: &str,
    origin: &str,
) -> Result<Organization, PolicyError> {
    let Some(raw) = raw else {
        return Ok(Organization::default());
    };
    let list = |field: &str,
                values: Option<Vec<Spanned<String>>>,
                clean: fn(&str) -> Result<String, &'static str>|
     -> Result<Vec<String>, PolicyError> {
        let mut out = Vec::new();
        for v in values.unwrap_or_default() {
            match clean(v.get_ref()) {
                Ok(c) if !out.contains(&c) => out.push(c),
                Ok(_) => {}
                Err(why) => {
                    return Err(PolicyError::at(
                        origin,
                        src,
                        v.span().start,
                        ErrorKind::Value,
                        format!("[organization] {field} entry {:?} {why}", v.get_ref()),
                    ));
                }
            }
        }
        Ok(out)
    };
    Ok(Organization {
        domains: list("domains", raw.domains, clean_domain)?,
        code_orgs: list("code_orgs", raw.code_orgs, clean_name)?,
        private_channels: list("private_channels", raw.private_channels, |s| {
            clean_name(s.trim().trim_start_matches('#'))
        })?,
        chat_workspaces: list("chat_workspaces", raw.chat_workspaces, clean_name)?,
        cloud_accounts: list("cloud_accounts", raw.cloud_accounts, clean_name)?,
        production: list("production", raw.production, clean_name)?,
        configured: true,
    })
}

fn clean_name(s: &str) -> Result<String, &'static str> {
    let t = s.trim().trim_start_matches('@');
    if t.is_empty() {
        Err("is empty")
    } else if t.chars().any(|c| c.is_whitespace() || c.is_control()) {
        Err("has a space or a control character — write one name per entry")
    } else if t.contains('*') {
        Err("has a wildcard — list each name (a domain covers its subdomains already)")
    } else {
        Ok(t.to_ascii_lowercase())
    }
}

fn clean_domain(s: &str) -> Result<String, &'static str> {
    let t = s.trim().trim_start_matches('@').trim_start_matches("*.");
    let t = t.trim_start_matches('.').trim_end_matches('.');
    if t.contains("://") || t.contains('/') {
        return Err("is a URL — write the domain alone (`acme.com`)");
    }
    let t = clean_name(t)?;
    if !t.contains('.') {
        return Err(
            "is not a domain (`acme.com`): a name without a dot would match hosts of any organisation",
        );
    }
    if t.contains('@') {
        return Err("is an address — write its domain (`acme.com`)");
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn org() -> Organization {
        Organization {
            domains: vec!["acme.com".into()],
            code_orgs: vec!["acme".into()],
            private_channels: vec!["dev-team".into(), "c0devteam".into()],
            configured: true,
            ..Organization::default()
        }
    }

    #[test]
    fn lookalikes_are_outside() {
        let o = org();
        assert!(o.email_inside("bob@acme.com"));
        assert!(o.email_inside("Bob <bob@EU.acme.com>"));
        assert!(!o.email_inside("bob@acme.co"));
        assert!(!o.email_inside("bob@acme-corp.com"));
        assert!(!o.email_inside("bob@acme.com.evil.io"));
        assert!(!o.email_inside("acme.com@evil.io"));
        assert!(!o.email_inside("bob@notacme.com"));
        assert!(!o.email_inside("@acme.com"));
    }

    #[test]
    fn owners_and_channels() {
        let o = org();
        assert!(o.owner_inside("acme/api"));
        assert!(o.owner_inside("ACME"));
        assert!(!o.owner_inside("acme-evil/api"));
        assert!(o.channel_private("#dev-team"));
        assert!(o.channel_private("C0DEVTEAM"));
        assert!(!o.channel_private("#general"));
    }

    #[test]
    fn nobody_is_inside_without_the_section() {
        let o = Organization::default();
        assert!(!o.email_inside("bob@acme.com"));
        assert!(!o.owner_inside("acme"));
        assert!(!o.channel_private("#dev-team"));
    }
}
