"""The golden wire files the TypeScript suite also reads: Python sees the same formats.

``test/fixtures/wire/bundle-v1.json`` was written once by callgate; every record in it must
validate against the protocol's JSON Schemas in ``test/fixtures/schemas/``.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

FIXTURES = Path(__file__).resolve().parents[3] / "test" / "fixtures"


def _schema(name: str) -> dict:
    return json.loads((FIXTURES / "schemas" / f"{name}.json").read_text(encoding="utf-8"))


def test_every_record_of_the_golden_bundle_matches_the_ledger_record_schema() -> None:
    bundle = json.loads((FIXTURES / "wire" / "bundle-v1.json").read_text(encoding="utf-8"))
    jsonschema.validate(bundle, _schema("bundle"))
    validator = jsonschema.Draft202012Validator(_schema("ledger-record"))
    types = set()
    for record in bundle["records"]:
        validator.validate(record)
        types.add(record["type"])
    assert "call-decision" in types and "approval-response" in types and "run-end" in types


def test_a_changed_record_field_type_is_refused_by_the_schema() -> None:
    bundle = json.loads((FIXTURES / "wire" / "bundle-v1.json").read_text(encoding="utf-8"))
    record = dict(bundle["records"][0])
    record["seq"] = "zero"
    errors = list(jsonschema.Draft202012Validator(_schema("ledger-record")).iter_errors(record))
    assert errors
