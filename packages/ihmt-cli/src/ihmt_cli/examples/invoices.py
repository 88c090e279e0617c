"""Invoice numbering and VAT totals for the billing service."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

VAT_RATES = {"ES": Decimal("0.21"), "PT": Decimal("0.23"), "FR": Decimal("0.20")}


@dataclass(frozen=True)
class Line:
    description: str
    quantity: int
    unit_price: Decimal


def next_invoice_number(last: str, year: int) -> str:
    """Invoice numbers restart every year: 2026-00001, 2026-00002, ..."""
    prefix, _, counter = last.partition("-")
    if int(prefix) != year:
        return f"{year}-00001"
    return f"{year}-{int(counter) + 1:05d}"


def vat_total(lines: list[Line], country: str) -> Decimal:
    """Total with VAT, rounded half up to the cent as the tax office requires."""
    net = sum((line.unit_price * line.quantity for line in lines), Decimal("0"))
    rate = VAT_RATES.get(country, Decimal("0"))
    return (net * (1 + rate)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
