"""How to reach a node (:class:`SshSpec`): the transport's own input, which the inventory embeds
in every node (``nodes.<name>.ssh``).  Host keys are always checked against ``known_hosts``;
keys are referenced by path or environment variable name, never inlined."""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator, Field, StrictBool, StrictInt, StrictStr

from harness.fields import AbsPath, Duration, FrozenModel
from harness.remote.endpoints import ssh_host

__all__ = ["ENV_NAME_PATTERN", "SshHost", "SshSpec"]

ENV_NAME_PATTERN = r"^[A-Z_][A-Z0-9_]{0,63}$"
# compared as what it means, stored in one spelling (harness.remote.endpoints)
SshHost = Annotated[StrictStr, BeforeValidator(ssh_host), Field(max_length=253, pattern=r"^[a-z0-9.:-]+$")]


class SshSpec(FrozenModel):
    """How to reach a node.  Host keys are always checked against ``known_hosts``."""

    host: SshHost = Field(description="host name or IP address; DB1.example.com. and db1.example.com are one host")
    port: StrictInt = Field(22, ge=1, le=65535)
    user: StrictStr = Field("root", pattern=r"^[a-z_][a-z0-9_-]{0,31}$")
    key: AbsPath | None = Field(None, description="path of the private key file (mode 0600); never the key itself")
    key_env: Annotated[StrictStr, Field(pattern=ENV_NAME_PATTERN)] | None = Field(
        None, description="name of an environment variable holding the key file path"
    )
    known_hosts: AbsPath = Field(description="pinned host keys; unknown or changed keys are refused")
    sudo: StrictBool = Field(False, description="run privileged commands with sudo -n (no password prompt)")
    netns: Annotated[StrictStr, Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")] | None = Field(
        None, description="open the TCP connection from inside this network namespace (the embedded lab)"
    )
    connect_timeout: Duration = Field(10.0, gt=0, le=300)
