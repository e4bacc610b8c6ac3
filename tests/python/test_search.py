"""Optuna NSGA-II search: finds the known optimum of a small space, resumes, honours constraints."""

from __future__ import annotations

import optuna
import pytest

import ssdlab
from ssdlab import load_trials, pareto_front

SPACE = {"nand.channels": [1, 2, 4], "job.iodepth": [1, 2, 4, 8, 16]}
OBJ = {"read_iops": "max", "read_lat_mean_ns": "min"}


@pytest.fixture(scope="module")
def grid_truth(small, randread):
    """Every point of the 15-point space, by brute force."""
    df = ssdlab.sweep(small, randread, grid=SPACE, backend="sequential", progress=False)
    return df


def test_search_finds_the_known_pareto_front(small, randread, grid_truth, tmp_path):
    db = tmp_path / "s.db"
    front = ssdlab.search(
        small, randread, SPACE, OBJ, n_trials=40, population_size=8, seed=1,
        storage=str(db), workers=2, progress=False,
    )
    truth = pareto_front(grid_truth, OBJ)
    # the true optimum of each objective is on the front found
    assert front["read_iops"].max() == grid_truth["read_iops"].max()
    assert front["read_lat_mean_ns"].min() == grid_truth["read_lat_mean_ns"].min()
    best = front.iloc[0]
    top = grid_truth.loc[grid_truth["read_iops"].idxmax()]
    assert (best["nand.channels"], best["job.iodepth"]) == (top["nand.channels"], top["job.iodepth"])
    # every point found is on the true front
    key = lambda df: set(map(tuple, df[["read_iops", "read_lat_mean_ns"]].round(6).values))
    assert key(front) <= key(truth)
    assert front.attrs["trials"] == 40 and db.exists()
    assert list(front.columns[:3]) == ["trial", "nand.channels", "job.iodepth"]


def test_search_is_resumable(small, randread, tmp_path):
    url = f"sqlite:///{tmp_path / 'r.db'}"
    kw = dict(n_trials=10, population_size=6, seed=3, storage=url, backend="sequential", progress=False)
    a = ssdlab.search(small, randread, SPACE, OBJ, **kw)
    name = a.attrs["study_name"]
    study = optuna.load_study(study_name=name, storage=url)
    assert len(study.trials) == 10
    # the same call again: nothing left to do
    b = ssdlab.search(small, randread, SPACE, OBJ, **kw)
    assert b.attrs["study_name"] == name and len(optuna.load_study(study_name=name, storage=url).trials) == 10
    # a larger budget continues the stored study
    kw["n_trials"] = 16
    c = ssdlab.search(small, randread, SPACE, OBJ, **kw)
    assert len(optuna.load_study(study_name=name, storage=url).trials) == 16
    assert c.attrs["trials"] == 16
    assert len(load_trials(name, url)) == 16


def test_constraints_and_failures(small, randread, tmp_path):
    space = {"nand.channels": [0, 1, 2, 4], "job.iodepth": ssdlab.Int(1, 16, log=True)}
    front = ssdlab.search(
        small, randread, space, {"read_iops": "max"}, constraints=["read_lat_p99_ns <= 150000"],
        n_trials=24, population_size=8, storage=str(tmp_path / "c.db"), workers=2, progress=False,
    )
    assert len(front) >= 1
    assert (front["read_lat_p99_ns"] <= 150000).all()
    trials = load_trials(front.attrs["study_name"], front.attrs["storage"])
    failed = trials[trials["state"] == "FAIL"]
    # channels = 0 is invalid: those trials failed with the config error, none dropped silently
    assert (failed["nand.channels"] == 0).all()
    assert failed["error"].str.contains("nand.channels").all()
    assert front.attrs["failed"] == len(failed)
    # the infeasible trials exist and were kept off the front
    assert (~trials.loc[trials["state"] == "COMPLETE", "feasible"]).any()


def test_float_parameters_with_units(small, randread, tmp_path):
    front = ssdlab.search(
        small, randread, {"nand.t_read[0]": ssdlab.Float(20, 60, unit="us")}, {"read_lat_mean_ns": "min"},
        n_trials=6, storage=str(tmp_path / "f.db"), backend="sequential", progress=False,
    )
    assert 20 <= front.iloc[0]["nand.t_read[0]"] <= 60


def test_search_trials_on_ray(ray_local, small, randread, tmp_path):
    front = ssdlab.search(
        small, randread, SPACE, OBJ, n_trials=6, population_size=4, storage=str(tmp_path / "ray.db"),
        backend="ray", progress=False,
    )
    assert front.attrs["trials"] == 6 and len(front) >= 1
