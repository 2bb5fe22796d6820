"""csipgs chess commands: ``fairyboard cost DESIGN`` prices a design.

The breakdown comes first, one line per atom; the last line is the exact cost as a decimal
and the price (rounded up to the currency unit), separated by a space: ``1.08 2``.
"""

from __future__ import annotations

from board_driver.config import load_variant
from engine.csipgs import CsipgsRules
from engine.csipgs_cost import (
    ATOM_MODIFIERS,
    STEPS,
    DesignError,
    atom_spec,
    breakdown,
    cost_of,
    decimal,
    parse_amount,
)


def register(sub) -> None:
    p = sub.add_parser(
        "cost", help="price a csipgs design (atoms x modifiers, colourbound, royal; rounded up)",
        description="Print the cost breakdown of a csipgs design; the last line is the exact cost and "
                    "the price, e.g. '1.08 2'. Whole-piece modifiers are written before the Betza: royal-WF.")
    p.add_argument("design", help="the design in Betza notation, e.g. fcFfmW, BR, royal-WF")
    p.add_argument("--variant", default="csipgs", help="a csipgs variant (default: csipgs): its rounding "
                   "and the unofficial modifiers it enables")
    p.add_argument("--rounding", choices=tuple(STEPS), help="round up to whole zorkmids, halves or tenths "
                   "(default: the variant's)")
    p.add_argument("--atom", action="append", default=[], metavar="BETZA=PRICE",
                   help="an invented atom and its agreed price, e.g. nN=2.4 (repeatable)")
    p.add_argument("--modifier", action="append", default=[], metavar="NAME=FACTOR",
                   help=f"an invented modifier ({', '.join(ATOM_MODIFIERS)}) and its factor, e.g. runner=5")
    p.set_defaults(handler=cmd_cost)


def cmd_cost(args) -> int:
    variant = load_variant(args.variant)
    if variant.family != "csipgs":
        raise DesignError(f"variant {variant.name!r} is not a csipgs variant (family {variant.family!r})")
    rules = CsipgsRules.from_variant(variant)
    prices = rules.price_list()
    if args.rounding:
        prices = prices.with_step(STEPS[args.rounding])
    for text in args.atom:
        key, _, value = text.partition("=")
        spec = atom_spec(key)
        prices = prices.with_atom(spec.key, _positive(value, f"--atom {text}"), spec.family)
    for text in args.modifier:
        name, _, value = text.partition("=")
        if name not in ATOM_MODIFIERS:
            raise DesignError(f"--modifier {text!r}: {name!r} is not a modifier this engine can play "
                              f"(known: {', '.join(ATOM_MODIFIERS)})")
        prices = prices.with_modifier(name, _positive(value, f"--modifier {text}"))
    cost = cost_of(args.design, prices, variant.geometry)
    print(f"{cost.design} in {variant.name}")
    for line in breakdown(cost):
        print(line)
    print(f"{decimal(cost.exact)} {decimal(cost.price)}")
    return 0


def _positive(text: str, what: str):
    value = parse_amount(text, what)
    if value <= 0:
        raise DesignError(f"{what}: the amount must be more than 0")
    return value
