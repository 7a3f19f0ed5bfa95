//! A minimal stdio MCP server for toolgate's own tests: it logs every line
//! it receives to the file named by its first argument, and its one tool
//! `write_file {path, content}` really writes. `cargo test` builds it.

use serde_json::{Value, json};
use std::io::{BufRead, Write};

fn main() {
    let log_path = std::env::args().nth(1).expect("usage: fake_mcp_server LOG");
    let mut log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .expect("cannot open the log");
    let stdout = std::io::stdout();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        writeln!(log, "{line}").expect("log");
        let Ok(msg) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let Some(id) = msg.get("id").cloned() else {
            continue;
        };
        if msg.get("method").is_none() {
            continue; // an answer to a request of ours (none are sent)
        }
        let result = match msg["method"].as_str().unwrap_or("") {
            "initialize" => json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "fake", "version": "1"},
            }),
            "tools/list" => json!({"tools": [{
                "name": "write_file",
                "inputSchema": {"type": "object", "properties": {
                    "path": {"type": "string"}, "content": {"type": "string"}}},
            }]}),
            "tools/call" => {
                let args = &msg["params"]["arguments"];
                let path = args["path"].as_str().unwrap_or("");
                let content = args["content"].as_str().unwrap_or("");
                match std::fs::write(path, content) {
                    Ok(()) => {
                        json!({"content": [{"type": "text", "text": format!("wrote {path}")}]})
                    }
                    Err(e) => {
                        json!({"content": [{"type": "text", "text": e.to_string()}], "isError": true})
                    }
                }
            }
            other => json!({"echo": other}),
        };
        let mut out = stdout.lock();
        writeln!(
            out,
            "{}",
            json!({"jsonrpc": "2.0", "id": id, "result": result})
        )
        .expect("stdout");
        out.flush().expect("flush");
    }
}
