#!/usr/bin/env python3
"""The run report in a real headless Chromium (Debian `chromium`), through the DevTools
protocol on a pipe (--remote-debugging-pipe; no network, no extra packages).

Makes a report (a synthetic orbit with `vidmap synth`, `vidmap reconstruct`, then `vidmap
report --groundtruth`) or takes one (--report), opens it, and checks that the page ran
without console errors or exceptions and that the WebGL 3D view drew (the page counts the
non-background pixels it reads back from the canvas). Writes a screenshot of each view
(section) and of the whole page to --screenshots. Exit 77 (ctest: skipped) when no
Chromium is installed.
"""

import argparse
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

VIEWS = ["view-summary", "view-warnings", "view-3d", "view-top", "view-timeline", "view-times",
         "view-hist", "view-numbers"]
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-unsafe-swiftshader", "--hide-scrollbars", "--remote-debugging-pipe"]


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def make_report(vidmap: str, work: Path) -> Path:
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    seq, out = work / "seq", work / "out"
    run = lambda *a: subprocess.run([vidmap, *map(str, a)], check=True, stdout=subprocess.PIPE)
    run("synth", seq, "--frames", 20, "--fps", 4, "--width", 320, "--height", 240)
    run("reconstruct", seq / "rgb.txt", "-o", out, "--width", 0, "--device", "cpu",
        "--sift-first-octave", 0, "--max-features", 1000, "-q")
    assert (out / "report.html").exists(), "vidmap reconstruct wrote no report.html"
    run("report", out, "--groundtruth", seq / "groundtruth.txt")
    return out / "report.html"


class Browser:
    """Chromium with the DevTools protocol on fds 3 (commands in) and 4 (replies out)."""

    def __init__(self, exe: str, profile: str):
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()

        def fds():
            # Copies first: the pipes may already sit on 3 or 4. dup2 leaves them inheritable.
            a, b = os.dup(to_child_r), os.dup(from_child_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.log = open(Path(profile) / "chromium.log", "w+")
        self.proc = subprocess.Popen([exe, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                                     preexec_fn=fds, close_fds=False, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        os.close(to_child_r)
        os.close(from_child_w)
        self.buf = b""
        self.next_id = 0
        self.events = []

    def _read_message(self, deadline):
        while b"\0" not in self.buf:
            if time.time() > deadline:
                raise TimeoutError("no reply from chromium")
            chunk = os.read(self.from_child, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method, params=None, session=None, timeout=60):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.time() + timeout
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def close(self):
        try:
            self.send("Browser.close", timeout=10)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def errors_in(events):
    out = []
    for e in events:
        p = e.get("params", {})
        if e.get("method") == "Runtime.exceptionThrown":
            out.append("exception: " + json.dumps(p.get("exceptionDetails", {}))[:400])
        elif e.get("method") == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            out.append("console.error: " + " ".join(str(a.get("value", a.get("description", "")))
                                                    for a in p.get("args", [])))
        elif e.get("method") == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            out.append("log error: " + p["entry"].get("text", ""))
    return out


def check(report: Path, shots: Path, exe: str) -> int:
    shots.mkdir(parents=True, exist_ok=True)
    profile = tempfile.mkdtemp(prefix="vidmap-chromium-")
    b = Browser(exe, profile)
    failures = []
    try:
        target = b.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        s = b.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            b.send(domain + ".enable", session=s)
        b.send("Emulation.setDeviceMetricsOverride",
               {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False}, session=s)
        b.send("Page.navigate", {"url": report.resolve().as_uri()}, session=s)
        deadline = time.time() + 90
        ready = None
        while time.time() < deadline:
            r = b.send("Runtime.evaluate", {"expression": "document.body && "
                                            "document.body.getAttribute('data-ready')",
                                            "returnByValue": True}, session=s)
            ready = r.get("result", {}).get("value")
            if ready == "1":
                break
            time.sleep(0.25)
        if ready != "1":
            failures.append("the page never finished drawing (data-ready)")
        attrs = b.send("Runtime.evaluate", {"expression": "JSON.stringify({"
                       "pixels: document.body.getAttribute('data-canvas-pixels'),"
                       "errors: document.body.getAttribute('data-errors'),"
                       "text: document.body.getAttribute('data-error-text'),"
                       "shown: document.body.getAttribute('data-points-shown'),"
                       "canvas: [document.getElementById('view3d').width,"
                       "         document.getElementById('view3d').height]})",
                       "returnByValue": True}, session=s)["result"]["value"]
        attrs = json.loads(attrs)
        print(f"report_browser_check: {report}: {attrs}")
        area = attrs["canvas"][0] * attrs["canvas"][1]
        pixels = int(attrs["pixels"] or -1)
        if pixels < 0.01 * area:
            failures.append(f"the 3D view drew {pixels} non-background pixels of {area}")
        if attrs["errors"] != "0":
            failures.append(f"the page's own error log: {attrs['text']}")
        for view in VIEWS + ["page"]:
            if view == "page":
                metrics = b.send("Page.getLayoutMetrics", session=s)["cssContentSize"]
                clip = {"x": 0, "y": 0, "width": metrics["width"], "height": metrics["height"]}
            else:
                r = b.send("Runtime.evaluate", {"expression": f"JSON.stringify((r => ({{x: r.left + "
                           f"scrollX, y: r.top + scrollY, width: r.width, height: r.height}}))("
                           f"document.getElementById('{view}').getBoundingClientRect()))",
                           "returnByValue": True}, session=s)
                clip = json.loads(r["result"]["value"])
            clip["scale"] = 1
            png = base64.b64decode(b.send("Page.captureScreenshot",
                                          {"format": "png", "clip": clip,
                                           "captureBeyondViewport": True}, session=s)["data"])
            if not png.startswith(b"\x89PNG") or len(png) < 1000:
                failures.append(f"screenshot of {view} is empty")
            (shots / f"{view}.png").write_bytes(png)
        failures += errors_in(b.events)
    except Exception as e:
        b.log.seek(0)
        failures.append(f"{type(e).__name__}: {e}; chromium said:\n{b.log.read()[-3000:]}")
    finally:
        b.close()
        shutil.rmtree(profile, ignore_errors=True)
    for f in failures:
        print("report_browser_check: FAIL:", f)
    if not failures:
        print(f"report_browser_check: ok; screenshots in {shots}")
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--report", help="report.html to check (default: make one with --vidmap)")
    ap.add_argument("--vidmap", help="the vidmap tool, to make a report")
    ap.add_argument("--work", default="report_browser_test", help="folder for the made report")
    ap.add_argument("--screenshots", default="report_screenshots")
    a = ap.parse_args()
    exe = find_chromium()
    if not exe:
        print("report_browser_check: SKIP: no chromium (Debian package chromium; "
              "scripts/setup.sh installs it)")
        return 77
    report = Path(a.report) if a.report else make_report(a.vidmap, Path(a.work))
    return check(report, Path(a.screenshots), exe)


if __name__ == "__main__":
    sys.exit(main())
