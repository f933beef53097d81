"""vtoe_sweep: run a design-space sweep of vtoe scenarios, locally or on a Dask cluster.

Use from a script::

    import sys; sys.path.insert(0, "scripts")       # from the repository root
    from vtoe_sweep import load_sweep, points_of, run_sweep

    spec = load_sweep("scripts/sweeps/example.yaml")  # or a dict with the same fields
    for pid, overrides, seed in points_of(spec):
        print(pid, overrides, seed)
    df = run_sweep(spec, jobs=4)                       # pandas.DataFrame, one row per point and VM

API
---
``load_sweep(path) -> Sweep``
    Read and validate a sweep file (format in docs/sweeps.md). Raises ``SweepError`` (a
    ``ValueError``) whose message is one line naming the file and the field.
``sweep_from_dict(data, source="<dict>", sweep_dir=None, default_name=None) -> Sweep``
    The same for a dict (``name`` is then required; a relative ``base`` is looked up in the
    repository root, then in ``sweep_dir``).
``points_of(spec) -> list[Point]``
    The points, in order: the ``grid`` product (last key fastest), then ``points``; each holds
    the ``set`` overrides, each is repeated for every seed in ``seeds``; duplicates dropped.
    A ``Point`` has ``id`` (12 hex digits, stable: a hash of the sorted overrides and the seed),
    ``overrides`` (dict key -> value, in command-line order) and ``seed`` (``None``: the
    scenario's seed); it unpacks as ``(id, overrides, seed)``.
``run_sweep(spec, jobs=None, scheduler=None, out=None, vtoe=None, resume=True,
timeout=3600, quiet=False) -> pandas.DataFrame``
    ``spec``: a ``Sweep``, a path or a dict. Runs every point not already finished in
    ``out`` (default ``out/sweeps/<name>`` under the repository root) with ``jobs`` parallel
    vtoe processes (default: the number of cores), or on the Dask scheduler at ``scheduler``
    (``tcp://HOST:PORT``; each worker must have the repository and the vtoe binary at the same
    path). ``vtoe``: the binary (default: $VTOE_BIN, else
    build/$VTOE_PRESET/app/vtoe, release by default). ``timeout``: seconds per point. Writes
    ``out/points/<id>/{results.json,run.json,scenario.yaml,point.json}``, ``out/failures.json``,
    ``out/results.csv`` and ``out/results.parquet``, and returns the table. A failing point does
    not stop the others; it is listed in ``df.attrs["failures"]`` (dicts with ``point_id``,
    ``overrides``, ``seed``, ``returncode``, ``error``). ``df.attrs["executed"]`` and
    ``df.attrs["skipped"]`` list the ids run now and those resumed from an earlier run.
``gather(spec, out) -> pandas.DataFrame``
    The table from the point directories already in ``out``, without running anything.
``find_vtoe(vtoe=None) -> Path``
    The binary discovery used by ``run_sweep``.

Table columns, in this order: one per override key (named as the key), ``seed``, ``point_id``,
the flattened top-level result fields (``vtoe_version``, ``architecture``, ``sim_time_s``,
``measured_s``, ``toe.tx_mbps``, ``toe.rx_mbps``, ``toe.utilization``, ``links.0.drops``, ``peer.*``
...), ``vm`` (index of the VM), the VM's fields (``vm.name``, ``vm.workload``, ``vm.message_size``,
``vm.tx_mbps``, ``vm.rx_mbps``, ``vm.transactions``, ``vm.mean_latency_us``, ``vm.cpu.guest_user``,
``vm.cpu.guest_kernel``, ``vm.cpu.hypervisor``, ``vm.cpu.idle``, ``vm.interrupts``,
``vm.vm_exits.<cause>``, ...), and ``wall_s`` (from run.json, the only non-deterministic column).
``stats`` and ``channels`` stay in each point's results.json.
"""

from .core import (DEFAULT_TIMEOUT, Point, Sweep, SweepError, find_vtoe, gather, load_sweep,
                   point_id, points_of, result_rows, run_sweep, sweep_from_dict)

__all__ = ["DEFAULT_TIMEOUT", "Point", "Sweep", "SweepError", "find_vtoe", "gather", "load_sweep",
           "point_id", "points_of", "result_rows", "run_sweep", "sweep_from_dict"]
