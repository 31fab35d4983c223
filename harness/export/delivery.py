"""Where a run's metrics go: a textfile for node_exporter, and a Pushgateway.

node_exporter's textfile collector reads every ``*.prom`` file of its directory at each
scrape; a file being written must never be seen half-written, so the file is written beside
its destination and renamed over it (rename is atomic within one filesystem).  Each file
holds one inventory's run, and every series carries the inventory's label, so one file per
inventory in the same directory never makes a duplicate series.

A Pushgateway gets the same families with ``PUT /metrics/job/<job>/inventory/<name>/run_id/<id>``
(:func:`push_grouping`): a push replaces only its own run's group, so a partial run, or a run of
another inventory, never wipes another run's series; pushing the same run again replaces it.
The grouping labels become labels of every pushed series; old runs' groups stay until deleted
(``DELETE`` on the same path), and ``harness_run_timestamp_seconds`` tells the newest.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import urllib.error
from pathlib import Path

from prometheus_client.exposition import push_to_gateway

from harness.errors import ConfigError, InfraError
from harness.export.metrics import RunMetrics, inventory_label, registry_of, render_prometheus
from harness.redact import redact_url

__all__ = ["PushError", "push_grouping", "push_to_pushgateway", "write_textfile"]


class PushError(InfraError):
    """The Pushgateway refused the metrics or could not be reached."""


def write_textfile(path: Path, metrics: RunMetrics) -> Path:
    """Write the Prometheus text exposition to ``path`` atomically; returns ``path``."""
    if path.suffix != ".prom":
        raise ConfigError(f"{path}: node_exporter's textfile collector reads only *.prom files")
    if not path.parent.is_dir():
        raise ConfigError(f"{path.parent}: no such directory for the metrics textfile")
    text = render_prometheus(metrics)
    # a dot file: the collector skips it, should it scrape before the rename
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write the metrics textfile: {exc.strerror or exc}") from None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
    return path


def push_grouping(metrics: RunMetrics) -> dict[str, str]:
    """The run's grouping key below ``job``: its inventory and its run id."""
    return {"inventory": inventory_label(metrics.info), "run_id": metrics.info.run_id}


def push_to_pushgateway(url: str, metrics: RunMetrics, *, job: str = "harness", timeout: float = 10.0) -> None:
    """Replace this run's group (``job`` + :func:`push_grouping`) on the Pushgateway at ``url``."""
    shown = redact_url(url)
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"--pushgateway {shown!r}: expected an http:// or https:// URL")
    grouping = push_grouping(metrics)
    try:
        push_to_gateway(url, job=job, registry=registry_of(metrics), grouping_key=grouping, timeout=timeout)
    except (ValueError, http.client.InvalidURL):  # their words would quote the URL's parts, its password too
        raise ConfigError(f"--pushgateway {shown}: not a URL urllib can open (http://host:port)") from None
    except urllib.error.HTTPError as exc:
        raise PushError(f"Pushgateway {shown} refused the push: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise PushError(f"Pushgateway {shown} could not be reached: {exc}") from None
