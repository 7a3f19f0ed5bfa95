//! `GET /ws`: live events for operators. Browsers cannot put headers on a
//! WebSocket, so a browser proves itself with its session cookie (and an
//! `Origin` naming this daemon, against cross-site WebSocket hijacking), or
//! sends the token as the first message.

use crate::app::{App, CookieProof};
use crate::auth::Role;
use crate::error::ApiError;
use axum::extract::State;
use axum::extract::ws::{
    CloseFrame, Message, WebSocket, WebSocketUpgrade, rejection::WebSocketUpgradeRejection,
};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;

/// How long a client has to send its token.
const AUTH_WITHIN: Duration = Duration::from_secs(10);
/// Close code for a missing or wrong token (4000–4999 are the
/// application's own).
const CLOSE_UNAUTHORIZED: u16 = 4401;

/// `GET /ws` (operator).
pub async fn ws(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    let upgrade = match upgrade {
        Ok(u) => u,
        Err(e) => {
            return ApiError::bad_request(format!(
                "GET /ws is a WebSocket endpoint ({}): connect with a WebSocket client",
                e.body_text()
            ))
            .into_response();
        }
    };
    // A header token or session cookie that is present but wrong is
    // refused before upgrading.
    let cookie = crate::session::cookie(&headers, &app.cookie);
    let preauthorized = match (crate::auth::bearer(&headers), cookie) {
        (Some(_), _) => match app.authenticate(&headers, None, Role::Operator).await {
            Ok(_) => true,
            Err(e) => return e.into_response(),
        },
        (None, Some(secret)) => match app
            .from_session(&headers, secret, CookieProof::Origin)
            .await
        {
            Ok(_) => true,
            // A cookie left from a session that ended: the token may still
            // come as the first message.
            Err(e) if e.code == "unauthorized" => false,
            Err(e) => return e.into_response(),
        },
        (None, None) => false,
    };
    upgrade
        .max_message_size(64 * 1024)
        .on_upgrade(move |socket| session(app, socket, preauthorized))
}

async fn session(app: Arc<App>, mut socket: WebSocket, preauthorized: bool) {
    if !preauthorized && !first_message_authorizes(&app, &mut socket).await {
        let _ = socket
            .send(Message::Close(Some(CloseFrame {
                code: CLOSE_UNAUTHORIZED,
                reason: "unauthorized: send {\"token\": \"<operator token>\"} first".into(),
            })))
            .await;
        return;
    }
    let mut events = app.events.subscribe();
    let mut stopping = app.shutdown.subscribe();
    let hello = json!({"type": "hello", "version": env!("CARGO_PKG_VERSION")});
    if socket
        .send(Message::Text(hello.to_string().into()))
        .await
        .is_err()
    {
        return;
    }
    loop {
        tokio::select! {
            ev = events.recv() => {
                let text = match ev {
                    Ok(e) => e.text.to_string(),
                    // A slow client missed some: tell it, so it can re-fetch.
                    Err(RecvError::Lagged(n)) => json!({"type": "lagged", "missed": n}).to_string(),
                    Err(RecvError::Closed) => break,
                };
                if socket.send(Message::Text(text.into())).await.is_err() {
                    break;
                }
            }
            msg = socket.recv() => match msg {
                None | Some(Err(_)) | Some(Ok(Message::Close(_))) => break,
                Some(Ok(_)) => {}
            },
            _ = async { let _ = stopping.wait_for(|s| *s).await; } => {
                let _ = socket
                    .send(Message::Close(Some(CloseFrame {
                        code: 1001,
                        reason: "toolgate is shutting down".into(),
                    })))
                    .await;
                break;
            }
        }
    }
}

async fn first_message_authorizes(app: &App, socket: &mut WebSocket) -> bool {
    let Ok(Some(Ok(Message::Text(text)))) = tokio::time::timeout(AUTH_WITHIN, socket.recv()).await
    else {
        return false;
    };
    let token = serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|v| v.get("token").and_then(Value::as_str).map(str::to_string));
    let Some(token) = token else {
        return false;
    };
    app.authenticate(&HeaderMap::new(), Some(&token), Role::Operator)
        .await
        .is_ok()
}
