"""Plots render without a display; the HTML report is self-contained and
draws every plot in a real browser (headless Chromium)."""

from __future__ import annotations

import base64
import io
import os
import re
import shutil
import subprocess

import matplotlib
import pytest

import ssdlab
from ssdlab import plot
from ssdlab.report import SECTIONS, html_report, write_report


@pytest.fixture(scope="module")
def result(small, mixed):
    return ssdlab.run(small, mixed, seed=2, sample_interval="2ms")


def png_ok(data: bytes) -> None:
    from PIL import Image

    im = Image.open(io.BytesIO(data)).convert("RGB")
    assert im.size[0] > 300 and im.size[1] > 200
    assert len(im.getcolors(1 << 20) or []) > 10, "blank image"


def fig_png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def axis_labels(fig):
    return [(a.get_xlabel(), a.get_ylabel()) for a in fig.axes]


def test_plots_render_headless_with_units(result, small, randread):
    assert matplotlib.get_backend().lower() == "agg"
    figs = {
        "cdf": plot.latency_cdf(result),
        "cdf_many": plot.latency_cdf({"a": result, "b": result}, direction="read", log_x=True),
        "ts": plot.timeseries(result),
        "util": plot.utilisation(result),
    }
    df = ssdlab.sweep(small, randread, grid={"job.iodepth": [1, 4, 16], "nand.channels": [2, 4]}, progress=False)
    figs["qd"] = plot.iops_vs_qd(df, by="nand.channels")
    figs["pareto"] = plot.pareto(df, "read_iops", "read_lat_p99_ns",
                                 front=ssdlab.pareto_front(df, {"read_iops": "max", "read_lat_p99_ns": "min"}))
    for name, fig in figs.items():
        png_ok(fig_png(fig))
        for xl, yl in axis_labels(fig):
            if xl:
                assert "(" in xl, (name, xl)  # a unit on every labelled axis
            if yl:
                assert "(" in yl, (name, yl)
    assert "µs" in figs["cdf"].axes[0].get_xlabel()
    assert "kIOPS" in figs["qd"].axes[0].get_ylabel()


def test_cdf_without_histogram_uses_percentiles(small, randread):
    r = ssdlab.run(small, randread, latency_histogram=False, sample_interval=None)
    png_ok(fig_png(plot.latency_cdf(r)))
    with pytest.raises(ValueError):
        plot.timeseries(r)


def test_save_all_pngs(result, tmp_path):
    out = plot.save_all(result, tmp_path / "png")
    assert set(out) == {"latency_cdf", "utilisation", "timeseries"}
    for p in out.values():
        with open(p, "rb") as f:
            png_ok(f.read())


def test_report_html_sections_and_inlined_images(result, tmp_path):
    text = html_report(result, png_dir=tmp_path / "png")
    for s in SECTIONS:
        assert f'<section id="{s}">' in text, s
    imgs = re.findall(r'<img [^>]*src="data:image/png;base64,([^"]+)"', text)
    assert len(imgs) == 3
    for b in imgs:
        png_ok(base64.b64decode(b))
    assert "http://" not in text and "https://" not in text  # nothing to fetch
    assert "[nand]" in text and "rwmixread=70" in text  # device file and job
    assert sorted(os.listdir(tmp_path / "png")) == ["latency.png", "timeseries.png", "utilisation.png"]
    # from a saved result, and from a core report without inputs (ssdlab run --output-format json)
    p = tmp_path / "r.json"
    result.save(p)
    out = write_report(p, tmp_path / "r.html")
    assert "Latency distribution" in open(out).read()
    core_only = tmp_path / "core.json"
    core_only.write_text(result.to_json().replace('"inputs"', '"_inputs_"'))
    import json

    d = json.loads(result.to_json())
    d.pop("inputs")
    d.pop("timeseries")
    core_only.write_text(json.dumps(d))
    t2 = html_report(core_only)
    assert "Not recorded" in t2 and len(re.findall(r"<img ", t2)) == 2


def _chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        p = shutil.which(name)
        if p:
            return p
    apt = shutil.which("apt-get")
    if apt is None:
        pytest.skip("apt-get is not available, so Debian's chromium cannot be installed: browser check skipped")
    sudo = [] if os.geteuid() == 0 else (["sudo", "-n"] if shutil.which("sudo") else None)
    if sudo is None:
        pytest.skip("not root and no sudo: cannot apt-get install chromium; browser check skipped")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(sudo + [apt, "update", "-q"], check=True, env=env, stdout=subprocess.DEVNULL)
    subprocess.run(sudo + [apt, "install", "-y", "-q", "chromium"], check=True, env=env, stdout=subprocess.DEVNULL)
    p = shutil.which("chromium")
    assert p, "apt-get install chromium did not provide a chromium binary"
    return p


CHECK_JS = """<script>
window.addEventListener("load", function () {
  var im = document.images, ok = 0;
  for (var i = 0; i < im.length; i++) { if (im[i].complete && im[i].naturalWidth > 0) ok++; }
  var m = document.createElement("div");
  m.id = "render-check"; m.textContent = "images:" + im.length + " drawn:" + ok;
  document.body.appendChild(m);
});
</script>"""


def test_report_draws_every_plot_in_headless_chromium(result, tmp_path):
    chromium = _chromium()
    html_path = tmp_path / "report.html"
    write_report(result, html_path)
    probe = tmp_path / "probe.html"
    probe.write_text(html_path.read_text().replace("</body>", CHECK_JS + "</body>"))
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars"]
    dom = subprocess.run(
        [chromium, *flags, "--virtual-time-budget=10000", "--dump-dom", probe.as_uri()],
        capture_output=True, text=True, timeout=180,
    ).stdout
    m = re.search(r"images:(\d+) drawn:(\d+)", dom)
    assert m, "the page's check script did not run"
    assert m.group(1) == m.group(2) == "3", m.group(0)
    shot = tmp_path / "shot.png"
    subprocess.run(
        [chromium, *flags, "--window-size=1100,2400", f"--screenshot={shot}", html_path.as_uri()],
        capture_output=True, timeout=180,
    )
    png_ok(shot.read_bytes())
