//! The service definitions `toolgate setup separated` writes: a systemd
//! unit (Linux) and a launchd property list (macOS). Both run the daemon as
//! its own user with the policy, data directory, socket and address pinned
//! on its command line.

use super::Layout;

/// The daemon's command line, as one string for a unit file or a shell.
pub(crate) fn exec_line(l: &Layout) -> String {
    exec_words(l).join(" ")
}

/// The daemon's command line, word by word (no word needs quoting: every
/// path is checked for plain characters when the layout is made).
pub(crate) fn exec_words(l: &Layout) -> Vec<String> {
    vec![
        l.binary.display().to_string(),
        "--data-dir".into(),
        l.data_dir.display().to_string(),
        "serve".into(),
        "--policy".into(),
        l.policy.display().to_string(),
        "--listen".into(),
        l.listen.clone(),
        "--socket".into(),
        l.socket.display().to_string(),
    ]
}

/// The systemd unit. Why each hardening line is there is in
/// docs/deploy.md ("The systemd unit").
pub(crate) fn systemd_unit(l: &Layout) -> String {
    let runtime_dir = l
        .socket
        .parent()
        .and_then(|p| p.strip_prefix("/run").ok())
        .map(|p| p.display().to_string())
        .filter(|p| !p.is_empty());
    let mut s = String::new();
    s.push_str("# Written by `toolgate setup separated`; run it again rather than editing.\n");
    s.push_str("[Unit]\n");
    s.push_str("Description=toolgate daemon: the gate between AI agents and their tools\n");
    s.push_str("After=network.target\n\n");
    s.push_str("[Service]\n");
    s.push_str("Type=simple\n");
    s.push_str(&format!(
        "User={}\nGroup={}\n",
        l.daemon_user, l.daemon_user
    ));
    s.push_str(&format!("ExecStart={}\n", exec_line(l)));
    s.push_str("ExecReload=/bin/kill -HUP $MAINPID\n");
    s.push_str("Restart=on-failure\nRestartSec=1s\n");
    s.push_str("Environment=TOOLGATE_LOG=info\n");
    if let Some(dir) = runtime_dir {
        // The socket's directory: made by systemd for the daemon's user,
        // readable by all (agents connect), writable by the daemon alone.
        s.push_str(&format!(
            "RuntimeDirectory={dir}\nRuntimeDirectoryMode=0755\n"
        ));
    }
    s.push_str("UMask=0077\n");
    s.push_str(&format!("ReadWritePaths={}\n", l.data_dir.display()));
    for line in [
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
        "ProtectHome=read-only",
        "PrivateTmp=yes",
        "PrivateDevices=yes",
        "ProtectKernelTunables=yes",
        "ProtectKernelModules=yes",
        "ProtectKernelLogs=yes",
        "ProtectControlGroups=yes",
        "ProtectClock=yes",
        "ProtectHostname=yes",
        "RestrictSUIDSGID=yes",
        "RestrictRealtime=yes",
        "RestrictNamespaces=yes",
        "LockPersonality=yes",
        "MemoryDenyWriteExecute=yes",
        "RemoveIPC=yes",
        "CapabilityBoundingSet=",
        "AmbientCapabilities=",
        "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6",
        "SystemCallArchitectures=native",
        "SystemCallFilter=@system-service",
    ] {
        s.push_str(line);
        s.push('\n');
    }
    s.push_str("\n[Install]\nWantedBy=multi-user.target\n");
    s
}

/// The launchd property list (`/Library/LaunchDaemons/dev.toolgate.daemon.plist`).
pub(crate) fn launchd_plist(l: &Layout) -> String {
    let mut args = String::new();
    for w in exec_words(l) {
        args.push_str(&format!("        <string>{}</string>\n", xml(&w)));
    }
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- Written by `toolgate setup separated --launchd`; run it again rather than editing. -->
<plist version="1.0">
<dict>
    <key>Label</key>
    <string>{label}</string>
    <key>ProgramArguments</key>
    <array>
{args}    </array>
    <key>UserName</key>
    <string>{user}</string>
    <key>GroupName</key>
    <string>{user}</string>
    <key>Umask</key>
    <integer>63</integer>
    <key>RunAtLoad</key>
    <true/>
    <key>KeepAlive</key>
    <true/>
    <key>EnvironmentVariables</key>
    <dict>
        <key>TOOLGATE_LOG</key>
        <string>info</string>
    </dict>
    <key>StandardErrorPath</key>
    <string>{log}</string>
</dict>
</plist>
"#,
        label = launchd_label(&l.service),
        user = xml(&l.daemon_user),
        log = xml(&l.log.display().to_string()),
    )
}

/// The launchd job's label (and the plist's file name without `.plist`):
/// `dev.toolgate.daemon` for the service `toolgate`.
pub(crate) fn launchd_label(service: &str) -> String {
    if service == "toolgate" {
        "dev.toolgate.daemon".to_string()
    } else {
        format!("dev.toolgate.{service}")
    }
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn layout() -> Layout {
        Layout {
            root: PathBuf::from("/"),
            binary: "/usr/local/bin/toolgate".into(),
            etc: "/etc/toolgate".into(),
            policy: "/etc/toolgate/policy.toml".into(),
            public_key: "/etc/toolgate/daemon.pub".into(),
            record: "/etc/toolgate/setup.json".into(),
            service: "toolgate".into(),
            data_dir: "/var/lib/toolgate".into(),
            socket: "/run/toolgate/toolgate.sock".into(),
            log: "/var/log/toolgate/toolgate.log".into(),
            listen: "127.0.0.1:7878".into(),
            daemon_user: "toolgate".into(),
            unit: "/etc/systemd/system/toolgate.service".into(),
            plist: "/Library/LaunchDaemons/dev.toolgate.daemon.plist".into(),
        }
    }

    #[test]
    fn the_unit_runs_the_daemon_as_its_user_with_everything_pinned() {
        let u = systemd_unit(&layout());
        for want in [
            "User=toolgate\n",
            "ExecStart=/usr/local/bin/toolgate --data-dir /var/lib/toolgate serve --policy /etc/toolgate/policy.toml --listen 127.0.0.1:7878 --socket /run/toolgate/toolgate.sock\n",
            "RuntimeDirectory=toolgate\n",
            "RuntimeDirectoryMode=0755\n",
            "ReadWritePaths=/var/lib/toolgate\n",
            "NoNewPrivileges=yes\n",
            "ProtectSystem=strict\n",
            "WantedBy=multi-user.target\n",
        ] {
            assert!(u.contains(want), "{want:?} missing from:\n{u}");
        }
    }

    #[test]
    fn the_plist_names_the_user_and_the_same_command() {
        let p = launchd_plist(&layout());
        assert!(
            p.contains("<key>UserName</key>\n    <string>toolgate</string>"),
            "{p}"
        );
        assert!(
            p.contains(
                "<string>--socket</string>\n        <string>/run/toolgate/toolgate.sock</string>"
            ),
            "{p}"
        );
        assert!(p.contains("<string>dev.toolgate.daemon</string>"));
    }
}
