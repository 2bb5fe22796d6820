"""``fairyboard web``: the page's paired devices (tokens) in the data folder: list them, forget them.

The service reads the token file again when it changes, so ``fairyboard web forget`` takes
effect on a running service at its next request (docs/web.md, *Tokens*)."""

from __future__ import annotations

import json


def register(sub) -> None:
    p = sub.add_parser("web", help="the page's paired devices: list them, forget them",
                       description="The devices paired with the board's page (their tokens, kept as hashes in "
                                   "web-tokens.json in the data folder: $FAIRYBOARD_DATA, "
                                   "$XDG_DATA_HOME/fairyboard or ~/.local/share/fairyboard).")
    wsub = p.add_subparsers(dest="web_command", metavar="ACTION", required=True)
    q = wsub.add_parser("devices", help="one line per paired device: id, label, how, created, last used, expires")
    q.add_argument("--json", action="store_true", help="print a JSON list")
    q.set_defaults(handler=cmd_devices)
    q = wsub.add_parser("forget", help="forget paired devices: every one, or those named by id")
    q.add_argument("ids", nargs="*", metavar="ID", help="the devices to forget (none: every one)")
    q.set_defaults(handler=cmd_forget)


def _store():
    from board_driver.journal import data_dir
    from board_driver.web.auth import TokenStore
    return TokenStore(data_dir() / "web-tokens.json")


def cmd_devices(args) -> int:
    devices = _store().devices()
    if args.json:
        print(json.dumps(devices))
        return 0
    if not devices:
        print("no paired devices")
    for d in devices:
        print(f"{d['id']}  {d['label']}  via {d['via']}  created {d['created']}  last used {d['last_used']}  "
              f"expires {d['expires']}")
    return 0


def cmd_forget(args) -> int:
    from board_driver.errors import BoardDriverError
    store = _store()
    if args.ids:
        known = {d["id"] for d in store.devices()}
        unknown = [i for i in args.ids if i not in known]
        if unknown:
            raise BoardDriverError(f"no paired device {unknown[0]!r} (fairyboard web devices lists them)")
        n = store.revoke(set(args.ids))
    else:
        n = store.revoke(None)
    print(f"{n} paired device{'s' if n != 1 else ''} forgotten")
    return 0
