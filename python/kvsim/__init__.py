"""kvsim: simulate LLM serving with KV-cache offload (vLLM V1) from Python.

The functions run the same library code as the ``kvsim`` command line and return what its JSON
formats print, parsed: ``run`` (``kvsim run``), ``compare`` (``kvsim compare``),
``check_scenario`` (``kvsim check-scenario``), ``cache_curve`` (``kvsim cache-curve``) and
``catalog`` (``kvsim catalog``). docs/python.md describes them with an example session.

A scenario is given as
  * a path (``str`` or ``os.PathLike``) to a scenario YAML file;
  * a YAML string: a ``str`` that contains a newline or starts with ``{`` (any other ``str`` is a
    path);
  * a ``dict`` of the scenario tree (serialised with ``json.dumps``: JSON is YAML).
Relative paths inside a YAML string or a dict (workload.input_file, workload.trace.file), and the
search for a scenarios/catalog folder, start from the current folder; inside a file, from the
file's folder.

``set`` is a dict of dotted scenario paths to values, applied exactly as the command line's
``--set PATH=VALUE`` (``{"workload.clients.num_clients": 8}`` is
``--set workload.clients.num_clients=8``): a ``str`` value is written as it is, a bool as
true/false, None as null, a number as Python writes it, a list or dict as JSON.

Bad input raises :class:`InputError` (a ``ValueError``); any other failure inside the library
raises ``RuntimeError``. The simulations release the GIL, so threads can run several at once.
"""

import json as _json
import os as _os

from . import _kvsim

__all__ = ["InputError", "Result", "run", "compare", "check_scenario", "cache_curve", "catalog", "__version__"]

__version__ = _kvsim.__version__

InputError = _kvsim.InputError
InputError.__module__ = "kvsim"


class Result(tuple):
    """What :func:`run` returns: ``summary, requests = kvsim.run(...)`` unpacks it.

    ``summary``: dict, the numbers of ``kvsim run --format json`` (docs/results.md).
    ``requests``: the per-request records, with the keys of ``kvsim run --requests-out`` (one
    row per finished request, in completion order): a pandas DataFrame when pandas is
    importable, else a list of dicts.
    ``notes``: list of str, the warnings the command line prints as ``note:`` lines.
    """

    def __new__(cls, summary, requests, notes=()):
        self = super().__new__(cls, (summary, requests))
        self.notes = list(notes)
        return self

    @property
    def summary(self):
        """dict: the numbers of ``kvsim run --format json``."""
        return self[0]

    @property
    def requests(self):
        """The per-request records (pandas DataFrame, or a list of dicts without pandas)."""
        return self[1]

    def __repr__(self):
        return "kvsim.Result(summary=%r, requests=<%d records>)" % (self.summary, len(self.requests))


def _input_error(message):
    """An InputError for a bad argument, as the library raises them (no file, line or column)."""
    err = InputError("error: " + message)
    err.diagnostics = [("", 0, 0, message)]
    return err


def _seed(seed):
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise _input_error("seed: expected an integer in [0, 2^64), got %r" % (seed,))
    return seed


def _table(rows):
    """rows as a pandas DataFrame when pandas is importable, else the list of dicts itself."""
    try:
        import pandas
    except ImportError:
        return rows
    return pandas.DataFrame(rows)


def _set_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return repr(value)
    return _json.dumps(value)


def _sets(set):
    """The --set items "PATH=VALUE" of a dict of dotted paths to values."""
    if set is None:
        return []
    if not isinstance(set, dict):
        raise TypeError("set: expected a dict of dotted scenario paths to values, got %s" % type(set).__name__)
    return ["%s=%s" % (path, _set_value(value)) for path, value in set.items()]


def _json_path(value):
    """json.dumps' fallback: a path (os.PathLike) as its text; anything else is not JSON."""
    if isinstance(value, _os.PathLike):
        return _os.fsdecode(_os.fspath(value))
    raise TypeError("scenario: %s is not a JSON value" % type(value).__name__)


def _source(scenario):
    """The scenario as the binding takes it: a file's path, or YAML text read from the current folder."""
    if isinstance(scenario, dict):
        return {"text": _json.dumps(scenario, default=_json_path), "display_name": "<dict>", "base_dir": _os.getcwd()}
    if isinstance(scenario, str) and ("\n" in scenario or scenario.lstrip().startswith("{")):
        return {"text": scenario, "display_name": "<string>", "base_dir": _os.getcwd()}
    if isinstance(scenario, (str, _os.PathLike)):
        path = _os.fspath(scenario)
        if isinstance(path, bytes):
            path = _os.fsdecode(path)
        return {"path": path}
    raise TypeError("scenario: expected a path, a YAML string or a dict, got %s" % type(scenario).__name__)


def _path(value, what):
    if value is None:
        return ""
    if not isinstance(value, (str, _os.PathLike)):
        raise TypeError("%s: expected a path, got %s" % (what, type(value).__name__))
    return _os.fsdecode(_os.fspath(value))


def run(scenario, set=None, seed=None, trace=None, warmup_percent=None, catalog_dir=None):
    """Simulate a scenario, as ``kvsim run``.

    scenario: a path, a YAML string or a dict (see the module's help).
    set: dict of dotted scenario paths to values, as ``--set PATH=VALUE``.
    seed: root random seed (int >= 0); None: the scenario's.
    trace: replay this request trace instead of the scenario's workload, as ``--trace FILE``.
    warmup_percent: drop the first X % of requests (by start time) from the statistics, as
        ``--warmup-percent``; None: the scenario's first workload.warmup_percentages entry.
    catalog_dir: the catalog folder, as ``--catalog``; None: found as the command line finds it.

    Returns a :class:`Result`: ``summary, requests = kvsim.run(...)``; ``summary`` holds the
    numbers of ``kvsim run --format json`` and ``requests`` the records of ``--requests-out``.
    Nothing is written to files: a scenario's output.requests_out and output.timeseries_out are
    not used. Raises InputError on bad input.
    """
    summary, requests, notes = _kvsim.run(_source(scenario), _sets(set), _seed(seed), _path(trace, "trace"),
                                          warmup_percent, _path(catalog_dir, "catalog_dir"))
    return Result(_json.loads(summary), _table(_json.loads(requests)), notes)


def compare(scenario, variants=None, set=None, seed=None, catalog_dir=None):
    """Run a scenario's KV-tier variants side by side, as ``kvsim compare``.

    scenario: a path, a YAML string or a dict; or a list of paths, each file one variant named by
        its file name's stem (then ``variants`` must be None).
    variants: list of variant specs ``'NAME: path=value, path=value'`` (the command line's
        ``--variant``); None: vram-only, dram, nvme-net when the hardware has a store, no-reuse.
        The first variant is the baseline of the ratios.
    set, seed, catalog_dir: as for :func:`run`, applied to every variant.

    Returns the rows of ``kvsim compare --format json``, one per variant: a pandas DataFrame
    when pandas is importable, else a list of dicts.
    """
    if isinstance(scenario, (list, tuple)):
        sources = [_source(s) for s in scenario]
        if any("path" not in s for s in sources):
            raise TypeError("scenario: a list of scenarios must hold paths")
    else:
        sources = [_source(scenario)]
    if isinstance(variants, str):
        variants = [variants]
    doc = _kvsim.compare(sources, list(variants or []), _sets(set), _seed(seed), _path(catalog_dir, "catalog_dir"))
    # `kvsim compare --format json`'s document: its rows are under "variants".
    return _table(_json.loads(doc)["variants"])


def check_scenario(scenario, set=None, catalog_dir=None):
    """Check a scenario without running it, as ``kvsim check-scenario``.

    Returns a dict: ``name``; ``gpu_kv_cache_tokens`` (KV cache tokens per engine, as vLLM logs
    "GPU KV cache size"); ``num_engines``; ``compute_model`` (the step-time model and why);
    ``notes`` (list of str); ``memory_breakdown`` (list of str: how the KV cache size was
    derived, term by term); ``step_times`` (list of str: where the time of a 128-sequence decode
    and a 2,048-token prefill goes: kernels, collectives, overheads). Raises InputError for a scenario that does not load or cannot run
    (e.g. max_model_len does not fit in the KV cache).
    """
    return _kvsim.check_scenario(_source(scenario), _sets(set), _path(catalog_dir, "catalog_dir"))


def cache_curve(trace, capacities=None, tiers=None, block_tokens=None, model="llama-3.1-8b", policy="lru",
                rules="published", trace_format=None, time_scale=None, rate_scale=None, start=None,
                duration=None, max_requests=None, catalog_dir=None):
    """Timing-free prefix-cache hit rate of a trace against capacity, as ``kvsim cache-curve``.

    trace: path of a request trace (any format kvsim reads; docs/cache-sizing.md).
    capacities: list of capacities, each an int (blocks) or a str: blocks ("4000"), tokens
        ("2Mtok", "40000tok") or bytes of the model's KV ("64GiB"); None: 20 points from 354 to
        256,000 blocks.
    tiers: a tier stack, fastest first, as a list of "NAME=CAPACITY[:lru|arc]" (or a dict of
        name to capacity); exclusive with capacities.
    block_tokens: tokens per trace hash block; None: the trace format's own.
    model: catalog model whose KV bytes size the capacities. policy: "lru" or "arc".
    rules: "published" or "vllm". trace_format, time_scale, rate_scale, start (s), duration (s),
    max_requests: the trace window, as the command line's flags of those names.

    Returns the rows of ``kvsim cache-curve --format json`` (a pandas DataFrame when pandas is
    importable, else a list of dicts): capacity_blocks, capacity_tokens, capacity_bytes, policy,
    rules, token_hit_rate_percent, request_hit_rate_percent, hit_tokens per capacity; for a
    stack, a row per tier and a "total" row, with ``tier`` in place of ``rules``. Hit rates are
    not rounded (the command line prints 4 decimals).
    """
    if isinstance(tiers, dict):
        tiers = ["%s=%s" % (name, cap) for name, cap in tiers.items()]
    rows = _kvsim.cache_curve(_path(trace, "trace"), [str(c) for c in (capacities or [])],
                              [str(t) for t in (tiers or [])], int(block_tokens or 0), model, policy, rules,
                              trace_format or "", time_scale, rate_scale, start, duration, max_requests,
                              _path(catalog_dir, "catalog_dir"))
    return _table(rows)


def catalog(dir=None):
    """The catalog's entries, as ``kvsim catalog`` lists them.

    dir: the catalog folder (gpus.yaml, models.yaml, drives.yaml, storage.yaml), as
    ``--catalog``; None: found as the command line finds it.

    Returns a dict: ``dir`` (the folder read) and ``gpus``, ``models``, ``drives``, ``storage``,
    each a dict from entry name to its fields as the catalog files write them (numbers as int or
    float, quantities with units such as "24GiB" as str).
    """
    return _kvsim.catalog(_path(dir, "dir"))
