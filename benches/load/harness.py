"""The load harness: drives the same load through direct access, nginx, a bare hyper
pass-through built like icegate's server, and icegate, and prints ratios.

    python3 harness.py --icegate BIN --control BIN --out RESULTS.md [--seconds 5] [--rounds 3]

Loopback only, two cores split as the issue measured them: the load generator (wrk, one
thread) on core 0; the upstream (nginx serving fixed responses) and the proxy under test, each
single-threaded, on core 1. Runs are interleaved: every round runs every target once, in an
order that rotates from round to round, and the figures are medians over rounds.
"""

import argparse
import base64
import datetime
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
AUTH = "Basic " + base64.b64encode(b"bench:x").decode()
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
LOAD_CORE, SERVER_CORE = "0", "1"

# name, path, connections, what it shows
SCENARIOS = [
    ("a", "/v1/namespaces/db/tables/t", 16, "loadTable, ~20 KB with vended credentials, authorized and narrowed"),
    ("b", "/v1/namespaces/db/tables", 16, "listTables, ~120 B, authorized and filtered"),
    ("c", "/v1/namespaces/big/tables", 16, "listTables, 10,000 entries (650 KB), 1,000 hidden by icegate"),
    ("d", "/v1/namespaces/db/tables/big", 4, "loadTable, 5 MB of metadata, credentials rewritten"),
    ("e", "/v1/namespaces/db/tables", 1000, "listTables, 1,000 concurrent keep-alive connections"),
    ("a1", "/v1/namespaces/db/tables/t", 1, "as (a), one connection: added latency"),
    ("b1", "/v1/namespaces/db/tables", 1, "as (b), one connection: added latency"),
]
TARGETS = ["direct", "nginx", "control", "icegate"]
# How long idle connections stay open before their settled RSS is read.
SETTLE_SECONDS = 12

WRK_LUA = """
wrk.headers["Authorization"] = "%s"
wrk.headers["X-Gravitino-Active-Roles"] = "reader"
done = function(summary, latency, requests)
  io.write(string.format('{"requests":%%d,"duration_us":%%d,"p50_us":%%d,"p99_us":%%d,"errors":%%d,"status_errors":%%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.errors.status))
end
""" % AUTH


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_port(port, timeout=20.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"harness: nothing listens on port {port} after {timeout} s")


def tree(pid):
    """`pid` and its children (nginx's master and worker)."""
    pids = [pid]
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if int(fields[1]) == pid:
                    pids.append(int(entry))
            except OSError:
                pass
    return pids


def cpu_seconds(pid):
    total = 0
    for p in tree(pid):
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
        except OSError:
            pass
    return total / CLOCK_TICKS


def status_kb(pid, key):
    total = 0
    for p in tree(pid):
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith(key + ":"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


class Harness:
    def __init__(self, args):
        self.args = args
        self.work = tempfile.mkdtemp(prefix="icegate-load.")
        # nginx's workers drop root for `nobody`, who must read the fixtures.
        os.chmod(self.work, 0o755)
        self.procs = {}
        self.ports = {name: free_port() for name in ["upstream", "nginx", "control", "icegate", "admin"]}

    def start(self, name, argv, port):
        log = open(os.path.join(self.work, f"{name}.log"), "w")
        proc = subprocess.Popen(["taskset", "-c", SERVER_CORE, *argv], stdout=log, stderr=subprocess.STDOUT)
        self.procs[name] = proc
        wait_port(port)

    def setup(self):
        up = self.ports["upstream"]
        subprocess.run([sys.executable, os.path.join(HERE, "fixtures.py"), self.work, str(up)], check=True)
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        self.start("upstream", [nginx, "-p", self.work, "-c", os.path.join(self.work, "upstream.conf")], up)
        conf = os.path.join(self.work, "nginx-proxy.conf")
        with open(conf) as f:
            text = f.read().replace("@PORT@", str(self.ports["nginx"]))
        with open(conf, "w") as f:
            f.write(text)
        self.start("nginx", [nginx, "-p", self.work, "-c", conf], self.ports["nginx"])
        upstream_url = f"http://127.0.0.1:{up}"
        self.start("control", [self.args.control, f"127.0.0.1:{self.ports['control']}", upstream_url],
                   self.ports["control"])
        env_log = os.path.join(self.work, "icegate.log")
        os.environ["ICEGATE_LOG"] = "warn"
        self.start("icegate", [self.args.icegate, "serve", "--config", os.path.join(self.work, "icegate.toml"),
                               "--upstream", upstream_url, "--listen", f"127.0.0.1:{self.ports['icegate']}",
                               "--admin-listen", f"127.0.0.1:{self.ports['admin']}"], self.ports["icegate"])
        del env_log
        self.lua = os.path.join(self.work, "report.lua")
        with open(self.lua, "w") as f:
            f.write(WRK_LUA)
        # Every target must answer every scenario the same way before anything is timed.
        for _, path, _, _ in SCENARIOS:
            for target in TARGETS:
                status, length = self.fetch(target, path)
                if status != 200:
                    raise SystemExit(f"harness: {target} answered {status} to GET {path}")

    def port(self, target):
        return self.ports["upstream" if target == "direct" else target]

    def pid(self, target):
        return self.procs["upstream" if target == "direct" else target].pid

    def fetch(self, target, path):
        import http.client

        c = http.client.HTTPConnection("127.0.0.1", self.port(target), timeout=30)
        c.request("GET", path, headers={"Authorization": AUTH, "X-Gravitino-Active-Roles": "reader"})
        r = c.getresponse()
        body = r.read()
        c.close()
        return r.status, len(body)

    def wrk(self, target, path, connections, seconds):
        url = f"http://127.0.0.1:{self.port(target)}{path}"
        pid = self.pid(target)
        cpu0 = cpu_seconds(pid)
        out = subprocess.run(
            ["taskset", "-c", LOAD_CORE, "wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s",
             "-s", self.lua, url],
            capture_output=True, text=True, check=True)
        cpu = cpu_seconds(pid) - cpu0
        line = [l for l in out.stdout.splitlines() if l.startswith("{")][-1]
        r = json.loads(line)
        r["rps"] = r["requests"] / (r["duration_us"] / 1e6)
        r["cpu_us_per_req"] = cpu * 1e6 / max(r["requests"], 1)
        return r

    def run_scenarios(self):
        results = {}
        for name, path, connections, what in SCENARIOS:
            if self.args.only and name not in self.args.only:
                continue
            runs = {t: [] for t in TARGETS}
            for rnd in range(self.args.rounds):
                order = TARGETS[rnd % len(TARGETS):] + TARGETS[:rnd % len(TARGETS)]
                for target in order:
                    r = self.wrk(target, path, connections, self.args.seconds)
                    if r["errors"] or r["status_errors"]:
                        raise SystemExit(f"harness: {target} had errors in scenario {name}: {r}")
                    runs[target].append(r)
            med = {t: {k: statistics.median(x[k] for x in runs[t]) for k in ["rps", "p50_us", "p99_us",
                                                                                 "cpu_us_per_req"]}
                   for t in TARGETS}
            results[name] = {"path": path, "connections": connections, "what": what, "median": med,
                             "runs": runs}
            print(self.scenario_line(name, med, connections), flush=True)
        return results

    @staticmethod
    def scenario_line(name, med, connections):
        d, n, c, i = (med[t] for t in TARGETS)
        return (f"({name}) c={connections}: rps direct {d['rps']:.0f}, nginx {n['rps']:.0f}, control {c['rps']:.0f}, "
                f"icegate {i['rps']:.0f} | icegate/direct {i['rps'] / d['rps']:.2f}x, /nginx {i['rps'] / n['rps']:.2f}x, "
                f"/control {i['rps'] / c['rps']:.2f}x | p50 us d/n/c/i {d['p50_us']:.0f}/{n['p50_us']:.0f}/"
                f"{c['p50_us']:.0f}/{i['p50_us']:.0f} | cpu us/req n/c/i {n['cpu_us_per_req']:.1f}/"
                f"{c['cpu_us_per_req']:.1f}/{i['cpu_us_per_req']:.1f}")

    def idle_connections(self, count=1000):
        """RSS of each proxy with `count` keep-alive connections open after one request each."""
        out = {}
        request = (f"GET /v1/namespaces/db/tables HTTP/1.1\r\nHost: x\r\nAuthorization: {AUTH}\r\n\r\n").encode()
        for target in ["nginx", "control", "icegate"]:
            pid = self.pid(target)
            before = status_kb(pid, "VmRSS")
            socks = []
            for _ in range(count):
                s = socket.create_connection(("127.0.0.1", self.port(target)))
                s.sendall(request)
                socks.append(s)
            for s in socks:
                data = b""
                while b"\r\n\r\n" not in data:
                    data += s.recv(65536)
                head, rest = data.split(b"\r\n\r\n", 1)
                length = int([h.split(b":")[1] for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")][0])
                while len(rest) < length:
                    rest += s.recv(65536)
            time.sleep(0.5)
            with_idle = status_kb(pid, "VmRSS")
            # Just after the burst the allocator still holds the pages of 1,000 requests in
            # flight at once; an idle sidecar has given them back (jemalloc's dirty pages decay
            # within 10 s by default), so the settled figure is the idle one.
            time.sleep(SETTLE_SECONDS)
            settled = status_kb(pid, "VmRSS")
            for s in socks:
                s.close()
            out[target] = {"rss_kb_before": before, "rss_kb_idle": with_idle, "rss_kb_settled": settled}
            print(f"idle: {target} RSS {before / 1024:.1f} MB, with {count} idle keep-alive connections "
                  f"{with_idle / 1024:.1f} MB, {settled / 1024:.1f} MB {SETTLE_SECONDS} s later", flush=True)
        return out

    def stream(self, path="/v1/namespaces/db/views/v"):
        """Streams the 1 GB loadView body through each proxy, sampling RSS."""
        out = {}
        for target in ["nginx", "control", "icegate"]:
            pid = self.pid(target)
            before = status_kb(pid, "VmRSS")
            peak = [before]
            stop = threading.Event()

            def sample():
                while not stop.is_set():
                    peak[0] = max(peak[0], status_kb(pid, "VmRSS"))
                    time.sleep(0.02)

            t = threading.Thread(target=sample)
            t.start()
            start = time.time()
            res = subprocess.run(["taskset", "-c", LOAD_CORE, "curl", "-s", "-o", "/dev/null", "-w", "%{http_code} %{size_download}",
                                  "-H", f"Authorization: {AUTH}", f"http://127.0.0.1:{self.port(target)}{path}"],
                                 capture_output=True, text=True, check=True)
            took = time.time() - start
            stop.set()
            t.join()
            status, size = res.stdout.split()
            if status != "200" or int(size) != 1 << 30:
                raise SystemExit(f"harness: streaming through {target}: {res.stdout}")
            out[target] = {"rss_kb_before": before, "rss_kb_peak": peak[0], "seconds": took}
            print(f"stream: {target} 1 GiB in {took:.2f} s ({1024 / took:.0f} MiB/s), RSS {before / 1024:.1f} MB "
                  f"-> peak {peak[0] / 1024:.1f} MB", flush=True)
        return out

    def peak_rss(self):
        return {t: status_kb(self.pid(t), "VmHWM") for t in ["nginx", "control", "icegate"]}

    def stop(self):
        for p in self.procs.values():
            p.terminate()
        for p in self.procs.values():
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(self.work, ignore_errors=True)


def machine():
    model = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    tools = []
    # the policy figures alone (`--only policy`) run without nginx and wrk installed
    for argv, stream in [(["nginx", "-v"], "stderr"), (["wrk", "-v"], "stdout")]:
        if shutil.which(argv[0]):
            out = getattr(subprocess.run(argv, capture_output=True, text=True), stream).strip().splitlines()
            tools.extend(out[:1])
    return "; ".join([f"{os.cpu_count()} cores ({model}), {platform.system()} {platform.release()}", *tools])


POLICY_SIZES = [(100_000, 0.25, 64), (1_000_000, 2.5, 400)]
POLICY_SYNTAXES = ["json", "yaml"]


def policy_load(args):
    """`icegate check` on the generated policies of 100,000 and 1,000,000 grants (issue 18's
    targets), written in JSON (the loader's JSON path) and in YAML: wall time and peak RSS, the
    median of three runs (one for the largest)."""
    out = {}
    work = os.path.join(os.path.dirname(args.icegate), "..", "load")
    os.makedirs(work, exist_ok=True)
    for syntax in POLICY_SYNTAXES:
        for grants, _, _ in POLICY_SIZES:
            path = os.path.join(work, f"policy-{grants}.{syntax}")
            if not os.path.exists(path):
                # the generator picks the syntax by the name's extension: keep it last
                tmp = os.path.join(work, f"tmp-policy-{grants}.{syntax}")
                subprocess.run([args.policy_gen, str(grants), tmp], check=True, capture_output=True)
                os.rename(tmp, path)
            runs = []
            for _ in range(1 if grants >= 1_000_000 else 3):
                timed = subprocess.run(["/usr/bin/time", "-f", "%e %M", args.icegate, "check", "--policy", path],
                                       capture_output=True, text=True)
                if timed.returncode != 0:
                    raise SystemExit(f"icegate check failed on {path}: {timed.stderr[-2000:]}")
                wall, rss_kb = timed.stderr.strip().splitlines()[-1].split()
                runs.append((float(wall), int(rss_kb)))
            runs.sort()
            wall, _ = runs[len(runs) // 2]
            out[f"{grants} {syntax}"] = {"bytes": os.path.getsize(path), "wall_s": wall,
                                         "peak_rss_kb": max(r for _, r in runs), "runs": len(runs)}
    out["reload"] = policy_reload(args, os.path.join(work, f"policy-{POLICY_SIZES[0][0]}.json"))
    return out


def policy_reload(args, source, reloads=5):
    """`icegate serve` on the `source` policy, reloaded `reloads` times by SIGHUP, each time
    with new text (a full load): VmRSS after start and after each reload, and VmHWM at the end.
    A reload keeps at most the old and the new snapshot alive, so the peak stays near one load
    above the served snapshot and the RSS does not grow with the number of reloads."""
    import signal
    import urllib.error
    import urllib.request

    work = tempfile.mkdtemp(prefix="icegate-reload.")
    policy = os.path.join(work, os.path.basename(source))
    shutil.copyfile(source, policy)
    conf = os.path.join(work, "icegate.toml")
    with open(conf, "w") as f:
        f.write(f'policy = "{policy}"\n[audit]\nenabled = false\n[owners]\nstore = "off"\n'
                f'[reload]\nwatch = false\ndebounce_ms = 0\n')
    port, admin = free_port(), free_port()
    proc = subprocess.Popen([args.icegate, "serve", "--config", conf, "--upstream", "http://127.0.0.1:9",
                             "--listen", f"127.0.0.1:{port}", "--admin-listen", f"127.0.0.1:{admin}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def generation():
        try:
            body = urllib.request.urlopen(f"http://127.0.0.1:{admin}/readyz", timeout=5).read()
        except urllib.error.HTTPError as e:  # 503 while the (absent) upstream is unreachable
            body = e.read()
        return json.loads(body)["policy"]["generation"]

    try:
        wait_port(admin, timeout=60)
        rss = [status_kb(proc.pid, "VmRSS")]
        for i in range(reloads):
            with open(policy, "a") as f:
                f.write("\n")  # new text, the same policy: loaded in full
            os.kill(proc.pid, signal.SIGHUP)
            deadline = time.time() + 60
            while generation() != i + 2:
                if time.time() > deadline:
                    raise SystemExit(f"harness: reload {i + 1} of {policy} did not take effect in 60 s")
                time.sleep(0.05)
            rss.append(status_kb(proc.pid, "VmRSS"))
        return {"bytes": os.path.getsize(source), "reloads": reloads, "rss_kb": rss,
                "peak_rss_kb": status_kb(proc.pid, "VmHWM")}
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(work, ignore_errors=True)


def report(args, results, idle, stream, peak, policy=None):
    lines = []
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines.append("# Load harness results\n")
    lines.append(f"Machine: {machine()}  ")
    lines.append(f"Date: {now}; {args.rounds} interleaved rounds of {args.seconds} s per target and scenario; "
                 f"medians over rounds. wrk -t1 on core 0; upstream (nginx, fixed responses) and the proxy under "
                 f"test single-threaded on core 1.  ")
    lines.append(f"1-minute load average {args.load[0]:.2f} before the scenarios, {args.load[1]:.2f} after "
                 f"(the harness alone keeps both cores busy, about 2; well above that, other work shared them).  ")
    lines.append("Command: `bash benches/load/run.sh`\n")
    if results:
        lines.append("| scenario | conns | direct rps | nginx rps | control rps | icegate rps | icegate / direct | "
                     "icegate / nginx | icegate / control | p50 µs d / n / c / i | p99 µs d / n / c / i | "
                     "CPU µs/req n / c / i |")
        lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, r in results.items():
        d, n, c, i = (r["median"][t] for t in TARGETS)
        lines.append(
            f"| ({name}) {r['what']} | {r['connections']} | {d['rps']:.0f} | {n['rps']:.0f} | {c['rps']:.0f} | "
            f"{i['rps']:.0f} | {i['rps'] / d['rps']:.2f}× | {i['rps'] / n['rps']:.2f}× | {i['rps'] / c['rps']:.2f}× | "
            f"{d['p50_us']:.0f} / {n['p50_us']:.0f} / {c['p50_us']:.0f} / {i['p50_us']:.0f} | "
            f"{d['p99_us']:.0f} / {n['p99_us']:.0f} / {c['p99_us']:.0f} / {i['p99_us']:.0f} | "
            f"{n['cpu_us_per_req']:.1f} / {c['cpu_us_per_req']:.1f} / {i['cpu_us_per_req']:.1f} |")
    for one in ["a1", "b1"]:
        if one in results:
            m = results[one]["median"]
            d = m["direct"]["p50_us"]
            lines.append("")
            lines.append(f"Added p50 at one connection ({one}): nginx +{m['nginx']['p50_us'] - d:.0f} µs, control "
                         f"+{m['control']['p50_us'] - d:.0f} µs, icegate +{m['icegate']['p50_us'] - d:.0f} µs.")
    if idle:
        lines.append("")
        lines.append("Idle keep-alive connections (RSS of a fresh process, before the scenarios; with 1,000 "
                     "connections open after one request each, just after their burst and "
                     f"{SETTLE_SECONDS} s later, once idle): " + "; ".join(
            f"{t} {v['rss_kb_before'] / 1024:.1f} MB → {v['rss_kb_idle'] / 1024:.1f} MB → "
            f"{v.get('rss_kb_settled', v['rss_kb_idle']) / 1024:.1f} MB"
            for t, v in idle.items()) + ".")
    if stream:
        lines.append("")
        lines.append("A 1 GiB loadView body streamed through (RSS before → peak during): " + "; ".join(
            f"{t} {v['rss_kb_before'] / 1024:.1f} → {v['rss_kb_peak'] / 1024:.1f} MB in {v['seconds']:.2f} s"
            for t, v in stream.items()) + ".")
    if peak:
        lines.append("")
        lines.append("Peak RSS over the whole run (VmHWM): " + "; ".join(
            f"{t} {kb / 1024:.1f} MB" for t, kb in peak.items()) + ".")
    if policy:
        lines.append("")
        lines.append("| policy load: `icegate check` | syntax | size | wall | peak RSS | target |")
        lines.append("|---|---|---|---|---|---|")
        for syntax in POLICY_SYNTAXES:
            for grants, wall_target, rss_target in POLICY_SIZES:
                v = policy.get(f"{grants} {syntax}")
                if v:
                    met = "met" if v["wall_s"] <= wall_target and v["peak_rss_kb"] / 1024 <= rss_target else "MISSED"
                    lines.append(f"| {grants:,} grants (median of {v['runs']}) | {syntax.upper()} | "
                                 f"{v['bytes'] / 1e6:.1f} MB | {v['wall_s']:.2f} s | {v['peak_rss_kb'] / 1024:.0f} MB | "
                                 f"≤ {wall_target} s and ≤ {rss_target} MB: {met} |")
        r = policy.get("reload")
        if r:
            lines.append("")
            lines.append(f"Reloads of the {POLICY_SIZES[0][0]:,}-grant JSON policy in `icegate serve` (SIGHUP, new text each "
                         f"time): RSS after start {r['rss_kb'][0] / 1024:.0f} MB, after each of {r['reloads']} reloads "
                         + ", ".join(f"{kb / 1024:.0f}" for kb in r["rss_kb"][1:])
                         + f" MB; peak (VmHWM) {r['peak_rss_kb'] / 1024:.0f} MB.")
    text = "\n".join(lines) + "\n"
    with open(args.out, "w") as f:
        f.write(text)
    if results and not args.only:
        append_history(args, now, results)
    with open(os.path.splitext(args.out)[0] + ".json", "w") as f:
        json.dump({"results": results, "idle": idle, "stream": stream, "peak_rss_kb": peak, "policy_load": policy},
                  f, indent=1)
    print(text)


HISTORY_HEAD = """# Load harness history

One row per full run of `bash benches/load/run.sh` (the harness appends it; `results.md` holds the
last run whole): icegate's throughput over the bare control's for each scenario, and the added
p50 at one connection of the small list, icegate's over the control's (issue 18's targets:
(a) >= 0.8x, (b) >= 0.85x, b1's added p50 <= 1.5x). The commit is the one the binaries were
built from (`+` when the tree had uncommitted changes); the rows before 2026-12-03 evening,
added from git history, name the commit that recorded the run.

| date | commit | load avg before / after | (a) | (b) | (c) | (d) | (e) | (a1) | (b1) | b1 added p50 |
|---|---|---|---|---|---|---|---|---|---|---|
"""


def append_history(args, now, results):
    """Appends this run's ratios to history.md beside the results file."""
    path = os.path.join(os.path.dirname(os.path.abspath(args.out)), "history.md")
    try:
        commit = subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", HERE, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        # The run's own results are written before this row; they do not make the build dirty.
        own = ("benches/load/results.md", "benches/load/results.json", "benches/load/history.md")
        dirty = [line for line in dirty.splitlines() if not line.endswith(own)]
        commit += "+" if dirty else ""
    except (OSError, subprocess.CalledProcessError):
        commit = "?"
    ratios = []
    for name in ["a", "b", "c", "d", "e", "a1", "b1"]:
        r = results.get(name)
        ratios.append(f"{r['median']['icegate']['rps'] / r['median']['control']['rps']:.2f}×" if r else "")
    added = ""
    if "b1" in results:
        m = results["b1"]["median"]
        d = m["direct"]["p50_us"]
        added = f"{(m['icegate']['p50_us'] - d) / max(m['control']['p50_us'] - d, 1):.2f}×"
    row = f"| {now} | {commit} | {args.load[0]:.2f} / {args.load[1]:.2f} | " + " | ".join(ratios) + f" | {added} |\n"
    new = not os.path.exists(path)
    with open(path, "a") as f:
        if new:
            f.write(HISTORY_HEAD)
        f.write(row)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--icegate", required=True)
    p.add_argument("--control", required=True)
    p.add_argument("--policy-gen", required=True, help="the policy_gen example, for the policy-load figures")
    p.add_argument("--out", required=True)
    p.add_argument("--seconds", type=int, default=5)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--only", nargs="*", help="scenario names to run (default: all; `policy` for the policy load)")
    args = p.parse_args()
    if args.only == ["policy"]:
        # the policy figures alone need neither the servers nor wrk
        args.load = (os.getloadavg()[0],) * 2
        policy = policy_load(args)
        args.load = (args.load[0], os.getloadavg()[0])
        report(args, {}, {}, {}, {}, policy)
        return
    h = Harness(args)
    try:
        h.setup()
        load_before = os.getloadavg()[0]
        # Memory first, on processes that have served only the warm-up requests: what 1,000
        # idle connections and a streamed gigabyte cost, not what earlier scenarios left behind.
        idle = h.idle_connections() if not args.only else {}
        stream = h.stream() if not args.only else {}
        results = h.run_scenarios()
        args.load = (load_before, os.getloadavg()[0])
        policy = policy_load(args) if not args.only or "policy" in args.only else None
        report(args, results, idle, stream, h.peak_rss(), policy)
    finally:
        h.stop()


if __name__ == "__main__":
    main()
