"""Seed 004 design space: the cheapest controller that meets a target IOPS
and the 192 mW core-power budget, found by sweeping.

"Cheapest" = fewest cores plus accelerator instances. The sweep covers the
ten seed-004 designs and, for the fully accelerated design, every instance
count of the two slowest modules (parse, cache lookup) from 1 to 3.

    python examples/cheapest_controller.py [target_iops]
"""
import sys

import ssdlab

target = float(sys.argv[1]) if len(sys.argv) > 1 else 260_000.0
job = ssdlab.Job(rw="randread", bs="4k", iodepth=32, number_ios=200_000)

candidates = [ssdlab.Device.preset(f"seed004-controller-{n}") for n in range(1, 11)]
base = ssdlab.Device.preset("seed004-controller-9")
acc = {a["stage"]: i for i, a in enumerate(base.config()["controller"]["accelerators"])}
for parse in (1, 2, 3):
    for lookup in (1, 2, 3):
        if (parse, lookup) != (1, 1):
            candidates.append(base.with_({
                f"controller.accelerators[{acc['parse']}].instances": parse,
                f"controller.accelerators[{acc['cache_lookup']}].instances": lookup,
            }))


def cost(dev: ssdlab.Device) -> int:
    c = dev.config()["controller"]
    return sum(g.get("count", 1) for g in c.get("cores", [])) + sum(a.get("instances", 1) for a in c.get("accelerators", []))


df = ssdlab.sweep(None, job, grid={"device": candidates}, progress=False)
df["design"] = [d.name + "".join(f" {k.split('.')[-2]}={v}" for k, v in d.overrides.items()) for d in candidates]
df["units"] = [cost(d) for d in candidates]
df["core_mw"] = df["power_components_cores_avg_w"] * 1e3
df["ok"] = (df["read_iops"] >= target) & df["power_budget_ok"]
cols = ["design", "units", "read_iops", "core_mw", "energy_per_io_j", "ok"]
print(df[cols].sort_values(["units", "read_iops"], ascending=[True, False]).to_string(index=False))
winners = df[df["ok"]].sort_values(["units", "energy_per_io_j"])
if winners.empty:
    print(f"\nno design reaches {target:,.0f} IOPS within the budget")
else:
    w = winners.iloc[0]
    print(f"\ncheapest design meeting {target:,.0f} IOPS and the core budget: {w['design']} "
          f"({w['units']} cores + accelerator instances, {w['read_iops']:,.0f} IOPS, {w['core_mw']:.1f} mW cores)")
