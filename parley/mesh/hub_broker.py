"""The hub's connection to the mesh's broker (``parley serve --broker``): only a broker that
authenticates its clients, reached with the hub's own credentials (made by ``parley mesh
broker-config``). A broker that lets an anonymous client in is refused — anyone who reaches it
would read every turn and end any — unless the owner says ``--insecure-broker`` (a laptop),
which is logged as a WARNING at every start."""

from __future__ import annotations

import logging

from parley.broker.nats_broker import CONNECT_TIMEOUT, NatsBroker, lets_anyone_in
from parley.broker.nats_url import parse_nats_url
from parley.datafolder import DataFolder
from parley.errors import Conflict, Unavailable
from parley.mesh.broker_auth import BrokerKeys
from parley.settings import Settings

log = logging.getLogger(__name__)


async def connect_hub(settings: Settings, url: str) -> NatsBroker:
    shown = parse_nats_url(url).shown
    if settings.insecure_broker:
        log.warning(
            "--insecure-broker: the broker at %s is used as it lets this hub in; if it lets"
            " anyone in, anyone who reaches the broker reads every turn (nodes' registrations"
            " are still checked)",
            shown,
        )
        return await NatsBroker.connect(url)
    try:
        anyone = await lets_anyone_in(url, CONNECT_TIMEOUT)
    except Unavailable:
        _hub_keys(settings)  # without them, no broker could have been set up: said first
        raise
    if anyone:
        raise Conflict(
            f"the broker at {shown} lets anyone in (anyone who reaches it would read every"
            " turn): start nats-server with the configuration `parley mesh broker-config`"
            " writes, or pass --insecure-broker on a laptop"
        )
    return await NatsBroker.connect(url, credentials=_hub_keys(settings).hub_creds())


def _hub_keys(settings: Settings) -> BrokerKeys:
    keys = BrokerKeys.load(DataFolder(settings.data_dir))
    if keys is None:
        raise Conflict(
            f"no broker credentials in {settings.data_dir}: run `parley mesh broker-config"
            " --out DIR` on this machine and start nats-server with its file, or pass"
            " --insecure-broker on a laptop"
        )
    return keys
