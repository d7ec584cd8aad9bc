"""Launch on GPU hosts over SSH: the only asynchronous I/O of the wizard (asyncssh).

Public names are loaded on first use, so importing `wizard.remote` stays cheap:
`RemoteHost`, `LaunchRequest`, `PreflightRequest`, `HostKeyPolicy`, `SshSettings`,
`UnknownHostKeyError`, `ChangedHostKeyError`, `RemoteError`, `RunWatcher`, `watch_run`,
`RunRecords`, `burst_chunks`, `aburst_chunks`, and the multi-node flow `NodesPlan`, `NodesFlow`
(see docs/multinode.md). See docs/remote.md.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "RemoteHost": "wizard.remote.session",
    "LaunchRequest": "wizard.remote.runs",
    "PreflightRequest": "wizard.remote.preflight",
    "PreflightReport": "wizard.remote.preflight",
    "LogChunk": "wizard.remote.runs",
    "RunStatus": "wizard.remote.runs",
    "StopResult": "wizard.remote.runs",
    "HostKeyPolicy": "wizard.remote.connection",
    "HostSpec": "wizard.remote.connection",
    "SshSettings": "wizard.remote.connection",
    "RemoteError": "wizard.remote.connection",
    "UnknownHostKeyError": "wizard.remote.connection",
    "ChangedHostKeyError": "wizard.remote.connection",
    "NodesPlan": "wizard.remote.nodes_flow",
    "NodesFlow": "wizard.remote.nodes_flow",
    "RunWatcher": "wizard.remote.watch",
    "watch_run": "wizard.remote.watch",
    "RunRecords": "wizard.remote.records",
    "RunRecord": "wizard.remote.records",
    "burst_chunks": "wizard.remote.burst",
    "aburst_chunks": "wizard.remote.burst",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'wizard.remote' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
