"""Devices, jobs, runs and results: round trips, validation errors, GIL and Ctrl-C."""

from __future__ import annotations

import _thread
import json
import pickle
import threading
import time

import pandas as pd
import pytest

import ssdlab
from ssdlab import ConfigError, Device, Job, WorkloadError


def test_presets_load_and_default_is_pm9a3():
    names = ssdlab.presets()
    assert "pm9a3-960g" in names
    for n in names:
        d = Device.preset(n)
        assert d.name == n
        assert d.capacity_bytes > 0
    assert Device.default().name == "pm9a3-960g"
    assert abs(Device.preset("pm9a3-960g").capacity_bytes / 960e9 - 1) < 0.001


def test_unknown_preset_is_a_config_error():
    with pytest.raises(ConfigError) as e:
        Device.preset("nope")
    assert "pm9a3-960g" in str(e.value)


def test_edits_are_validated_and_round_trip(small, tmp_path):
    d = small.with_(nand__channels=8, nand__t_read=["30us"], ftl__gc_policy="cost-benefit")
    assert d.get("nand.channels") == 8
    assert d.get("nand.t_read[0]") == "30us"
    assert d.resolved()["nand"]["channels"] == 8
    assert d.capacity_bytes == 2 * small.capacity_bytes
    # dotted-path dict form, indices included, later values win
    d2 = small.with_({"nand.channels": 2, "nand.t_read[0]": "40us"}).with_({"nand.channels": 8})
    assert d2.get("nand.channels") == 8 and d2.get("nand.t_read[0]") == "40us"
    # TOML round trip: every default filled in, same device
    p = tmp_path / "d.toml"
    d.save(p)
    back = Device.from_toml(p)
    assert back == d and hash(back) == hash(d)
    assert back.resolved() == d.resolved()
    # pickling keeps text and overrides
    assert pickle.loads(pickle.dumps(d)) == d
    assert small.overrides == {} and d.overrides["nand.channels"] == 8
    # shorthands: a key of one section only, one value for a per-page-type list
    pm = Device.preset("pm9a3-960g")
    e = pm.with_(channels=16, nand__t_read="50us")
    assert e.get("nand.channels") == 16 and e.get("nand.t_read") == ["50us"] * 3
    with pytest.raises(ConfigError) as err:
        pm.with_(latency="1us")  # pcie.latency or dram.latency?
    assert err.value.keys == ["latency"] and "pcie.latency" in str(err.value)


def test_every_problem_is_raised_with_its_key_path(small):
    with pytest.raises(ConfigError) as e:
        small.with_(
            {
                "nand.chanels": 8,  # unknown key
                "nand.channels": "many",  # wrong type
                "nand.t_read[3]": "1us",  # index out of range
            }
        )
    err = e.value
    assert err.keys == ["nand.chanels", "nand.channels", "nand.t_read[3]"]
    assert "chanels" in err.problems[0].message
    assert "out of range" in err.problems[2].message
    # value problems found by the core's resolver: all of them, with keys
    with pytest.raises(ConfigError) as e:
        small.with_(pcie__generation=9, ftl__gc_policy="smart", nand__t_erase="3")
    assert set(e.value.keys) == {"pcie.generation", "ftl.gc_policy", "nand.t_erase"}
    assert isinstance(e.value, ValueError)
    # picklable with every field (errors cross process boundaries in sweeps)
    back = pickle.loads(pickle.dumps(e.value))
    assert back.keys == e.value.keys and back.source == e.value.source
    # a value that cannot be written in TOML
    with pytest.raises(ConfigError) as e:
        small.with_(nand__channels=object())
    assert e.value.keys == ["nand.channels"]


def test_bad_toml_file_is_a_config_error(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text('name = "x"\n[nand]\nchannels = \n')
    with pytest.raises(ConfigError) as e:
        Device.from_toml(p)
    assert e.value.source == str(p)
    with pytest.raises(ConfigError):
        Device.from_toml(tmp_path / "missing.toml")


def test_jobs_from_keywords_and_fio_files(tmp_path):
    j = Job("r", rw="randread", bs="4k", iodepth=32, number_ios=1000, time_based=False)
    (spec,) = j.jobs
    assert spec["random"] and spec["read_pct"] == 100 and spec["bs"] == 4096 and spec["iodepth"] == 32
    p = tmp_path / "mixed.fio"
    p.write_text(
        "; comment\n[global]\nioengine=libaio\ndirect=1\nbs=4k\niodepth=32\n"
        "[mixed]\nrw=randrw\nrwmixread=70\nnumber_ios=2000 # inline comment\n"
    )
    f = Job.from_fio(p)
    assert f.name == str(p)
    assert f.jobs[0]["read_pct"] == 70 and f.jobs[0]["iodepth"] == 32
    assert [o for o, _ in f.ignored] == ["ioengine"]  # direct=1 is applied
    assert f.jobs[0]["direct"] is True
    g = f.with_(iodepth=4, rwmixwrite=50, blocksize="8k")
    assert g.jobs[0]["iodepth"] == 4 and g.jobs[0]["read_pct"] == 50 and g.jobs[0]["bs"] == 8192
    assert g.get("iodepth") == "4"
    assert pickle.loads(pickle.dumps(g)) == g
    assert Job.default().jobs[0]["number_ios"] == 1_000_000


def test_workload_errors_name_file_line_and_option(tmp_path):
    p = tmp_path / "bad.fio"
    p.write_text("[a]\nrw=randread\nbogus_option=3\n")
    with pytest.raises(WorkloadError) as e:
        Job.from_fio(p)
    err = e.value
    assert (err.file, err.line, err.option) == (str(p), 3, "bogus_option")
    assert f"{p}:3:" in str(err)
    with pytest.raises(WorkloadError) as e:
        Job(rw="sideways")
    assert e.value.option == "rw"
    err2 = e.value
    back = pickle.loads(pickle.dumps(err2))
    assert (back.file, back.line, back.option, back.message) == (err2.file, err2.line, err2.option, err2.message)
    assert str(back) == str(err2)


def test_a_too_short_sample_interval_is_refused(small, mixed):
    for v in ("1ps", 1e-9):
        with pytest.raises(ValueError, match="sample_interval: .*at least 1us"):
            ssdlab.run(small, mixed, sample_interval=v)


def test_run_result_attributes_dict_and_frames(small, mixed):
    r = ssdlab.run(small, mixed, seed=3, sample_interval="1ms")
    assert r.read.ios + r.write.ios == 20000
    assert r.read.iops > 0 and r.write.iops > 0
    assert 0 < r.read.lat_ns.p50 <= r.read.lat_ns.p99 <= r.read.lat_ns.max
    assert r.report["read"]["iops"] == r.read.iops
    assert r.report["schema"] == "ssdlab.report.v1" and r.seed == 3
    assert r.device_name == "small" and r.precondition == "fill"
    assert 0 <= r.utilisation.die_mean <= 1
    assert r.core_seconds is not None and r.core_seconds > 0
    # one row per direction, all metrics
    df = r.to_pandas()
    assert list(df["direction"]) == ["read", "write"]
    for col in ("iops", "bw_bytes_per_s", "lat_p99_ns", "lat_p99_9_ns", "waf", "gc_runs", "util_die_mean", "seed"):
        assert col in df.columns, col
    assert df.loc[0, "iops"] == r.read.iops
    # time series over simulated time
    ts = r.timeseries
    assert ts.attrs["interval_s"] == pytest.approx(1e-3)
    assert {"t_s", "read_iops", "write_iops", "read_lat_mean_ns", "write_lat_max_ns"} <= set(ts.columns)
    assert len(ts) >= int(r.sim_time_s / 1e-3)
    ios_from_series = ((ts["read_iops"] + ts["write_iops"]) * 1e-3).sum()
    assert ios_from_series == pytest.approx(20000, rel=1e-6)
    # raw latency histogram
    h = r.histogram
    assert set(h["direction"]) == {"read", "write"}
    assert h[h.direction == "read"]["count"].sum() == r.read.ios
    assert h[h.direction == "read"]["cum_fraction"].iloc[-1] == pytest.approx(1.0)
    # flat metrics: the sweep row
    m = r.metrics()
    assert m["read_iops"] == r.read.iops and m["iops"] == pytest.approx(r.read.iops + r.write.iops)


def test_result_save_load_round_trip(small, randread, tmp_path):
    r = ssdlab.run(small, randread, seed=5)
    p = tmp_path / "r.json"
    r.save(p)
    back = ssdlab.Result.load(p)
    assert back.report == r.report
    assert back.inputs["device_toml"] == small.to_toml()
    assert back.inputs["job_fio"] == randread.text
    # the inputs are enough to rerun it
    again = ssdlab.run(
        Device.from_toml_str(back.inputs["device_toml"]),
        Job.from_fio_text(back.inputs["job_fio"], name=randread.name),
        seed=back.inputs["seed"],
    )
    assert again.read.lat_ns == r.read.lat_ns
    with pytest.raises(ValueError):
        p2 = tmp_path / "x.json"
        p2.write_text(json.dumps({"a": 1}))
        ssdlab.Result.load(p2)


def test_runs_are_deterministic_and_options_apply(small, randread):
    a = ssdlab.run(small, randread, seed=11, sample_interval=None, latency_histogram=False)
    b = ssdlab.run(small, randread, seed=11, sample_interval=None, latency_histogram=False)
    c = ssdlab.run(small, randread, seed=12, sample_interval=None, latency_histogram=False)
    strip = lambda r: {k: v for k, v in r.report.items() if k not in ("wall_time_s", "sim_ios_per_wall_s")}
    assert strip(a) == strip(b)
    assert strip(a) != strip(c)
    assert not a.has_timeseries and not a.has_histogram
    with pytest.raises(ValueError):
        a.timeseries
    with pytest.raises(ValueError):
        a.histogram
    assert ssdlab.run(small, randread, precondition="fresh").precondition == "fresh"
    with pytest.raises(ValueError):
        ssdlab.run(small, randread, precondition="warm")


def test_progress_callback_and_bar(small):
    seen = []
    job = Job(rw="randread", bs="4k", iodepth=32, io_size="1t", number_ios=400_000)
    ssdlab.run(small, job, progress=lambda f, n, t: seen.append((f, n, t)), sample_interval=None)
    assert seen and seen[-1][0] == pytest.approx(1.0) and seen[-1][1] == 400_000
    ssdlab.run(small, Job(rw="read", number_ios=1000), progress=True)


# About a minute of wall time if nothing stops it.
LONG = Job("long", rw="randread", bs="4k", iodepth=32, time_based=True, runtime="600s")


def test_run_releases_the_gil(small):
    ticks = []
    done = threading.Event()

    def sim():
        stop = ssdlab.StopFlag()
        t = threading.Timer(1.0, stop.set)
        t.start()
        try:
            ssdlab.run(small, LONG, stop=stop, sample_interval=None)
        except ssdlab.RunStopped:
            pass
        finally:
            done.set()

    th = threading.Thread(target=sim)
    th.start()
    while not done.is_set():
        ticks.append(time.perf_counter())
        time.sleep(0.01)
    th.join()
    # the main thread kept running Python code while the simulation ran
    assert len(ticks) > 30


def test_stop_flag_stops_a_run(small):
    stop = ssdlab.StopFlag()
    threading.Timer(0.3, stop.set).start()
    t0 = time.perf_counter()
    with pytest.raises(ssdlab.RunStopped):
        ssdlab.run(small, LONG, stop=stop)
    assert time.perf_counter() - t0 < 5


def test_ctrl_c_interrupts_a_run(small, sigint_raises):
    threading.Timer(0.3, _thread.interrupt_main).start()
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        ssdlab.run(small, LONG)
    assert time.perf_counter() - t0 < 5


def test_progress_callback_exception_propagates(small):
    def boom(f, n, t):
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        ssdlab.run(small, LONG, progress=boom)


def test_results_frame_concat_is_easy(small, randread):
    rows = [ssdlab.run(small, randread.with_(iodepth=q)).to_pandas().assign(qd=q) for q in (1, 4)]
    df = pd.concat(rows, ignore_index=True)
    assert list(df["qd"]) == [1, 4]
    assert df.loc[1, "iops"] > df.loc[0, "iops"]


def test_report_fields_without_typed_attributes_are_still_attributes_and_columns():
    rep = {"schema": "ssdlab.report.v1", "read": {"ios": 1, "iops": 2.0}, "write": {},
           "power": {"avg_w": 3.5, "components": {"nand": {"avg_w": 1.0}}}, "energy_per_io_j": 1e-5}
    r = ssdlab.Result(rep)
    assert r.power["avg_w"] == 3.5 and r.energy_per_io_j == 1e-5
    m = r.metrics()
    assert m["power_avg_w"] == 3.5 and m["power_components_nand_avg_w"] == 1.0 and m["read_iops"] == 2.0
    with pytest.raises(AttributeError):
        r.no_such_field


def test_device_files_extend_presets_and_files_like_the_cli(tmp_path):
    # The same door as `ssdlab run --device FILE --set ...`: extends chains
    # resolve relative to the file, overrides apply on top, errors name keys.
    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "noplp.toml").write_text(
        'extends = "pm9a3-960g"\n[cache]\npower_loss_protection = false\n')
    (tmp_path / "wide.toml").write_text('extends = "base/noplp.toml"\n[nand]\nchannels = 16\n')
    d = Device.from_toml(tmp_path / "wide.toml")
    pm = Device.preset("pm9a3-960g")
    assert d.name == "wide"  # named after its file
    assert d.get("nand.channels") == 16
    assert d.get("nand.t_read") == pm.get("nand.t_read")
    assert d.get("cache.power_loss_protection") is False
    assert Device.load(str(tmp_path / "wide.toml")) == d
    assert d.with_(channels=4).get("nand.channels") == 4
    (tmp_path / "loop.toml").write_text('extends = "loop.toml"\n')
    with pytest.raises(ConfigError) as e:
        Device.from_toml(tmp_path / "loop.toml")
    assert e.value.keys == ["extends"] and "cycle" in str(e.value)
    with pytest.raises(ConfigError) as e:
        d.with_({"cache.write_buffer": 64})  # a number where a size is wanted
    assert e.value.keys == ["cache.write_buffer"] and "no unit" in str(e.value)


def test_slc_cache_counters_from_python():
    # The 970 EVO preset shrunk to 1/11 of its blocks (15 % spare), a 1 GB static and
    # 2 GB dynamic SLC region: a 4 GiB fill from fresh writes 3 GB into SLC
    # and the rest straight to TLC (no idle time, so nothing is folded).
    dev = Device.preset("970evo-1t").with_(
        nand__blocks_per_plane=128, ftl__over_provisioning="15%", ftl__slc_static="1GB", ftl__slc_dynamic="2GB"
    )
    job = Job.from_fio_text("[w]\nrw=write\nbs=128k\niodepth=32\nsize=4g\n")
    r = ssdlab.run(dev, job, precondition="fresh", sample_interval="100ms")
    s = r.slc
    assert isinstance(s, ssdlab.Slc)
    # Both regions round up to whole SLC blocks per die (8.26 MB each):
    # 4 + 8 blocks x 32 dies = 3.17 GB.
    assert 3e9 <= s.slc_written_bytes <= 3.2e9, s
    assert s.direct_written_bytes > 0 and s.fold_runs == 0
    assert s.slc_written_bytes + s.direct_written_bytes <= 4 << 30
    assert s.occupancy_series_bytes[-1] == s.occupancy_bytes
    # The cache's end shows in the write bandwidth: the first window is faster.
    bw = r.timeseries["write_bw_bytes_per_s"].to_list()
    assert bw[0] > 1.5 * bw[-2]
    # A drive without a cache has no SLC section.
    assert ssdlab.run(Device.preset("pm9a3-960g"), Job.from_fio_text("[r]\nrw=randread\nbs=4k\nnumber_ios=100\n")).slc is None


def test_mapping_cache_counters_and_columns_from_python():
    # 2 MiB of mapping cache on the 960 GB preset: uniform random reads of a
    # filled drive miss almost always (one translation-page read each).
    dev = Device.preset("pm9a3-960g").with_(ftl__mapping_cache="2MiB")
    job = Job.from_fio_text("[r]\nrw=randread\nbs=4k\niodepth=8\nnumber_ios=2000\n")
    r = ssdlab.run(dev, job)
    m = r.mapping
    assert isinstance(m, ssdlab.MappingCache)
    assert (m.cache_bytes, m.cached_pages, m.entries_per_page) == (2 << 20, 512, 1024)
    assert m.lookups == 2000 and m.hit_ratio < 0.1
    assert m.translation_reads == m.lookups - m.hits
    assert r.flash.reads == 2000 + m.translation_reads
    assert r.metrics()["mapping_hit_ratio"] == m.hit_ratio
    assert "Mapping cache: 2.0 MiB (512 of" in r.summary()
    # The default keeps the whole table in DRAM: no section.
    assert ssdlab.run(Device.preset("pm9a3-960g"), job).mapping is None
    with pytest.raises(ssdlab.ConfigError, match="mapping_cache"):
        Device.preset("pm9a3-960g").with_(ftl__mapping_cache="1KiB")


def test_wear_section_from_python():
    # Random writes on a filled, shrunk PM9A3 (TLC: 3,000 rated cycles):
    # the erase counts and the life they imply, as attributes and columns.
    dev = Device.preset("pm9a3-960g").with_(
        nand__channels=1, nand__dies_per_chip=2, nand__blocks_per_plane=256, ftl__over_provisioning="7%", ftl__wear_leveling="static"
    )
    job = Job.from_fio_text("[w]\nrw=randwrite\nbs=4k\niodepth=16\nio_size=1g\nnorandommap\n")
    r = ssdlab.run(dev, job)
    w = r.wear
    assert isinstance(w, ssdlab.Wear)
    assert w.endurance == 3000 and w.erase_min <= w.erase_mean <= w.erase_max and w.erase_max > 0
    assert w.tbw_bytes == pytest.approx(3000 * r.raw_bytes / r.waf, rel=1e-9)
    assert r.metrics()["wear_wl_index"] == w.wl_index
    assert "Wear: erases per block" in r.summary()
    s = r.waf_split
    assert isinstance(s, ssdlab.WafSplit) and s.host_units == r.write.bytes // 4096
    assert s.user + s.gc + s.slc_fold + s.mapping == pytest.approx(r.waf, rel=1e-9)
    assert r.metrics()["waf_split_gc"] == s.gc
    with pytest.raises(ssdlab.ConfigError, match="wear_leveling"):
        Device.preset("pm9a3-960g").with_(ftl__wear_leveling="often")
    # Failed erases retire blocks into replacement blocks.
    r = ssdlab.run(dev.with_(nand__grown_bad_rate="0.5%", ftl__spare_blocks="2%"), job)
    w = r.wear
    assert w.spare_blocks > 0 and 0 < w.grown_bad_blocks == w.spare_blocks_used <= w.spare_blocks
    assert w.retired_at_endurance == 0 and "grown bad" in r.summary()
    # A drive worn out ends the run with the reason.
    with pytest.raises(Exception, match="worn out"):
        ssdlab.run(dev.with_(nand__endurance=1), job)
    with pytest.raises(ssdlab.ConfigError, match="grown_bad_rate"):
        dev.with_(nand__grown_bad_rate="50%")


def test_buffered_io_through_the_page_cache_from_python():
    # A 4 KiB QD1 sequential read with direct=0 goes through the host page
    # cache: readahead sends fewer, larger reads; the second pass never
    # reaches the drive.
    dev = Device.preset("pm9a3-960g").with_(host__memory="1GiB")
    text = "[a]\nrw=read\nbs=4k\ndirect=0\nsize=8m\n[b]\nstonewall\nrw=read\nbs=4k\nbuffered=1\nsize=8m\n"
    r = ssdlab.run(dev, Job.from_fio_text(text), precondition="fill")
    pc = r.page_cache
    assert isinstance(pc, ssdlab.PageCache)
    assert pc.capacity_bytes == (1 << 30) * 3 // 4
    # Every page read is a hit or waited for; the second pass hits all 2048.
    assert pc.hit_pages + pc.miss_pages == 4096 and pc.hit_pages >= 2048
    assert pc.drive_read_requests < 200
    assert 8 << 20 <= pc.read_from_drive_bytes <= (8 << 20) + (256 << 10)
    # A buffered writer faster than a drive (a 128 MiB page cache, so the
    # dirty limit is 25.6 MiB, in front of a drive slowed to under
    # 200 MB/s) is paced by proportional throttling and never reaches the
    # limit; with host.dirty_throttle="hard" it waits there instead.
    small = dev.with_(host__memory="128MiB", host__page_cache_share="100%", nand__t_prog_one_shot="20ms")
    w = Job.from_fio_text("[w]\nrw=write\nbs=64k\ndirect=0\nsize=256m\n")
    pc = ssdlab.run(small, w, precondition="fresh").page_cache
    assert pc.paused_writes > 0 and pc.pause_time_s > 0 and pc.throttled_writes == 0
    assert 0.15 * (128 << 20) < pc.dirty_peak_bytes <= 0.2 * (128 << 20)
    pc = ssdlab.run(small.with_(host__dirty_throttle="hard"), w, precondition="fresh").page_cache
    assert pc.paused_writes == 0 and pc.throttled_writes > 0
    with pytest.raises(ssdlab.ConfigError) as e:
        dev.with_(host__dirty_throttle="smooth")
    assert "host.dirty_throttle" in str(e.value)
    # Direct I/O has no page-cache section; buffered I/O without host memory is refused by key.
    assert ssdlab.run(dev, Job.from_fio_text("[r]\nrw=read\nnumber_ios=10\n")).page_cache is None
    with pytest.raises(ssdlab.WorkloadError) as e:
        ssdlab.run(Device.preset("pm9a3-960g"), Job.from_fio_text("[r]\nrw=read\ndirect=0\nnumber_ios=10\n"))
    assert "host.memory" in str(e.value)


def test_verify_on_the_data_store_from_python():
    # A write job with fio's verify reads back every block it wrote and
    # checks its header and checksum on the data the simulated drive kept.
    job = Job(rw="randwrite", bs="4k", iodepth=8, size="4m", verify="crc32c")
    r = ssdlab.run(Device.preset("pm9a3-960g"), job, precondition="fresh", data_store="memory")
    assert isinstance(r.verify, ssdlab.Verify)
    assert (r.verify.blocks, r.verify.failures) == (1024, 0)
    assert r.read.ios == 1024
    assert isinstance(r.data_store, ssdlab.DataStore)
    assert r.data_store.backing == "memory" and r.data_store.bytes_written == 4 << 20
    # Without a store, verify is refused with how to turn it on.
    with pytest.raises(WorkloadError) as e:
        ssdlab.run(Device.preset("pm9a3-960g"), job, precondition="fresh")
    assert "data_store" in str(e.value)
    with pytest.raises(ValueError):
        ssdlab.run(Device.preset("pm9a3-960g"), job, data_store="")


def test_fio_host_keywords_take_the_devices_host_values():
    # $ncpus and $mb_memory are the simulated host's (host.cores, host.memory).
    job = Job.from_fio_text("[j]\nrw=randread\nbs=$pagesize\nnumjobs=$ncpus\nsize=$mb_memory*4096\nnumber_ios=100\n")
    dev = Device.preset("pm9a3-960g").with_(host__cores=4, host__memory="1GiB")
    r = ssdlab.run(dev, job, precondition="fresh")
    assert r.read.ios == 4 * 100
    assert r.read.bytes == 4 * 100 * 4096
    with pytest.raises(WorkloadError) as e:
        ssdlab.run(Device.preset("pm9a3-960g"), job, precondition="fresh")
    assert "host.cores is 0" in str(e.value)
    # Other mistakes in such a job are still caught when it is made.
    with pytest.raises(WorkloadError):
        Job.from_fio_text("[j]\nrw=bogus\nnumjobs=$ncpus\n")


def test_power_loss_reports_what_was_lost_and_the_recovery(small):
    job = Job("w", rw="randwrite", bs="4k", iodepth=8, number_ios=20000)
    r = ssdlab.run(small, job, power_loss_at="5ms", sample_interval=None)
    rec = r.recovery
    assert isinstance(rec, ssdlab.Recovery)
    assert rec.power_loss_at_s == pytest.approx(0.005)
    assert rec.commands_in_flight == 8
    assert rec.units_lost == rec.units_reverted + rec.units_unmapped
    assert rec.bytes_lost == rec.units_lost * 4096
    assert rec.relocated_units_lost == 0
    assert rec.recovery_time_s > 0 and rec.summary_pages_read > 0
    # seconds as a number mean the same instant
    assert ssdlab.run(small, job, power_loss_at=0.005, sample_interval=None).recovery == rec
    # no power loss: no section
    assert ssdlab.run(small, Job("w", rw="randwrite", bs="4k", number_ios=100)).recovery is None
    # after the run's end: refused with the end time
    with pytest.raises(ssdlab.SimulationError, match="the run ended before it"):
        ssdlab.run(small, job, power_loss_at="100s")
    with pytest.raises(ValueError, match="power_loss_at"):
        ssdlab.run(small, job, power_loss_at="soon")


def test_after_recovery_runs_a_job_on_the_recovered_drive(small):
    job = Job("w", rw="randwrite", bs="4k", iodepth=8, number_ios=20000)
    then = Job("r", rw="randread", bs="4k", iodepth=8, number_ios=3000)
    r = ssdlab.run(small, job, power_loss_at="5ms", after_recovery=then, sample_interval=None)
    assert r.recovery is not None and r.recovery.power_loss_at_s == pytest.approx(0.005)
    after = r.after_recovery
    assert isinstance(after, ssdlab.Result)
    assert after.read.ios == 3000 and after.recovery is None
    assert r.after_recovery is not None and r.after_recovery.flash.reads > 0
    # the same two-part run again: the same results
    again = ssdlab.run(small, job, power_loss_at="5ms", after_recovery=then, sample_interval=None)
    assert again.after_recovery.read.iops == after.read.iops
    with pytest.raises(ssdlab.SimulationError, match="--power-loss-at"):
        ssdlab.run(small, job, after_recovery=then)
    # a second power loss cuts the run after the first recovery
    w = Job("w2", rw="randwrite", bs="4k", iodepth=8, number_ios=20000)
    two = ssdlab.run(small, job, power_loss_at=["5ms", "3ms"], after_recovery=[w, then],
                     sample_interval=None)
    assert two.after_recovery.recovery.power_loss_at_s == pytest.approx(0.003)
    assert two.after_recovery.after_recovery.read.ios == 3000
    with pytest.raises(ValueError, match="after_recovery"):
        ssdlab.run(small, job, power_loss_at=["5ms", "3ms"], sample_interval=None)
    # block and hybrid mapping run on too (their block map rebuilt first)
    bast = ssdlab.run(small.with_(ftl__mapping="bast", ftl__log_blocks=2), job,
                      precondition="fill", power_loss_at="5ms", after_recovery=then,
                      sample_interval=None)
    assert bast.after_recovery.read.ios == 3000
    assert bast.after_recovery.flash.reads > 0


def test_the_data_store_follows_the_power_loss_and_verify_runs_after_it(small):
    # 64 units written with verify headers and flushed, then writes
    # elsewhere until the power fails; the same job with verify_only after
    # recovery reads every flushed unit back.
    a = ("[a]\nrw=randwrite\nbs=4k\niodepth=4\nsize=256k\nverify=crc32c\ndo_verify=0\nend_fsync=1\n")
    b = "[b]\nstonewall\nrw=randwrite\nbs=4k\niodepth=4\noffset=1m\nsize=256k\nloops=500\n"
    first = Job.from_fio_text(a + b)
    then = Job.from_fio_text(a.replace("do_verify=0", "verify_only=1"))
    r = ssdlab.run(small, first, precondition="fresh", data_store="memory", power_loss_at="50ms",
                   after_recovery=then, sample_interval=None)
    assert r.recovery.units_lost > 0
    v = r.after_recovery.verify
    assert v is not None and v.blocks == 64 and v.failures == 0
    # the same with FAST mapping on a filled drive
    fast = small.with_(ftl__mapping="fast", ftl__log_blocks=3)
    r = ssdlab.run(fast, first, precondition="fill", data_store="memory", power_loss_at="50ms",
                   after_recovery=then, sample_interval=None)
    assert r.recovery.units_lost > 0
    v = r.after_recovery.verify
    assert v is not None and v.blocks == 64 and v.failures == 0


def test_power_loss_with_hybrid_mapping_reverts_merges_and_counts_losses(small):
    # BAST on a filled drive: random rewrites fill logs and merge them; the
    # power fails mid-run. Merge copies go back to their intact old places.
    job = Job("w", rw="randwrite", bs="4k", iodepth=8, number_ios=20000)
    dev = small.with_(ftl__mapping="bast", ftl__log_blocks=2)
    r = ssdlab.run(dev, job, precondition="fill", power_loss_at="30ms", sample_interval=None)
    rec = r.recovery
    assert rec.relocated_units_lost == 0
    assert rec.units_lost == rec.units_reverted + rec.units_unmapped
    assert rec.oob_reads > 0 and rec.summary_pages_read == 0
    assert r.merges.full + r.merges.partial + r.merges.switch > 0


def test_limited_capacitors_lose_what_their_energy_does_not_cover():
    # The PM9A3 preset has power-loss protection and a power model: its
    # flush at 20 ms of 4 KiB random writes needs about 5 mJ.
    job = Job("w", rw="randwrite", bs="4k", iodepth=32, number_ios=50000)
    dev = Device.preset("pm9a3-960g")
    full = ssdlab.run(dev, job, precondition="fresh", power_loss_at="20ms", sample_interval=None).recovery
    assert full.units_lost == 0 and full.units_beyond_capacitors == 0
    assert full.capacitor_energy_j is None
    assert full.full_buffer_flush_energy_j > full.capacitor_flush_energy_j > 0
    r = ssdlab.run(
        dev.with_(cache__capacitor_energy="4mJ"), job, precondition="fresh", power_loss_at="20ms", sample_interval=None
    ).recovery
    assert r.capacitor_energy_j == pytest.approx(0.004)
    assert r.capacitor_flush_energy_j <= 0.004
    assert 0 < r.units_saved_by_capacitors < full.units_saved_by_capacitors
    assert r.units_beyond_capacitors == full.units_saved_by_capacitors - r.units_saved_by_capacitors
    assert r.units_lost > 0 and r.units_lost == r.units_reverted + r.units_unmapped
    with pytest.raises(ssdlab.ConfigError, match="cache.capacitor_energy"):
        ssdlab.run(dev.with_(cache__capacitor_energy="0J"), job, precondition="fresh")


def test_checkpoints_are_reported_and_shorten_recovery(small):
    job = Job("w", rw="randwrite", bs="4k", iodepth=8, number_ios=20000)
    ck = small.with_(ftl__checkpoint_interval="1ms")
    r = ssdlab.run(ck, job, power_loss_at="8ms", sample_interval=None)
    c = r.checkpoint
    assert isinstance(c, ssdlab.Checkpoints)
    assert c.interval_s == pytest.approx(0.001)
    assert c.taken >= 6 and c.units_written > 0
    assert c.bytes_written == c.units_written * 4096
    rec = r.recovery
    assert rec.last_checkpoint_s == c.last_complete_s
    assert rec.checkpoint_pages_read > 0
    plain = ssdlab.run(small, job, power_loss_at="8ms", sample_interval=None)
    assert plain.checkpoint is None and plain.recovery.last_checkpoint_s is None
    assert rec.summary_pages_read < plain.recovery.summary_pages_read
    # Checkpoints have their own part of the WAF; the parts add up.
    ws = r.waf_split
    assert ws.checkpoint > 0 and plain.waf_split.checkpoint == 0
    assert ws.user + ws.gc + ws.slc_fold + ws.mapping + ws.checkpoint + ws.merge == pytest.approx(r.waf)
    with pytest.raises(ssdlab.ConfigError, match="checkpoint_interval"):
        ssdlab.run(small.with_(ftl__checkpoint_interval="0s"), job)
    with pytest.raises(ssdlab.ConfigError, match="at least 100us"):
        ssdlab.run(small.with_(ftl__checkpoint_interval="1ps"), job)


def test_hybrid_mapping_reports_its_merges(small):
    job = Job("w", rw="randwrite", bs="4k", iodepth=8, size="8m", number_ios=4000)
    bast = small.with_(ftl__mapping="bast", ftl__log_blocks=2)
    r = ssdlab.run(bast, job, sample_interval=None)
    m = r.merges
    assert isinstance(m, ssdlab.Merges)
    assert m.mapping == "bast" and m.log_blocks == 2
    assert m.full > 0 and m.units_copied > 0 and m.blocks_erased >= m.full
    assert m.mean_ms > 0
    ws = r.waf_split
    assert ws.merge > 0
    assert ws.user + ws.gc + ws.slc_fold + ws.mapping + ws.checkpoint + ws.merge == pytest.approx(r.waf)
    assert r.metrics()["merges_full"] == m.full
    assert f"{m.full} full" in r.summary() and "+ merges" in r.summary()
    page = ssdlab.run(small, job, sample_interval=None)
    assert page.merges is None and page.waf_split.merge == 0
    assert page.waf < r.waf
    with pytest.raises(ssdlab.ConfigError, match="log_blocks"):
        ssdlab.run(small.with_(ftl__mapping="bast"), job)


def test_hybrid_mapping_checkpoints_its_block_map(small):
    # BAST with a checkpoint every 2 ms, the power lost at 20 ms: recovery
    # reads the last checkpoint and scans fewer blocks than without one.
    job = Job("w", rw="randwrite", bs="4k", iodepth=8, number_ios=20000)
    bast = small.with_(ftl__mapping="bast", ftl__log_blocks=2)
    r = ssdlab.run(bast.with_(ftl__checkpoint_interval="2ms"), job, power_loss_at="20ms", sample_interval=None)
    c = r.checkpoint
    assert c.taken >= 1 and c.skipped_no_room == 0
    assert c.bytes_written == c.units_written * 4096
    assert r.recovery.last_checkpoint_s == c.last_complete_s
    assert r.recovery.checkpoint_pages_read > 0
    plain = ssdlab.run(bast, job, power_loss_at="20ms", sample_interval=None)
    assert plain.checkpoint is None
    assert r.recovery.oob_reads < plain.recovery.oob_reads
    assert r.waf_split.checkpoint > 0 and plain.waf_split.checkpoint == 0


def test_a_write_buffer_of_whole_blocks_from_python(small):
    # Random rewrites of 2 MiB at 200 writes/s, written back at the end:
    # the buffer of whole logical blocks coalesces them (fewer merges).
    job = Job("w", rw="randwrite", bs="4k", iodepth=8, size="2m", io_size="4000k",
              norandommap=1, rate_iops=200, end_fsync=1)
    block = small.with_(ftl__mapping="block", cache__write_buffer="1MiB")
    units = ssdlab.run(block, job, sample_interval=None)
    blocks = ssdlab.run(block.with_(cache__write_buffer_unit="block"), job, sample_interval=None)
    assert blocks.write.ios == units.write.ios == 1000
    assert 2 * blocks.merges.full <= units.merges.full
    with pytest.raises(ssdlab.ConfigError, match="write_buffer_unit"):
        ssdlab.run(small.with_(cache__write_buffer_unit="block"), job)


def test_validity_log_is_reported(small):
    job = Job("w", rw="randwrite", bs="4k", iodepth=8, number_ios=20000)
    r = ssdlab.run(small.with_(ftl__validity_log="4KiB"), job, precondition="steady", sample_interval=None)
    v = r.validity_log
    assert isinstance(v, ssdlab.ValidityLog)
    assert v.cache_bytes == 4096 and v.pages >= 1
    assert 0.0 <= v.hit_ratio <= 1.0 and v.loads <= v.pages
    assert r.metrics()["validity_log_pages"] == v.pages
    assert "Validity log:" in r.summary() and "+ validity log" in r.summary()
    ws = r.waf_split
    assert ws.user + ws.gc + ws.slc_fold + ws.mapping + ws.checkpoint + ws.validity + ws.merge == pytest.approx(r.waf)
    assert ssdlab.run(small, job, sample_interval=None).validity_log is None
    with pytest.raises(ssdlab.ConfigError, match="validity_log"):
        ssdlab.run(small.with_(ftl__validity_log="1KiB"), job)
