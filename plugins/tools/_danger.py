"""The dangerous-command check of the ``terminal`` tool: a table of patterns, each with its reason.

The table reads the *parsed* command (:mod:`._shell`): every simple command it would run,
with quotes and escapes removed, simple variables expanded, wrappers (``sudo``, ``env`` …)
dropped, ``/bin/rm`` reduced to ``rm``, and the text inside ``sh -c``, ``eval``, ``$(…)``,
backticks and ``find -exec`` read as commands too. Each pattern sees one normalised line,
``argv`` joined by spaces plus ``> target`` for every output redirection. A few patterns
read the raw text (fork bombs, SQL inside a client's arguments), and pipelines are judged
as a whole (``curl … | sh``, ``env | nc``).

A match does not forbid a command: the REPL asks the user (``ctx.approve``), one-shot mode
denies it, ``--yolo`` allows it. So the table errs towards asking, and only names commands
whose damage is wide or hard to undo. It is a guard against a model's mistake, not a
sandbox: a command assembled at run time can always get past it.
"""

from __future__ import annotations

import functools
import re

from ._shell import SHELLS, SimpleCommand, simple_commands

__all__ = ["DANGEROUS_PATTERNS", "RAW_PATTERNS", "dangerous_reason"]

# Arguments that mean "everything": /, ~, $HOME, bare globs, the current or parent folder,
# top-level system folders and whole home folders.
_EVERYTHING = (
    r"(?:/\*?|~/?\*?|\$\{?HOME\}?/?\*?|\*|\.\*|\./\*|\.\./?\*?|\.|\./|\.\."
    r"|/(?:bin|boot|dev|etc|home|lib|lib64|opt|proc|root|sbin|srv|sys|usr|var|Users|System|Library|Applications)/?\*?"
    r"|/home/[^/\s]+/?|/Users/[^/\s]+/?)"
)
_END = r"(?=\s|$)"
_RECURSIVE = r"(?:-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)"
_HOME = r"(?:~|\$\{?HOME\}?|/home/[^/\s]+|/root|/Users/[^/\s]+)"
_SYSTEM_DIR = r"/(?:etc|boot|bin|sbin|lib|lib64|usr/bin|usr/sbin|usr/lib|usr/libexec)"
_CREDENTIALS = (
    rf"(?:{_HOME}/(?:\.ssh/(?:id_[\w.-]+|[\w.-]*_key|identity)|\.aws/credentials|\.netrc|\.pgpass|\.git-credentials"
    r"|\.docker/config\.json|\.kube/config|\.config/gcloud/\S*|\.azure/\S*|\.gnupg/\S*|\.npmrc|\.pypirc"
    r"|\.hermes/(?:\S+/)?(?:\.env|auth\.json)|\.password-store/\S*)|/etc/(?:shadow|gshadow|sudoers)\b)"
)
_READERS = (
    r"(?:cat|tac|less|more|head|tail|bat|nl|base64|base32|xxd|od|hexdump|strings|cp|scp|rsync|nc|ncat|curl|wget"
    r"|tar|zip|7z|gzip|bzip2|xz|openssl|gpg|python\d?(?:\.\d+)?|node|perl|ruby|php|awk|gawk|sed|grep|rg|tee|dd|sort|uniq|cut|diff|vim?|nano|emacs|code)"
)
_SECRET_VAR = r"\$\{?\w*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)\w*\}?"
_SHELL_RC = r"\.(?:bashrc|bash_profile|bash_login|bash_logout|profile|zshrc|zprofile|zshenv|zlogin|config/fish/config\.fish)\b"
_HISTORY = r"\.\w*_?history\b"
_NETWORK = frozenset({"curl", "wget", "nc", "ncat", "netcat", "socat", "telnet", "ssh", "scp", "sftp", "ftp", "http", "https", "xh", "fetch"})
_INTERPRETERS = frozenset({"python", "python2", "python3", "perl", "ruby", "node", "php", "lua", "Rscript", "osascript"})
_DECODERS = frozenset({"base64", "base32", "xxd", "openssl", "gunzip", "zcat", "uudecode", "rev", "tr"})

# (pattern over one normalised simple command, reason). Reasons complete "the command …".
DANGEROUS_PATTERNS: list[tuple[str, str]] = [
    # -- deleting files
    (rf"^rm\b(?=.*\s{_RECURSIVE}{_END})(?=.*\s{_EVERYTHING}{_END})",
     "recursive delete of the root, home or a system folder, or of everything a glob matches"),
    (r"--no-preserve-root\b", "disables rm's protection of the root folder"),
    (rf"^rm\b(?=.*\s{_RECURSIVE}{_END}).*\s(?:\S*/)?\.git/?{_END}", "recursive delete of a repository's .git folder (all its history)"),
    (rf"^(?:rm|unlink)\b.*\s{_SYSTEM_DIR}/\S+", "deletes system files"),
    (rf"^(?:rm|shred|unlink|truncate)\b.*\s{_HOME}/{_HISTORY}", "wipes the shell history"),
    (rf"^find\s+(?:/|{_HOME}|{_SYSTEM_DIR}|/usr|/var)/?\s.*-delete\b", "deletes files across the root or home folder or a system folder"),
    (rf"^find\s+(?:/|{_HOME})/?\s.*-exec(?:dir)?\s+(?:rm|shred|chmod|chown)\b", "runs rm/chmod/chown on every file under the root or home folder"),
    (r"^mv\s.*\s/dev/null$", "moves files into /dev/null (destroys them)"),
    (rf"^mv\s+(?:-\S+\s+)*(?:/|{_HOME}/?|/(?:bin|boot|etc|lib|lib64|sbin|usr|var|home|root))\s", "moves the root, home or a system folder away"),
    (r"^(?:shred|wipe|srm)\s+(?:-\S+\s+)*-\S*[uz]", "overwrites and deletes files beyond recovery"),
    (r"^(?:truncate|shred)\b.*\s/var/log/|> /var/log/|^journalctl\b.*--vacuum|^rm\b.*\s/var/log\b", "wipes system logs"),
    # -- disks and file systems
    (r"^(?:mkfs(?:\.\w+)?|mke2fs|mkswap|wipefs|mkdosfs|mkntfs|newfs(?:_\w+)?)\b", "formats or wipes a file system"),
    (r"^dd\b.*\bof=/dev/(?!null\b|zero\b|stdout\b|stderr\b|tty\b)", "dd writes straight onto a device"),
    (r"> /dev/(?:sd[a-z]|nvme\d|hd[a-z]|vd[a-z]|xvd[a-z]|mmcblk\d|disk\d|rdisk\d|md\d|dm-\d|mapper/|loop\d)",
     "overwrites a block device"),
    (r"^(?:shred|tee)\b.*\s/dev/(?:sd|nvme|hd|vd|xvd|mmcblk|disk|rdisk)|^cp\b.*\s/dev/(?:sd|nvme|hd|vd|xvd|mmcblk|disk|rdisk)\S*$",
     "overwrites a block device"),
    (r"^(?:fdisk|sfdisk|cfdisk|gdisk|sgdisk|parted|diskutil\s+(?:erase\w*|partitionDisk|zeroDisk))\b(?!.*\s(?:-l|--list|print)\b)",
     "repartitions or erases a disk"),
    (r"^(?:blkdiscard|badblocks\s+.*-w)\b|^hdparm\b.*--security-erase|^cryptsetup\s+(?:luksFormat|erase)\b", "erases a disk"),
    # -- permissions and owners
    (rf"^(?:chmod|chown|chgrp)\b(?=.*\s{_RECURSIVE}{_END})(?=.*\s{_EVERYTHING}{_END})",
     "recursive permission or owner change on the root, home or a system folder"),
    (rf"^chmod\b(?=.*\s{_RECURSIVE}{_END})(?=.*\s(?:0?[0-7]{{2}}[2367]|[ugoa]*o[ugoa]*\+\w*w\w*|a\+\w*w\w*){_END})",
     "makes a whole tree writable by everyone"),
    (rf"^chmod\s+(?:-\S+\s+)*(?:0?777|0?666|a\+rwx|ugo\+rwx|o\+rwx|o\+w)\s+(?:/|{_HOME})\S*", "makes files writable by everyone"),
    (r"^chmod\s+(?:-\S+\s+)*(?:[ugoa]*[ug][ugoa]*\+\w*s\w*|0?[246][0-7]{3})\s", "sets the setuid/setgid bit (the file runs as its owner)"),
    (r"^chown\s+(?:-\S+\s+)*-\S*R\S*\s+root\b", "gives a whole tree to root"),
    # -- the machine
    (r"^(?:shutdown|reboot|halt|poweroff)\b|^(?:init|telinit)\s+[06]\b|^systemctl\s+(?:reboot|poweroff|halt|kexec|suspend|hibernate)\b",
     "shuts down or reboots the machine"),
    (r"> /proc/sysrq-trigger", "shuts down or reboots the machine (sysrq)"),
    (r"^(?:kill|pkill)\s+(?:-\S+\s+)*-1(?:\s|$)|^killall5\b|^kill\s+(?:-\S+\s+)*1$", "kills every process the user owns"),
    (r"^(?:pkill|killall)\s+(?:-\S+\s+)*-u\s", "kills every process of a user"),
    (r"^systemctl\s+(?:--\S+\s+)*(?:stop|disable|mask|kill)\s|^service\s+\S+\s+stop\b", "stops or disables a system service"),
    (r"^(?:insmod|rmmod)\b|^modprobe\s+(?:-\S+\s+)*-r\b", "loads or unloads kernel modules"),
    (r"^(?:apt|apt-get|yum|dnf|zypper|pacman)\s+(?:-\S+\s+)*(?:remove|purge|autoremove|erase|-R\w*)\b.*\s"
     r"(?:python3?|systemd|libc6|glibc|coreutils|bash|sudo|openssh-server|linux-image\S*|grub\S*)(?:\s|$)",
     "removes an essential system package"),
    # -- system files
    (r"> /(?:etc/cron|var/spool/cron)|^(?:cp|mv|tee|install|ln)\b.*\s/(?:etc/cron|var/spool/cron)", "installs a cron job"),
    (r"> /etc/(?:passwd|shadow|group|gshadow|sudoers|fstab|hosts|crontab|environment|ld\.so\.preload|pam\.d/|ssh/)",
     "overwrites a critical system file"),
    (rf"> {_SYSTEM_DIR}/", "writes into a system folder"),
    (rf"^tee\b.*\s{_SYSTEM_DIR}/", "writes into a system folder"),
    (rf"^(?:cp|mv|install|ln|rsync)\b.*\s{_SYSTEM_DIR}(?:/\S*)?$", "writes into a system folder"),
    (r"^(?:sed|perl)\b.*\s-i\S*\s.*/etc/", "edits a system file in place"),
    (rf"^(?:curl|wget)\b.*\s(?:-o|-O|--output|--output-document)(?:=|\s+){_SYSTEM_DIR}/", "downloads into a system folder"),
    # -- accounts and privileges
    (r"^visudo\b", "edits the sudoers file"),
    (r"NOPASSWD", "grants password-less sudo"),
    (r"^usermod\b.*\s-\S*G\S*\s+\S*\b(?:sudo|wheel|admin|root)\b|^(?:gpasswd\s+-a|adduser)\s+\S+\s+(?:sudo|wheel|admin)\b",
     "gives a user administrator rights"),
    (r"^(?:passwd|chpasswd|userdel|deluser)\b|^useradd\b.*\s-(?:o|u\s*0)\b", "changes system accounts or passwords"),
    # -- persistence
    (r"^crontab\b(?!(?:\s+-u\s+\S+)?\s+-l$)", "installs, edits or removes the user's cron jobs"),
    (rf"> {_HOME}/{_SHELL_RC}|^(?:tee|cp|mv|ln)\b.*\s{_HOME}/{_SHELL_RC}|^sed\b.*\s-i\S*\s.*{_HOME}/{_SHELL_RC}",
     "changes a shell startup file (it runs at every login)"),
    (r"> \S*\.ssh/|^(?:tee|cp|mv|ln|sed)\b.*\.ssh/authorized_keys\b", "adds SSH keys or changes SSH settings"),
    (r"^systemctl\s+(?:--\S+\s+)*enable\b|^launchctl\s+(?:load|bootstrap|submit)\b|^update-rc\.d\b|^chkconfig\b.*\son\b",
     "installs a service that starts on its own"),
    (r"> \S*(?:/etc/systemd/|\.config/systemd/user/|Library/LaunchAgents/|Library/LaunchDaemons/|/etc/init\.d/)",
     "installs a service that starts on its own"),
    (r"^(?:at|batch)\s", "schedules a command to run later"),
    (r"^hermes\b.*\sconfig\s+set\s+(?:approvals\.|security\.|tools\.allowed_paths)", "changes the agent's own safety settings"),
    (r"(?:> |^(?:tee|cp|mv|sed|ln)\b.*\s)\S*\.hermes/(?:\S+/)?(?:config\.yaml|\.env|auth\.json|SOUL\.md)",
     "changes the agent's own settings or keys"),
    # -- history
    (r"^history\s+(?:-\S*c|-\S*w\s+/dev/null)|^unset\s+HIST(?:FILE|SIZE)\b|^set\s+\+o\s+history\b|^export\s+HIST(?:FILE|SIZE|FILESIZE)=(?:/dev/null|0)?$",
     "wipes or disables the shell history"),
    (rf"> \S*{_HISTORY}$|^ln\b.*/dev/null\s+\S*{_HISTORY}", "wipes or disables the shell history"),
    # -- firewall and security modules
    (r"^(?:ip6?tables|iptables-legacy|iptables-nft)\b.*\s(?:-F|--flush|-X|--delete-chain)(?:\s|$)|^ip6?tables\b.*\s-P\s+\S+\s+ACCEPT\b",
     "flushes or opens the firewall"),
    (r"^ufw\s+(?:--force\s+)?(?:disable|reset)\b|^ufw\s+default\s+allow\b|^nft\s+(?:-\S+\s+)*flush\s+ruleset\b"
     r"|^firewall-cmd\b.*--(?:panic-off|set-default-zone=trusted)|^pfctl\s+-d\b",
     "turns the firewall off"),
    (r"^setenforce\s+0\b|^aa-(?:teardown|disable)\b|^spctl\s+--master-disable\b", "turns off SELinux, AppArmor or Gatekeeper"),
    # -- git
    (r"^git\b(?=.*\spush\b)(?=.*\s(?:--force\b|--force-with-lease\b|-f\b|\+\S))(?=.*\b(?:main|master)\b)",
     "force-pushes to main/master, rewriting shared history"),
    (r"^git\b.*\spush\b.*\s(?:--mirror\b|--delete\s+\S*\b(?:main|master)\b|:(?:main|master)\b)", "deletes or overwrites remote branches"),
    (r"^git\b.*\sreset\s+(?:.*\s)?--hard\b", "git reset --hard discards uncommitted changes"),
    (r"^git\b.*\sclean\s+(?:.*\s)?-[a-zA-Z]*f", "git clean -f deletes untracked files"),
    (r"^git\b.*\s(?:filter-branch|filter-repo)\b|^git\b.*\sreflog\s+expire\b|^git\b.*\sstash\s+clear\b",
     "rewrites or drops the repository's history"),
    (r"^gh\s+repo\s+delete\b|^npm\s+unpublish\b", "deletes a published repository or package"),
    # -- databases
    (r"^(?:dropdb|dropuser)\b|^mysqladmin\b.*\sdrop\b", "drops a database"),
    (r"^redis-cli\b.*\s(?i:flushall|flushdb)\b", "empties a Redis database"),
    # -- containers and cloud
    (r"^(?:docker|podman)\s+(?:container\s+)?run\b.*\s(?:--privileged\b|-v\s*/:|--volume[= ]/:|--pid[= ]host\b)",
     "runs a container with full access to the host"),
    (r"^(?:docker|podman)\s+(?:system|volume|image|container)\s+prune\b.*\s(?:-a|--all|--volumes)\b", "deletes every unused container image or volume"),
    (r"^kubectl\b.*\sdelete\b.*(?:\s--all\b|\s-A\b|\s--all-namespaces\b|\s(?:namespace|namespaces|ns)\s)", "deletes Kubernetes resources in bulk"),
    (r"^(?:terraform|tofu|pulumi)\s+(?:-\S+\s+)*destroy\b|^terraform\b.*\sapply\b.*\s-destroy\b", "destroys the infrastructure it manages"),
    (r"^aws\s+s3\s+(?:rm\b.*--recursive|rb\b.*--force)|^aws\s+\S+\s+(?:terminate-instances|delete-db-instance|delete-db-cluster|delete-bucket|delete-stack|delete-cluster|delete-table)\b"
     r"|^gcloud\b.*\s(?:projects|instances|clusters|buckets)\s+delete\b|^az\s+group\s+delete\b|^gsutil\s+(?:-m\s+)?rm\s+-\S*r",
     "deletes cloud resources"),
    # -- credentials leaving the machine or the file
    (rf"^{_READERS}\b.*\s{_CREDENTIALS}|< {_CREDENTIALS}", "reads a credentials file"),
    (rf"^(?:curl|wget|http|https|xh)\b.*(?:@|--upload-file\s+|-T\s+|--post-file[= ]|--body-file[= ])\S*(?:\.env\b|{_CREDENTIALS})",
     "uploads a credentials file"),
    (rf"^(?:curl|wget|nc|ncat|netcat|http|https|xh|telnet)\b.*{_SECRET_VAR}", "sends a secret from the environment over the network"),
    (r"^gpg\b.*--export-secret-(?:keys|subkeys)\b", "exports private keys"),
    (r"^security\s+(?:find-generic-password|find-internet-password|dump-keychain)\b|^secret-tool\s+lookup\b", "reads passwords from the keychain"),
    (rf"^(?:scp|rsync)\b.*\s(?:{_HOME}|/)/?\s+\S*:\S*$", "copies the whole home or root folder to another machine"),
    # -- remote shells
    (r"^(?:nc|ncat|netcat)\b.*\s(?:-[a-zA-Z]*[ec]\s|--(?:exec|sh-exec|lua-exec)\b)", "hands a shell to a network connection"),
    (r"^socat\b.*(?i:exec|system):", "hands a shell to a network connection"),
]

# (pattern over the raw command text, reason): shapes the parser would take apart.
RAW_PATTERNS: list[tuple[str, str]] = [
    (r"(\w+|:)\s*\(\)\s*\{[^}]*\1\s*\|\s*\1\s*&", "a fork bomb: it exhausts the machine's processes"),
    (r"/dev/(?:tcp|udp)/", "opens a raw network connection from the shell (a reverse shell)"),
    (r"(?is)socket\b.*(?:subprocess|pty\.spawn|os\.dup2)", "opens a reverse shell"),
    (r"(?i)\bdrop\s+(?:table|database|schema)\b", "drops a database or table"),
    (r"(?i)\btruncate\s+table\b", "empties a database table"),
    (r"(?i)\bdelete\s+from\s+[\w.\"`]+\s*(?:;|\"|'|$)", "deletes every row of a table (no WHERE)"),
    (r"dropDatabase\(\)", "drops a database"),
    (r"\b(?:exec|eval)\s*\(\s*(?:base64\.b64decode|codecs\.decode|bytes\.fromhex|zlib\.decompress|marshal\.loads|__import__\(\s*['\"]base64)",
     "runs decoded (hidden) code"),
    (r"shutil\.rmtree\(\s*(?:['\"](?:/|~|\$HOME)/?['\"]|os\.path\.expanduser\(\s*['\"]~['\"]\s*\)|Path\.home\(\))", "deletes the home or root folder from code"),
    (r"(?:^|[;&|\s])HIST(?:FILE|SIZE|FILESIZE)=(?:/dev/null|0)?(?:\s|;|$)", "wipes or disables the shell history"),
]

@functools.cache
def _compiled() -> tuple[list[tuple[re.Pattern[str], str]], list[tuple[re.Pattern[str], str]]]:
    """The parsed-form and raw-text patterns, compiled at the first check, not at import:
    a chat that runs no command never pays for them."""
    return (
        [(re.compile(pattern), reason) for pattern, reason in DANGEROUS_PATTERNS],
        [(re.compile(pattern), reason) for pattern, reason in RAW_PATTERNS],
    )
_CODE_STRING_RE = re.compile(r"(?:system|popen|run|call|check_output|check_call|Popen|exec|execSync|spawnSync|`)\s*\(?\s*(['\"])(.+?)\1")


def _reads_stdin(command: SimpleCommand) -> bool:
    """A shell or interpreter with no script argument: it runs what the pipe feeds it."""
    args = [a for a in command.argv[1:] if not a.startswith("-")]
    if command.name in SHELLS:
        return not args and "-c" not in command.argv
    return command.name.rstrip("0123456789.") in _INTERPRETERS and (not args or args == ["-"]) and not any(
        a in ("-c", "-e", "-m", "-r", "--eval", "-E") for a in command.argv
    )


def _pipeline_reason(commands: list[SimpleCommand]) -> str | None:
    pipelines: dict[tuple[int, int], list[SimpleCommand]] = {}
    for command in commands:
        pipelines.setdefault((command.depth, command.pipeline), []).append(command)
    for stages in pipelines.values():
        stages.sort(key=lambda c: c.stage)
        for index, command in enumerate(stages):
            earlier = {c.name for c in stages[:index]}
            if index and _reads_stdin(command):
                if earlier & _NETWORK:
                    return "runs a script downloaded from the network without reading it"
                if earlier & _DECODERS:
                    return "decodes hidden text and runs it as a script"
                return "pipes text into a shell or interpreter to run it"
            if index and command.name in _NETWORK and earlier & {"env", "printenv", "set", "export", "declare"}:
                return "sends the environment (and every key in it) over the network"
    return None


def _substitution_reason(command: SimpleCommand) -> str | None:
    """``sh -c "$(curl …)"``, ``eval "$(wget …)"``, ``source <(curl …)``, ``curl -d "$(env)"``."""
    for text in command.substituted:
        words = set(re.findall(r"[\w.-]+", text))
        runs_it = command.name in SHELLS or command.name in ("eval", "source", ".") or command.name in _INTERPRETERS
        if runs_it and words & {"curl", "wget", "fetch"}:
            return "runs a script downloaded from the network without reading it"
        if command.name in _NETWORK and words & {"env", "printenv"}:
            return "sends the environment (and every key in it) over the network"
    return None


def _code_reason(command: SimpleCommand) -> str | None:
    """Commands passed as strings inside ``python -c``/``perl -e``/``node -e`` code."""
    if command.name.rstrip("0123456789.") not in _INTERPRETERS:
        return None
    code = " ".join(command.argv[1:])
    for match in _CODE_STRING_RE.finditer(code):
        reason = _line_reason(match.group(2), depth=1)
        if reason is not None:
            return reason
    return None


# Environment variables whose value a program runs as a command (or loads as code).
_COMMAND_VARS = frozenset({
    "GIT_SSH_COMMAND", "GIT_SSH", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "GIT_PROXY_COMMAND",
    "GIT_CONFIG_PARAMETERS", "SSH_ASKPASS", "BASH_ENV", "ENV", "PROMPT_COMMAND",
    "LD_PRELOAD", "LD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES", "PYTHONSTARTUP", "PERL5OPT", "NODE_OPTIONS", "RUBYOPT",
})  # fmt: skip
_ASSIGNED_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=")


def _hidden_command_reason(command: SimpleCommand) -> str | None:
    """``GIT_SSH_COMMAND='…' git push``: the program runs the variable's value, which the table never reads."""
    for word in command.words:
        match = _ASSIGNED_RE.match(word)
        if match is None:
            if word not in ("env", "sudo", "command", "exec") and not word.startswith("-"):
                return None
            continue
        if match.group(1) in _COMMAND_VARS:
            return "runs a command or loads code hidden in an environment variable"
    return None


def _line_reason(command: str, depth: int = 0) -> str | None:
    for regex, reason in _compiled()[1]:
        if regex.search(command):
            return reason
    commands = simple_commands(command)
    for parsed in commands:
        reason = _hidden_command_reason(parsed)
        if reason is not None:
            return reason
        line = parsed.line()
        for regex, reason in _compiled()[0]:
            if regex.search(line):
                return reason
        reason = _substitution_reason(parsed) or (_code_reason(parsed) if depth == 0 else None)
        if reason is not None:
            return reason
    return _pipeline_reason(commands)


def dangerous_reason(command: str) -> str | None:
    """Why ``command`` needs the user's approval, or None when it looks safe."""
    return _line_reason(command.replace("\\\n", " "))
