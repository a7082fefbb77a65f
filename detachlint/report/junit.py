"""JUnit XML, as ruff writes it: one ``testsuite`` per file (its absolute path), one ``testcase``
(``org.detachlint.CODE``) with a ``failure`` per finding, the severity as a property; a single
passing test case when there is nothing to report."""

from __future__ import annotations

import os
from itertools import groupby
from typing import List, Sequence
from xml.sax.saxutils import escape, quoteattr

from ..findings import Finding
from .common import ReportOptions, absolute_filename, column1, level

PACKAGE = "org.detachlint"


def _attrs(**values: object) -> str:
    return " ".join(f"{k}={quoteattr(str(v))}" for k, v in values.items())


def _case(f: Finding, classname: str) -> List[str]:
    where = f"cell {f.cell}, " if f.cell is not None else ""
    text = f"{where}line {f.location.row}, col {column1(f.location)}, {f.message}"
    return [f"        <testcase {_attrs(name=f'{PACKAGE}.{f.code}', classname=classname, line=f.location.row, column=column1(f.location))}>",
            "            <properties>",
            f"                <property {_attrs(name='severity', value=level(f.severity, 'junit'))}/>",
            "            </properties>",
            f"            <failure {_attrs(message=f.message)}>{escape(text)}</failure>",
            "        </testcase>"]


def render(findings: Sequence[Finding], options: ReportOptions) -> str:
    counts = _attrs(tests=max(len(findings), 1), skipped=0, failures=len(findings), errors=0)
    out = ['<?xml version="1.0" encoding="UTF-8"?>', f'<testsuites name="detachlint" {counts}>']
    if not findings:
        out += [f'    <testsuite name="detachlint" tests="1" skipped="0" errors="0" failures="0" package="{PACKAGE}">',
                '        <testcase name="No errors found" classname="detachlint"/>', "    </testsuite>"]
    for filename, group in groupby(findings, key=lambda f: f.filename):
        found = list(group)
        path = absolute_filename(filename)
        out.append(f"    <testsuite {_attrs(name=path, tests=len(found), skipped=0, errors=0, failures=len(found), package=PACKAGE)}>")
        for f in found:
            out += _case(f, os.path.splitext(path)[0])
        out.append("    </testsuite>")
    out.append("</testsuites>")
    return "".join(x + "\n" for x in out)
