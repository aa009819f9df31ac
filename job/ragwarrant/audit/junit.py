"""``junit.xml``: every gate as a JUnit test case, for the test reports CI systems already read.

The layout is the Ant/Jenkins JUnit XML that GitLab (``artifacts:reports:junit``), GitHub
reporters (e.g. dorny/test-reporter, mikepenz/action-junit-report) and Jenkins parse; tests
validate it against Jenkins xunit-plugin's ``junit-10.xsd`` (see tests/data/junit/SOURCE.md).

One ``<testsuite>`` per candidate (``ragwarrant.<policy_id>``) plus one for the run-level
checks; one ``<testcase>`` per gate, named by the gate's stable id. A gate's status maps to:

- ``pass``: a passing test case;
- ``fail``: ``<failure>``, except a failed **hard** gate, which BLOCKs: ``<error>`` (the
  evidence, not the candidate, is at fault);
- ``inconclusive``: ``<skipped type="inconclusive">``, with the additional paired examples
  likely to resolve it (the test could not reach a verdict; it did not fail);
- ``not-applicable``: ``<skipped type="not-applicable">``.

A candidate without gates (NOT_SELECTED) has one skipped case ``selection``; an ERROR run has one
``<error>`` case ``run``. The file is a function of the decision alone: no clock, no host name.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ragwarrant.audit.report import signed
from ragwarrant.audit.summary import more_data_text
from ragwarrant.display import visible, xml_text
from ragwarrant.outputs import Decision, GateResult, GateStatus


def _testcase(suite: ET.Element, g: GateResult) -> None:
    """Append ``g`` as a test case of ``suite``, with its outcome element unless it passed."""
    case = ET.SubElement(suite, "testcase", name=g.id, classname=suite.attrib["name"], time="0")
    if g.status is GateStatus.PASS:
        return
    kind: str
    if g.status is GateStatus.FAIL:
        tag = "error" if g.kind == "hard" else "failure"
        kind = "block" if g.kind == "hard" else g.kind
    else:
        tag, kind = "skipped", g.status.value
    lines = [visible(g.reason)]  # the gate's numbers and reason
    if g.estimate is not None:
        lines.append(
            f"estimate {signed(g.estimate)}, lower bound {signed(g.lower_bound)}, upper bound "
            f"{signed(g.upper_bound)}, threshold {signed(g.threshold)}, alpha {g.alpha}, n {g.n}"
        )
    if g.status is GateStatus.INCONCLUSIVE:
        lines.append(f"more data: {more_data_text(g)}")
    ET.SubElement(case, tag, type=kind, message=g.reason).text = "\n".join(lines)


def _set_counts(root: ET.Element) -> None:
    """Set each suite's counts, then the document's, from its test cases' outcome elements."""
    for element in [*root.iter("testsuite"), root]:
        cases = list(element.iter("testcase"))
        tags = [outcome.tag for case in cases for outcome in case]
        element.set("tests", str(len(cases)))
        for tag, key in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
            if element is not root or key != "skipped":
                element.set(key, str(tags.count(tag)))
        element.set("time", "0")


def render_junit(decision: Decision) -> bytes:
    """Render ``junit.xml`` (UTF-8, with an XML declaration) from a decision.

    Returns:
        The document's bytes; the same decision gives the same bytes.
    """
    root = ET.Element("testsuites", name=f"ragwarrant {decision.run_class.value}")
    run = ET.SubElement(root, "testsuite", name="ragwarrant.run")
    if (err := decision.error) is None:
        for g in decision.run_gates:
            _testcase(run, g)
    else:
        case = ET.SubElement(run, "testcase", name="run", classname="ragwarrant.run", time="0")
        message = f"{err.code}: {err.message}"
        element = ET.SubElement(case, "error", type="ERROR", message=message)
        element.text = visible(message) + (f"\nhint: {visible(err.hint)}" if err.hint else "")
    for c in decision.candidates:
        suite = ET.SubElement(root, "testsuite", name=f"ragwarrant.{c.policy_id}")
        for g in c.gates:
            _testcase(suite, g)
        if not c.gates:  # not tested: one skipped case saying why
            name = suite.attrib["name"]
            case = ET.SubElement(suite, "testcase", name="selection", classname=name, time="0")
            reason = c.reasons[0] if c.reasons else c.decision_class.value
            outcome = ET.SubElement(case, "skipped", type=c.decision_class.value, message=reason)
            outcome.text = visible(reason)
    _set_counts(root)
    # Every attribute and text well-formed XML 1.0 (ESC, BEL, VT, FF or U+FFFE in a slice value
    # or reason would make the file unreadable): attributes are single-line, each control
    # character (newline included) shown as a visible escape (display.visible), as on stdout;
    # texts are built with visible around each user-controlled piece, so their only raw
    # newlines are the line breaks written here.
    for element in root.iter():
        for key, value in element.attrib.items():
            element.set(key, visible(value))
        if element.text:
            element.text = xml_text(element.text)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"
