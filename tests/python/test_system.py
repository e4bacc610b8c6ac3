"""Systems from Python: several RAM-disk drives behind a PCIe switch, per-drive
results, links, sweeps over the system file's keys and over the number of
drives, errors with key paths, pickling."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

import ssdlab
from ssdlab import System

# A RAM-disk drive with no firmware cost: it streams at its link's rate
# (shared with crates/ssdlab-core/tests/system.rs).
STREAM = (Path(__file__).resolve().parents[1] / "data" / "stream-ramdisk.toml").read_text()


@pytest.fixture(scope="module")
def stream() -> ssdlab.Device:
    return ssdlab.Device.from_toml_str(STREAM, "stream.toml")


def switched(dev: ssdlab.Device, n: int, up: int = 8) -> System:
    return System.build(
        drives={f"nvme{i}": dev for i in range(n)},
        switch=dict(upstream_lanes=up, downstream_lanes=4, ports=8),
        root=dict(generation=3, lanes=16),
    )


def reads_on(n: int, ios: int = 2000) -> ssdlab.Job:
    """One sequential 128 KiB reader at QD16 per drive."""
    text = f"[global]\nrw=read\nbs=128k\niodepth=16\nnumber_ios={ios}\n"
    text += "".join(f"[j{i}]\nfilename=nvme{i}\n" for i in range(n))
    return ssdlab.Job.from_fio_text(text, "reads.fio")


def quick(sys_or_dev, job, **kw):
    return ssdlab.run(sys_or_dev, job, precondition="fresh", sample_interval=None, latency_histogram=False, **kw)


def test_a_small_system_runs_and_its_drives_sum_to_the_aggregate(stream):
    sys = switched(stream, 3)
    assert sys.drive_names == ["nvme0", "nvme1", "nvme2"]
    assert sys.name == "3-drive-x8"
    info = sys.info()
    assert [d["attach"] for d in info["drives"]] == ["sw0"] * 3
    assert info["switches"][0]["upstream_lanes"] == 8
    # A random mix on two drives (one job striped over both) and reads on the third.
    job = ssdlab.Job.from_fio_text(
        "[mix]\nrw=randrw\nrwmixread=70\nbs=4k\niodepth=8\nnumber_ios=3000\nfilename=nvme0:/dev/nvme1n1\n"
        "[rd]\nrw=randread\nbs=8k\niodepth=4\nnumber_ios=1500\nfilename=nvme2\n",
        "mix.fio",
    )
    r = quick(sys, job)
    assert r.is_system and set(r.drives) == {"nvme0", "nvme1", "nvme2"}
    assert r.read.ios + r.write.ios == 4500
    for d in ("read", "write"):
        assert sum(getattr(x, d).ios for x in r.drives.values()) == getattr(r, d).ios
        assert sum(getattr(x, d).bytes for x in r.drives.values()) == getattr(r, d).bytes
    # the striped job's I/Os go round robin to its two drives
    n0, n1, n2 = (r.drives[n].read.ios + r.drives[n].write.ios for n in ("nvme0", "nvme1", "nvme2"))
    assert (n0, n1, n2) == (1500, 1500, 1500)
    assert r.drives["nvme2"].write.ios == 0
    # each drive's Result has the attributes of a one-drive result
    d0 = r.drives["nvme0"]
    assert d0.device_name == "stream" and d0.read.lat_ns.p99 > 0 and d0.waf >= 0 and not d0.is_system
    # links: the uplink and one per drive
    names = [link["name"] for link in r.links]
    assert names[0] == "sw0-up" and set(names[1:]) == {"nvme0", "nvme1", "nvme2"}
    lf = r.links_frame()
    assert list(lf["name"]) == names and {"util_up", "util_down", "bytes_up", "lanes"} <= set(lf.columns)
    up = lf.set_index("name")
    assert up.loc["sw0-up", "bytes_up"] == sum(up.loc[f"nvme{i}", "bytes_up"] for i in range(3))
    # DataFrame: aggregate rows are drive "all", then each drive's rows
    df = r.to_pandas()
    assert df.columns[0] == "drive"
    assert list(df["drive"].unique()) == ["all", "nvme0", "nvme1", "nvme2"]
    agg = df[df["drive"] == "all"].set_index("direction")["ios"]
    per = df[df["drive"] != "all"].groupby("direction")["ios"].sum()
    assert agg["read"] == per["read"] and agg["write"] == per["write"]
    # sweep-row metrics: per-drive and per-link columns
    m = r.metrics()
    assert m["drive_nvme2_read_ios"] == 1500 and "link_sw0-up_util_up" in m
    assert "drives" not in m and not any(k.startswith("drives_") for k in m)
    assert "drive nvme2 (stream)" in r.summary() and "link sw0-up" in r.summary()
    # inputs record the system
    assert "[[switch]]" in r.inputs["system_toml"] and set(r.inputs["device_tomls"]) == set(sys.drive_names)


def test_a_device_result_is_unchanged(stream):
    r = quick(stream, ssdlab.Job(rw="randread", bs="4k", iodepth=4, number_ios=500))
    assert not r.is_system and r.drives == {} and r.links == []
    assert "drive" not in r.to_pandas().columns
    assert r.links_frame().empty


def test_presets_files_and_with(tmp_path, stream):
    assert "seed002-4x-gen3-switch" in ssdlab.system_presets()
    p = System.preset("seed002-4x-gen3-switch")
    assert p.drive_names == ["nvme0", "nvme1", "nvme2", "nvme3"]
    assert p.info()["switches"][0]["upstream_lanes"] == 8
    assert System.load("seed002-4x-gen3-switch") == p
    q = p.with_({"switch[0].upstream_lanes": 4}, root_complex__lanes=4)
    assert q.info()["switches"][0]["upstream_lanes"] == 4 and q.info()["root_complex"]["lanes"] == 4
    assert q.overrides == {"switch[0].upstream_lanes": 4, "root_complex.lanes": 4}
    assert "upstream_lanes = 4" in q.to_toml()
    # a bare number where the file wants a time is read as that string: its unit error
    with pytest.raises(ssdlab.ConfigError) as e:
        p.with_({"switch[0].latency": 150})
    assert e.value.keys == ["switch[0].latency"] and "unit" in str(e.value)
    # device overrides on every drive (or one)
    c = p.with_device({"nand.channels": 4})
    assert c.device("nvme3").get("nand.channels") == 4
    one = p.with_device(drive="nvme1", nand__channels=6)
    assert one.device("nvme1").get("nand.channels") == 6 and one.device("nvme0").get("nand.channels") != 6
    # a file with a device file next to it, relative paths as for the CLI
    (tmp_path / "stream.toml").write_text(STREAM)
    (tmp_path / "sys.toml").write_text(
        'name = "two"\n[root_complex]\nports = 2\n'
        '[[drive]]\nname = "a"\ndevice = "stream.toml"\n[[drive]]\nname = "b"\ndevice = "stream.toml"\n'
    )
    f = System.from_toml(tmp_path / "sys.toml")
    assert f.name == "two" and f.drive_names == ["a", "b"] and f.device("a").name == "stream"
    # save() writes the built devices next to the system file; reading it back is the same system
    built = switched(stream, 2)
    built.save(tmp_path / "built.toml")
    assert (tmp_path / "nvme0.toml").exists() and (tmp_path / "nvme1.toml").exists()
    back = System.from_toml(tmp_path / "built.toml")
    job = reads_on(2, 300)
    a, b = quick(built, job), quick(back, job)
    assert a.read.bw_bytes_per_s == b.read.bw_bytes_per_s and a.links == b.links


def test_bad_systems_raise_config_error_with_key_paths(stream):
    p = System.preset("seed002-4x-gen3-switch")
    with pytest.raises(ssdlab.ConfigError) as e:
        p.with_({"switch[0].upstream_lane": 8, "root_complex.lanes": "x8", "switch[3].ports": 2})
    err = e.value
    assert err.kind == "system" and "system description" in str(err)
    assert err.keys == ["switch[0].upstream_lane", "root_complex.lanes", "switch[3].ports"]
    assert "unknown field" in err.problems[0].message and "out of range" in err.problems[2].message
    # values checked as in a file, with the override that set them
    with pytest.raises(ssdlab.ConfigError) as e:
        p.with_({"switch[0].upstream_lanes": 16})
    assert e.value.keys == ["switch[0].upstream_lanes"]
    assert "wider than a root port" in str(e.value) and "set by override switch[0].upstream_lanes = 16" in str(e.value)
    # topology errors in text
    bad = 'name = "bad"\n[[drive]]\nname = "nvme0"\ndevice = "stream.toml"\nattach = "sw9"\nlanes = 3\n'
    with pytest.raises(ssdlab.ConfigError) as e:
        System(bad, "bad.toml", devices={"stream.toml": stream})
    assert set(e.value.keys) == {"drive[0].attach", "drive[0].lanes"} and "sw9" in str(e.value)
    # a drive device that is neither a preset nor a file
    with pytest.raises(ssdlab.ConfigError) as e:
        System.from_toml_str('name = "x"\n[[drive]]\nname = "d"\ndevice = "no-such-drive"\n')
    assert e.value.keys == ["drive[0].device"]
    # a bad device override: under drive[i].device, with the device's key in the message
    with pytest.raises(ssdlab.ConfigError) as e:
        switched(stream, 2).with_device({"pcie.lanes": 3})
    assert e.value.keys == ["drive[0].device", "drive[1].device"] and "pcie.lanes" in e.value.problems[0].message
    with pytest.raises(ssdlab.ConfigError) as e:
        System.preset("no-such-system")
    assert e.value.keys == ["(system)"]
    # an error pickles with its kind (sweep workers send them back)
    again = pickle.loads(pickle.dumps(err))
    assert again.kind == "system" and again.keys == err.keys
    # a job that does not say which drives
    with pytest.raises(ssdlab.WorkloadError) as w:
        quick(switched(stream, 2), ssdlab.Job(rw="read", bs="4k", number_ios=10))
    assert w.value.option == "filename"


def test_pickling_round_trip(stream):
    s = switched(stream, 2).with_({"switch[0].latency": "300ns"}).with_device(drive="nvme1", dram__latency="80ns")
    t = pickle.loads(pickle.dumps(s))
    assert t == s and hash(t) == hash(s)
    assert t.to_toml() == s.to_toml() and t.overrides == s.overrides and t.device_overrides == s.device_overrides
    assert t.device("nvme1").get("dram.latency") == "80ns"
    p = System.preset("seed002-4x-gen3-switch").with_({"root_complex.lanes": 16})
    assert pickle.loads(pickle.dumps(p)) == p
    job = reads_on(2, 200)
    assert quick(s, job).read.bw_bytes_per_s == quick(t, job).read.bw_bytes_per_s


def test_filename_star_is_every_drive(stream):
    sys = switched(stream, 3)
    r = quick(sys, ssdlab.Job(rw="randread", bs="4k", iodepth=12, number_ios=3000, filename="*"))
    assert [r.drives[n].read.ios for n in sys.drive_names] == [1000, 1000, 1000]


def test_sweep_over_uplink_lanes_follows_min_of_drives_and_uplink(stream):
    n = 3
    sys = switched(stream, n)
    df = ssdlab.sweep(sys, reads_on(n), grid={"system.switch[0].upstream_lanes": [2, 4, 8, 16]},
                      precondition="fresh", progress=False)
    assert df.attrs["failed"] == 0, df["error"].tolist()
    assert list(df["system.switch[0].upstream_lanes"]) == [2, 4, 8, 16]
    bw = list(df["read_bw_bytes_per_s"])
    uplink = list(df["link_sw0-up_payload_bw_bytes_per_s"])
    drive = df["link_nvme0_payload_bw_bytes_per_s"].iloc[0]
    assert list(df["link_sw0-up_lanes"]) == [2, 4, 8, 16]
    for got, b in zip(bw, uplink):
        expect = min(n * drive, b)
        assert abs(got / expect - 1) < 0.03, (got, expect)
    # monotone, and capped: x16 carries more than three drives give, x8 less
    assert bw == sorted(bw)
    assert uplink[3] > n * drive > uplink[2]
    assert bw[3] < 1.03 * n * drive
    assert df["link_sw0-up_util_up"].iloc[0] > 0.95  # the x2 uplink is the bottleneck
    # the same point run alone gives the same figures
    r = quick(sys.with_({"switch[0].upstream_lanes": 4}), reads_on(n))
    assert r.read.bw_bytes_per_s == bw[1]


def test_sweep_over_the_number_of_drives_and_device_keys(stream):
    systems = [switched(stream, k, up=16) for k in (1, 2, 4)]
    job = ssdlab.Job(rw="read", bs="128k", iodepth=32, number_ios=2000, filename="*")
    # worker processes: the systems travel as plain data
    df = ssdlab.sweep(None, job, grid={"system": systems, "device.pcie.lanes": [4, 2]},
                      precondition="fresh", progress=False, backend="processes", workers=2)
    assert df.attrs["failed"] == 0, df["error"].tolist()
    assert list(df["system"]) == ["1-drive-x16"] * 2 + ["2-drive-x16"] * 2 + ["4-drive-x16"] * 2
    x4 = df[df["device.pcie.lanes"] == 4]
    bw = list(x4["read_bw_bytes_per_s"])
    assert bw[0] < bw[1] < bw[2] and bw[2] > 3 * bw[0]
    # a device key changes every drive of the system: x2 drive links halve each drive's share
    for k in (1, 2, 4):
        pair = df[df["system"] == f"{k}-drive-x16"].set_index("device.pcie.lanes")
        last = f"nvme{k - 1}"
        assert pair.loc[2, f"link_{last}_lanes"] == 2
        assert pair.loc[2, f"drive_{last}_read_bw_bytes_per_s"] < 0.55 * pair.loc[4, f"drive_{last}_read_bw_bytes_per_s"]
    # the same as a run of that point alone
    r = quick(systems[1].with_device(pcie__lanes=2), job)
    assert r.read.bw_bytes_per_s == df.iloc[3]["read_bw_bytes_per_s"]
    # system keys need a system
    with pytest.raises(ValueError, match="system"):
        ssdlab.sweep(stream, job, grid={"system.root_complex.lanes": [4]}, progress=False)


def test_search_over_a_system_key(stream, tmp_path):
    # Three drives (3 x 3.46 GB/s) behind an uplink of 2-16 lanes: the most
    # read bandwidth needs the x16 uplink; the search finds it like a sweep.
    n = 3
    sys = switched(stream, n)
    front = ssdlab.search(
        sys, reads_on(n, ios=600), {"system.switch[0].upstream_lanes": [2, 4, 8, 16]},
        {"read_bw_bytes_per_s": "max"}, n_trials=10, population_size=4, seed=2,
        storage=str(tmp_path / "sys.db"), precondition="fresh", backend="sequential", progress=False,
    )
    assert front.attrs["failed"] == 0
    assert front.iloc[0]["system.switch[0].upstream_lanes"] == 16
    best = quick(sys.with_({"switch[0].upstream_lanes": 16}), reads_on(n, ios=600))
    assert front.iloc[0]["read_bw_bytes_per_s"] == best.read.bw_bytes_per_s


def test_the_root_complex_memory_port_from_python(stream):
    # root_complex.memory_bandwidth caps what all drives move together, and
    # shows as the link "root-memory"; a bad value is a ConfigError naming it.
    sys = switched(stream, 4, up=16)
    free = quick(sys, reads_on(4)).read.bw_bytes_per_s
    capped = quick(sys.with_(root_complex__memory_bandwidth="2GB/s"), reads_on(4))
    assert free > 4e9 and abs(capped.read.bw_bytes_per_s / 2e9 - 1) < 0.03
    port = next(link for link in capped.links if link["name"] == "root-memory")
    assert port["util_up"] > 0.95 and port["lanes"] == 0
    with pytest.raises(ssdlab.ConfigError) as e:
        sys.with_(root_complex__memory_bandwidth="fast")
    assert "root_complex.memory_bandwidth" in str(e.value)
