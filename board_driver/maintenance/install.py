"""Installing the service: the systemd unit and udev rule shipped in the package, rendered for
this machine (``fairyboard install-service``)."""

from __future__ import annotations

from pathlib import Path

# The systemd unit and udev rule ship in the package (links to hardware/systemd and hardware/udev).
HARDWARE_DIR = Path(__file__).resolve().parents[1] / "service_files"
UNIT_NAME = "fairyboard.service"
UDEV_NAME = "99-fairyboard.rules"


def render_unit(template: str, *, user: str, exe: str, docs: Path | None = None) -> str:
    """The unit file with the service's user, the fairyboard executable and (when this is a
    checkout with its docs) the guide's real path filled in."""
    out = []
    for line in template.splitlines():
        if line.startswith("Documentation=") and docs is not None:
            line = f"Documentation=file://{docs}"
        elif line.startswith("User="):
            line = f"User={user}"
        elif line.startswith("Group="):
            line = f"Group={user}"
        elif line.startswith("ExecStart="):
            rest = line.split(None, 1)[1] if " " in line else ""
            line = f"ExecStart={exe} {rest}".rstrip()
        out.append(line)
    return "\n".join(out) + "\n"


def user_exists(user: str, root: Path) -> bool | None:
    """Whether ``user`` exists on the system under ``root`` (None: cannot tell)."""
    if root.resolve() == Path("/"):
        import pwd
        try:
            pwd.getpwnam(user)
            return True
        except KeyError:
            return False
    passwd = root / "etc" / "passwd"
    if not passwd.exists():
        return None
    return any(line.split(":", 1)[0] == user for line in passwd.read_text(encoding="utf-8").splitlines())


ENV_FILE = """\
# Environment of the fairyboard service (read by /etc/systemd/system/fairyboard.service).
# Extra arguments for `fairyboard serve`, e.g. --variant tomorrow-1
FAIRYBOARD_ARGS=
"""
