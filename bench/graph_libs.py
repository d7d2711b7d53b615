"""Graph view library choice: Cytoscape.js vs sigma.js + graphology in headless Chromium, side by side.

Run (the libraries come from npm into a temp dir; nothing of this is vendored except Cytoscape.js):
    tmp=$(mktemp -d)
    npm install --prefix "$tmp" --no-audit --no-fund cytoscape@3.34.4 sigma@3.0.3 graphology@0.26.0
    .venv/bin/python bench/graph_libs.py --node-modules "$tmp/node_modules" [--sizes 300 1000 3000]
For n nodes and 2n random edges (3n elements), per library: the time to build the graph and draw the
first frame with given positions, Cytoscape's own force layout (cose) to first frame, and the mean frame
time of 30 zoom steps. Runs are interleaved (cytoscape, sigma, cytoscape, ...) in one browser; each
measurement is the median of ``--repeat``. sigma draws with WebGL: Chromium's software GL (SwiftShader)
here, the same as in the headless UI tests.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

PAGE = """<!doctype html><html><head><meta charset="utf-8">
<style>html,body{margin:0} #g{width:1200px;height:800px}</style>
<script src="graphology.umd.min.js"></script><script src="sigma.min.js"></script>
<script src="cytoscape.min.js"></script></head><body><div id="g"></div><script>
function data(n) {
  let seed = 7; const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const nodes = [], edges = [];
  for (let i = 0; i < n; i++) nodes.push({id: "n" + i, x: rnd() * 1000, y: rnd() * 1000});
  for (let i = 0; i < 2 * n; i++) {
    edges.push({id: "e" + i, s: "n" + Math.floor(rnd() * n), t: "n" + Math.floor(rnd() * n)});
  }
  return {nodes, edges};
}
const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
async function zoom(step) {
  const t0 = performance.now();
  for (let i = 0; i < 30; i++) { step(i); await frame(); }
  return (performance.now() - t0) / 30;
}
window.runCy = async function (n, layout) {
  const d = data(n); document.getElementById("g").innerHTML = "";
  const t0 = performance.now();
  const cy = cytoscape({container: document.getElementById("g"),
    style: [{selector: "node", style: {width: 8, height: 8}}, {selector: "edge", style: {width: 1}}],
    elements: d.nodes.map((x) => ({data: {id: x.id}, position: {x: x.x, y: x.y}}))
      .concat(d.edges.map((e) => ({data: {id: e.id, source: e.s, target: e.t}}))),
    layout: layout ? {name: "cose", animate: false} : {name: "preset"}});
  await frame(); const first = performance.now() - t0;
  const z = await zoom((i) => cy.zoom({level: 1 + (i % 10) / 10, renderedPosition: {x: 600, y: 400}}));
  cy.destroy(); return {first_frame_ms: first, zoom_frame_ms: z};
};
window.runSigma = async function (n) {
  const d = data(n); document.getElementById("g").innerHTML = "";
  const t0 = performance.now();
  const g = new graphology.Graph({multi: true});
  for (const x of d.nodes) g.addNode(x.id, {x: x.x, y: x.y, size: 3, label: x.id});
  for (const e of d.edges) g.addEdgeWithKey(e.id, e.s, e.t);
  const s = new Sigma(g, document.getElementById("g"));
  await frame(); const first = performance.now() - t0;
  const cam = s.getCamera();
  const z = await zoom((i) => { cam.setState({ratio: 1 / (1 + (i % 10) / 10)}); s.refresh(); });
  s.kill(); return {first_frame_ms: first, zoom_frame_ms: z};
};
</script></body></html>"""

RUN = "const done = arguments[arguments.length - 1]; {} .then(done, (e) => done({{error: String(e)}}));"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-dev-shm-usage",
    "--window-size=1300,900",
    "--enable-unsafe-swiftshader",
    "--use-angle=swiftshader",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--node-modules", type=Path, required=True)
    parser.add_argument("--sizes", type=int, nargs="+", default=[300, 1000, 3000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--cose-max",
        type=int,
        default=1000,
        help="largest n for the cose layout (it is "
        "quadratic: 3,000 nodes ran past the driver's 120 s timeout here)",
    )
    args = parser.parse_args()
    nm = args.node_modules
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shutil.copy(nm / "cytoscape/dist/cytoscape.min.js", root)
        shutil.copy(nm / "sigma/dist/sigma.min.js", root)
        shutil.copy(nm / "graphology/dist/graphology.umd.min.js", root)
        (root / "page.html").write_text(PAGE, encoding="utf-8")
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for flag in FLAGS:
            options.add_argument(flag)
        driver = webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))
        driver.set_script_timeout(600)
        try:
            driver.get((root / "page.html").as_uri())
            sizes = {
                "cytoscape.min.js": (root / "cytoscape.min.js").stat().st_size,
                "sigma.min.js + graphology.umd.min.js": (root / "sigma.min.js").stat().st_size
                + (root / "graphology.umd.min.js").stat().st_size,
            }
            report: dict[str, object] = {"bytes": sizes, "runs": []}
            for n in args.sizes:
                results: dict[str, list[dict[str, float]]] = {
                    "cytoscape preset": [],
                    "cytoscape cose": [],
                    "sigma preset": [],
                }
                for _ in range(args.repeat):
                    run = RUN
                    results["cytoscape preset"].append(
                        driver.execute_async_script(run.format(f"runCy({n}, false)"))
                    )
                    results["sigma preset"].append(driver.execute_async_script(run.format(f"runSigma({n})")))
                    if n <= args.cose_max:
                        results["cytoscape cose"].append(
                            driver.execute_async_script(run.format(f"runCy({n}, true)"))
                        )
                row: dict[str, object] = {"nodes": n, "elements": 3 * n}
                for name, values in results.items():
                    if not values:
                        row[name] = "not run (--cose-max)"
                        continue
                    if any("error" in v for v in values):
                        row[name] = values[0]
                        continue
                    row[name] = {k: round(statistics.median(v[k] for v in values), 1) for k in values[0]}
                report["runs"].append(row)  # type: ignore[attr-defined]
                print(json.dumps(row), flush=True)
            print(json.dumps(report, indent=1))
        finally:
            driver.quit()


if __name__ == "__main__":
    main()
