//! The control UI: static files compiled into the binary, served
//! with headers that keep other sites from framing or scripting it (the
//! approve button must not be clickjackable).
//!
//! The scripts are native ES modules (`ui/main.js` imports the rest), so
//! every module a page or another module imports must be in [`ASSETS`];
//! the tests below read the `import` statements and `index.html` to make
//! sure of it.

use axum::Router;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

const HTML: &str = "text/html; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";

/// One file of the UI: where it is served, its contents and its type.
pub struct Asset {
    /// The request path, e.g. `/main.js`.
    pub path: &'static str,
    /// The file as it is in `ui/`.
    pub body: &'static str,
    /// The `Content-Type` it is served with.
    pub content_type: &'static str,
}

macro_rules! asset {
    ($path:literal, $file:literal, $type:expr) => {
        Asset {
            path: $path,
            body: include_str!(concat!("../ui/", $file)),
            content_type: $type,
        }
    };
}

/// Every file of the UI. `ui/index.html` says what each module owns.
pub const ASSETS: &[Asset] = &[
    asset!("/", "index.html", HTML),
    asset!("/app.css", "app.css", CSS),
    asset!("/panels.css", "panels.css", CSS),
    asset!("/main.js", "main.js", JS),
    asset!("/session.js", "session.js", JS),
    asset!("/live.js", "live.js", JS),
    asset!("/api.js", "api.js", JS),
    asset!("/state.js", "state.js", JS),
    asset!("/feed.js", "feed.js", JS),
    asset!("/approvals.js", "approvals.js", JS),
    asset!("/approval-card.js", "approval-card.js", JS),
    asset!("/approval-detail.js", "approval-detail.js", JS),
    asset!("/resolved.js", "resolved.js", JS),
    asset!("/notify.js", "notify.js", JS),
    asset!("/daemon.js", "daemon.js", JS),
    asset!("/audit.js", "audit.js", JS),
    asset!("/tiles.js", "tiles.js", JS),
    asset!("/charts.js", "charts.js", JS),
    asset!("/panels.js", "panels.js", JS),
    asset!("/toasts.js", "toasts.js", JS),
    asset!("/theme.js", "theme.js", JS),
    asset!("/calls.js", "calls.js", JS),
    asset!("/format.js", "format.js", JS),
    asset!("/dom.js", "dom.js", JS),
];

/// Content Security Policy: only our own files and our own WebSocket.
/// Module scripts, their imports and `modulepreload` fall under
/// `script-src` like classic scripts: `'self'` allows them, and nothing
/// inline.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                   connect-src 'self' ws: wss:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

fn asset(body: &'static str, content_type: &'static str) -> Response {
    let mut r = body.into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    r
}

/// `GET` for every file in [`ASSETS`], to merge into the daemon's router.
pub fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    ASSETS.iter().fold(Router::new(), |router, a| {
        router.route(
            a.path,
            get(move || async move { asset(a.body, a.content_type) }),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::http::{Request, StatusCode};
    use http_body_util::BodyExt;
    use std::collections::BTreeSet;
    use tower::Service;

    fn served(path: &str) -> Option<&'static Asset> {
        ASSETS.iter().find(|a| a.path == path)
    }

    /// The quoted string that starts right after `at` in `text`, if one does.
    fn quoted(text: &str, at: usize) -> Option<&str> {
        let rest = text[at..].trim_start();
        let q = rest.chars().next().filter(|c| matches!(c, '"' | '\''))?;
        let rest = &rest[1..];
        Some(&rest[..rest.find(q)?])
    }

    /// The source without its comments (`//` to the end of the line and
    /// `/* … */`), so that JSDoc's `import('./x.js').T` types and prose
    /// are not read as code. Strings are not parsed: a `//` inside one
    /// would only hide the rest of its line from these tests.
    fn code_only(js: &str) -> String {
        let mut out = String::with_capacity(js.len());
        let mut rest = js;
        loop {
            let line = rest.find("//");
            let block = rest.find("/*");
            match (line, block) {
                (Some(l), b) if b.is_none_or(|b| l < b) => {
                    out.push_str(&rest[..l]);
                    rest = rest[l..].find('\n').map_or("", |e| &rest[l + e..]);
                }
                (_, Some(b)) => {
                    out.push_str(&rest[..b]);
                    rest = rest[b + 2..]
                        .find("*/")
                        .map_or("", |e| &rest[b + 2 + e + 2..]);
                    out.push(' ');
                }
                _ => {
                    out.push_str(rest);
                    return out;
                }
            }
        }
    }

    /// The module specifiers a module imports: `import … from '…'`,
    /// `export … from '…'`, `import '…'` and `import('…')`.
    fn imports(js: &str) -> Vec<String> {
        let code = code_only(js);
        let mut out = Vec::new();
        for (i, _) in code.match_indices("from") {
            if let Some(s) = quoted(&code, i + 4).filter(|s| s.starts_with(['.', '/'])) {
                out.push(s.to_string());
            }
        }
        for (i, _) in code.match_indices("import") {
            let after = code[i + 6..].trim_start();
            let after = after.strip_prefix('(').unwrap_or(after);
            if let Some(s) = quoted(&code, code.len() - after.len()) {
                out.push(s.to_string());
            }
        }
        out
    }

    /// The path a module specifier or an `href`/`src` names, from `/`.
    fn resolve(spec: &str) -> String {
        let s = spec.trim_start_matches("./");
        if s.starts_with('/') {
            s.to_string()
        } else {
            format!("/{s}")
        }
    }

    /// Every `src="…"` and `href="…"` in index.html that names one of our
    /// files (not a data: URL), with the tag it is on.
    fn html_refs(html: &str) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for attr in [" src=", " href="] {
            for (i, _) in html.match_indices(attr) {
                let Some(v) = quoted(html, i + attr.len()) else {
                    continue;
                };
                if v.contains(':') || v.starts_with('#') {
                    continue;
                }
                let tag_start = html[..i].rfind('<').unwrap();
                let tag_end = i + html[i..].find('>').unwrap();
                out.push((html[tag_start..=tag_end].to_string(), v.to_string()));
            }
        }
        out
    }

    #[test]
    fn every_module_a_page_or_module_imports_is_served() {
        let mut missing = Vec::new();
        for a in ASSETS.iter().filter(|a| a.content_type == JS) {
            for spec in imports(a.body) {
                if served(&resolve(&spec)).is_none() {
                    missing.push(format!("{} imports {spec}", a.path));
                }
            }
        }
        let index = served("/").unwrap().body;
        for (tag, v) in html_refs(index) {
            if served(&resolve(&v)).is_none() {
                missing.push(format!("index.html refers to {v} ({tag})"));
            }
        }
        assert!(missing.is_empty(), "not served: {missing:#?}");
    }

    #[test]
    fn the_import_reader_finds_every_form() {
        let js = "import { a } from './a.js';\nimport * as b from \"./b.js\";\n\
                  import './c.js';\nexport { d } from './d.js';\nconst e = await import('./e.js');\n\
                  import {\n  f,\n} from './f.js';\n\
                  /** @import { T } from './types.js' */\n// import { g } from './g.js';\n\
                  /* import { h } from './h.js'; */\nconst s = 'from';\n";
        assert_eq!(
            imports(js),
            ["./a.js", "./b.js", "./d.js", "./f.js", "./c.js", "./e.js"]
        );
    }

    #[test]
    fn every_script_in_the_folder_is_served_and_preloaded() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("ui");
        let on_disk: BTreeSet<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".js") || n.ends_with(".css") || n.ends_with(".html"))
            .map(|n| {
                if n == "index.html" {
                    "/".to_string()
                } else {
                    format!("/{n}")
                }
            })
            .collect();
        let listed: BTreeSet<String> = ASSETS.iter().map(|a| a.path.to_string()).collect();
        assert_eq!(on_disk, listed, "ui/ and ASSETS differ");

        let index = served("/").unwrap().body;
        let refs = html_refs(index);
        // One entry point, a module, and no inline script.
        let scripts: Vec<_> = refs
            .iter()
            .filter(|(t, _)| t.starts_with("<script"))
            .collect();
        assert_eq!(scripts.len(), 1, "{scripts:?}");
        assert!(scripts[0].0.contains("type=\"module\""), "{scripts:?}");
        assert_eq!(
            index.matches("<script").count(),
            1,
            "a script without src would be inline (and refused by the CSP)"
        );
        // Every module is preloaded, so none waits for the one importing it.
        let preloaded: BTreeSet<String> = refs
            .iter()
            .filter(|(t, _)| t.contains("rel=\"modulepreload\""))
            .map(|(_, v)| resolve(v))
            .collect();
        let modules: BTreeSet<String> = ASSETS
            .iter()
            .filter(|a| a.content_type == JS)
            .map(|a| a.path.to_string())
            .collect();
        assert_eq!(preloaded, modules);
    }

    #[tokio::test]
    async fn every_file_is_served_with_its_type_and_the_security_headers() {
        let mut router = routes::<()>();
        for a in ASSETS {
            let req = Request::get(a.path).body(Body::empty()).unwrap();
            std::future::poll_fn(|cx| Service::<Request<Body>>::poll_ready(&mut router, cx))
                .await
                .unwrap();
            let res = router.call(req).await.unwrap();
            assert_eq!(res.status(), StatusCode::OK, "{}", a.path);
            let h = res.headers();
            let want = if a.path == "/" {
                HTML
            } else if a.path.ends_with(".js") {
                JS
            } else {
                CSS
            };
            assert_eq!(h[header::CONTENT_TYPE], want, "{}", a.path);
            let csp = h[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
            assert!(csp.contains("script-src 'self';"), "{csp}");
            assert!(!csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"));
            assert!(csp.contains("frame-ancestors 'none'"));
            assert_eq!(h[header::X_FRAME_OPTIONS], "DENY");
            assert_eq!(h[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
            assert_eq!(h[header::REFERRER_POLICY], "no-referrer");
            assert_eq!(h[header::CACHE_CONTROL], "no-cache");
            let body = res.into_body().collect().await.unwrap().to_bytes();
            assert_eq!(body, a.body.as_bytes(), "{}", a.path);
        }
    }

    #[test]
    fn nothing_puts_markup_into_the_page() {
        for a in ASSETS.iter().filter(|a| a.content_type == JS) {
            let code = code_only(a.body);
            for sink in [
                "innerHTML",
                "outerHTML",
                "insertAdjacentHTML",
                "document.write",
            ] {
                assert!(!code.contains(sink), "{} uses {sink}", a.path);
            }
        }
    }
}
