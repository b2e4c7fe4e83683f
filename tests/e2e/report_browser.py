"""Loads an `icegate report` page in headless Chromium and checks it as a reviewer uses it.

Usage: report_browser.py PAGE.html SCREENSHOT.png

Chromium is driven through the DevTools protocol over --remote-debugging-pipe (file
descriptors 3 and 4, NUL-separated JSON), so nothing beyond Python's standard library and
Debian's chromium is needed. The page is the report of policies/example.yaml against an older
version without the salaries DENY and with carol outside hr (tests/e2e/report.sh writes both).
Exits non-zero on the first failed check.
"""

import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,900",
    "--remote-debugging-pipe",
]


class Browser:
    def __init__(self, user_data_dir):
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()

        def fds():
            # Chromium reads commands on fd 3 and writes answers on fd 4. Duplicate first, so
            # that a pipe end already numbered 3 or 4 is not lost to the other dup2.
            r, w = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(r, 3)
            os.dup2(w, 4)

        self.log = open(os.path.join(user_data_dir, "chromium.log"), "wb")
        self.proc = subprocess.Popen(
            ["chromium", *FLAGS, f"--user-data-dir={user_data_dir}", "about:blank"],
            preexec_fn=fds,
            close_fds=False,
            stdout=self.log,
            stderr=self.log,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.buf = b""
        self.next_id = 0
        self.session = None

    def send(self, method, params=None, session=True):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.to_browser, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            reply = self.read()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
        raise RuntimeError(f"{method}: no answer in 30 s")

    def read(self):
        while b"\0" not in self.buf:
            chunk = os.read(self.from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def open(self, url):
        target = self.send("Target.createTarget", {"url": url}, session=False)["targetId"]
        attached = self.send("Target.attachToTarget", {"targetId": target, "flatten": True}, session=False)
        self.session = attached["sessionId"]
        self.send("Page.enable")
        self.send("Runtime.enable")

    def js(self, expression):
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression, what):
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.js(expression):
                return
            time.sleep(0.1)
        raise RuntimeError(f"timed out waiting for {what}")

    def type_into(self, selector, text):
        """Focuses the field and types as a keyboard would (input events fire)."""
        self.js(f"document.querySelector({json.dumps(selector)}).focus()")
        self.send("Input.insertText", {"text": text})

    def click(self, selector):
        """A real mouse click at the element's centre."""
        box = self.js(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); e.scrollIntoView();"
            " const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1], "button": "left", "clickCount": 1})

    def close(self):
        try:
            self.send("Browser.close", session=False)
        except RuntimeError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def check(cond, message):
    if not cond:
        raise AssertionError(message)
    print(f"ok: {message}")


def main():
    page, screenshot = os.path.abspath(sys.argv[1]), sys.argv[2]
    profile = tempfile.mkdtemp(prefix="icegate-report-chromium-")
    browser = Browser(profile)
    try:
        browser.open("file://" + page)
        browser.wait_for("document.querySelectorAll('#matrix tbody tr').length > 0", "the matrix")

        section = browser.js("document.getElementById('section').selectedOptions[0].textContent")
        check(section == "prod", f"the default catalog's section is shown first (got {section!r})")

        salaries = "tr[data-subject='user:alice'] td[data-object='TABLE prod.sales.salaries'] .b[data-right='SELECT_TABLE']"
        got = browser.js(f"(() => {{ const b = document.querySelector(\"{salaries}\"); return b && [b.className, b.dataset.state, b.dataset.before]; }})()")
        check(got == ["b deny loss", "deny", "allow"], f"alice's SELECT_TABLE on salaries is drawn as an allow lost to a deny (got {got})")

        owner = "tr[data-subject='user:carol'] td[data-object='SCHEMA prod.hr'] .b[data-right='OWNER']"
        got = browser.js(f"(() => {{ const b = document.querySelector(\"{owner}\"); return b && b.className; }})()")
        check(got == "b owner gain", f"carol's ownership of prod.hr through hr is drawn as a gain (got {got!r})")

        changes = browser.js("document.getElementById('changes').textContent")
        check("user:carol gains OWNER on SCHEMA prod.hr (none \u2192 owner)" in changes, "the change list names carol's gain")
        check("user:alice loses SELECT_TABLE on TABLE prod.sales.salaries (allow \u2192 deny)" in changes, "the change list names alice's loss")

        rows = "[...document.querySelectorAll('#matrix tbody tr')].filter(r => !r.hidden).map(r => r.dataset.subject)"
        before = browser.js(rows)
        browser.type_into("#subject-filter", "group:")
        after = browser.js(rows)
        check(len(before) == 8 and after == ["group:data-platform", "group:hr"], f"the subject filter narrows the rows ({before} -> {after})")

        browser.type_into("#object-filter", "salaries")
        cols = browser.js("[...document.querySelectorAll('#matrix thead th')].filter(c => !c.hidden).map(c => c.textContent)")
        check(cols == ["subject", "TABLEprod.sales.salaries"], f"the object filter narrows the columns (got {cols})")

        browser.js("document.getElementById('subject-filter').value = ''; document.getElementById('subject-filter').dispatchEvent(new Event('input'))")
        browser.click("tr[data-subject='user:alice'] td[data-object='TABLE prod.sales.salaries']")
        detail = browser.js("document.getElementById('detail').textContent")
        check(
            "SELECT_TABLE: deny (role `analyst` on TABLE `prod.sales.salaries`); before: allow (role `analyst` on SCHEMA `prod.sales`)" in detail,
            f"clicking the cell shows its via (got {detail!r})",
        )
        title = browser.js(f"document.querySelector(\"tr[data-subject='user:bob'] td[data-object='TABLE prod.sales.salaries']\").title")
        check("SELECT_TABLE: allow (role `engineer` on SCHEMA `prod.sales`)" in title, f"hovering a cell shows its via (got {title!r})")

        browser.js("document.getElementById('object-filter').value = ''; document.getElementById('object-filter').dispatchEvent(new Event('input'))")
        shot = browser.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
        os.makedirs(os.path.dirname(os.path.abspath(screenshot)), exist_ok=True)
        with open(screenshot, "wb") as f:
            f.write(base64.b64decode(shot["data"]))
        check(os.path.getsize(screenshot) > 10_000, f"a screenshot was saved to {screenshot}")
    finally:
        browser.close()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    try:
        main()
    except (AssertionError, RuntimeError) as e:
        print(f"FAIL: {e}", file=sys.stderr)
        sys.exit(1)
