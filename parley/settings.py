"""Every option of Parley, each with a default and one line of help.

Sources, strongest first: values passed in (CLI flags), ``PARLEY_*`` environment variables,
``parley.toml`` (in the working directory, or the file named by ``PARLEY_CONFIG``), defaults.
Settings are built by the edge (``cli``) and passed in; nothing creates them at import.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from parley import defaults
from parley.datafolder import DataFolder
from parley.errors import Invalid
from parley.naming import NAME_RULE, is_name

LogLevel = Literal["debug", "info", "warning", "error"]


class ThreadBindingSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    spawn_subagent_sessions: bool = Field(
        False,
        description="a spawn asked with thread makes a thread under the requester's"
        " conversation, bound to the subtask: its completion goes there and only there",
    )
    idle_timeout_seconds: float | None = Field(
        None, gt=0, description="a spawned thread's binding ends after this long idle"
    )
    max_age_seconds: float | None = Field(
        None, gt=0, description="a spawned thread's binding ends this long after binding"
    )


class ChannelSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    thread_bindings: ThreadBindingSettings = Field(default_factory=ThreadBindingSettings)


DAY = 24 * 3600.0


class DiscordThreadBindingSettings(ThreadBindingSettings):
    idle_timeout_seconds: float | None = Field(
        DAY, gt=0, description="a bound thread's binding ends after this long idle (24 h)"
    )


class ServiceSettings(ChannelSettings):
    """A chat service Parley connects to: where it is, and how often accounts given a secret
    are looked for."""

    accounts_poll_seconds: float = Field(
        10.0, gt=0, description="how often parley serve looks for accounts given a token"
    )


class DiscordSettings(ServiceSettings):
    thread_bindings: DiscordThreadBindingSettings = Field(
        default_factory=DiscordThreadBindingSettings
    )
    avatar_url: str | None = Field(
        None,
        description="an agent's avatar in bound threads: a URL where {agent} is its name",
    )
    api_base_url: str = Field(
        "https://discord.com/api/v10", description="Discord's REST API (a compatible server's)"
    )
    gateway_url: str = Field(
        "wss://gateway.discord.gg/", description="Discord's gateway (a compatible server's)"
    )
    guild_ready_seconds: float = Field(
        2.0,
        ge=0,
        le=60,
        description="after connecting, how long the bot waits for more servers' data before"
        " it counts as ready and syncs its commands (discord.py's guild_ready_timeout)",
    )


class TelegramSettings(ServiceSettings):
    api_base_url: str = Field(
        "https://api.telegram.org",
        description="the Bot API server (a local telegram-bot-api server's address)",
    )
    poll_timeout_seconds: int = Field(
        25, ge=0, le=50, description="how long one getUpdates long poll waits for news"
    )


class SlackSettings(ServiceSettings):
    api_base_url: str = Field(
        "https://slack.com/api/", description="Slack's Web API (Socket Mode's URL comes from it)"
    )
    once_window: int = Field(
        100,
        ge=1,
        le=999,
        description="recent messages looked through for a post's key before it is posted",
    )


class MatrixSettings(ServiceSettings):
    homeserver_url: str = Field(
        "https://matrix-client.matrix.org", description="the homeserver the bot users live on"
    )
    sync_timeout_seconds: float = Field(
        25.0, ge=0, le=120, description="how long one /sync long poll waits for news"
    )


SERVICES = ("discord", "telegram", "slack", "matrix")


class ChannelsSettings(BaseModel):
    """Per channel; ``PARLEY_CHANNELS__DISCORD__THREAD_BINDINGS__SPAWN_SUBAGENT_SESSIONS=true``
    or ``[channels.discord.thread_bindings]`` in parley.toml."""

    model_config = ConfigDict(extra="forbid")

    web: ChannelSettings = Field(default_factory=ChannelSettings)
    discord: DiscordSettings = Field(default_factory=DiscordSettings)
    telegram: TelegramSettings = Field(default_factory=TelegramSettings)
    slack: SlackSettings = Field(default_factory=SlackSettings)
    matrix: MatrixSettings = Field(default_factory=MatrixSettings)

    def of(self, channel: str) -> ChannelSettings:
        found = getattr(self, channel, None) if channel in ("web", *SERVICES) else None
        return found if isinstance(found, ChannelSettings) else ChannelSettings()


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="PARLEY_", extra="forbid", env_nested_delimiter="__"
    )

    data_dir: Path = Field(
        defaults.DATA_DIR, description="where the store, tokens and workspaces live"
    )
    host: str = Field(defaults.HOST, description="address the HTTP API listens on")
    port: int = Field(defaults.PORT, ge=1, le=65535, description="port the HTTP API listens on")
    database_url: str | None = Field(
        None,
        description="default: SQLite in data_dir/private; postgresql://… for several machines",
    )
    direct_driver: bool = Field(
        True,
        description="run the store's hot statements on sqlite3/asyncpg directly (false: all"
        " through SQLAlchemy, slower; the tests' check that both paths agree)",
    )
    log_level: LogLevel = Field("info", description="debug, info, warning or error")
    access_log: bool = Field(
        False, description="log a line for every HTTP request the server answers (uvicorn's)"
    )
    telemetry: bool = Field(
        False,
        description="OpenTelemetry spans and metrics of the API (FastAPI's) and of A2A calls"
        " (a2a-sdk's), to the providers the environment sets up (opentelemetry-instrument)",
    )
    owner_name: str = Field("owner", description="name of the owner created on first start")
    node_name: str = Field("local", description="name of the node this process hosts")
    broker: str | None = Field(
        None,
        description="the mesh's NATS broker for several machines: nats://HOST:4222 (tls://…,"
        " user:password@); default the in-process broker of one machine",
    )
    insecure_broker: bool = Field(
        False,
        description="let parley serve use a broker that lets anyone in (a laptop only: anyone"
        " who reaches the broker reads every turn); nodes' registrations are still checked",
    )
    local_node: bool = Field(
        True, description="parley serve hosts a node of its own (false: only joined machines)"
    )
    warnings_to_dismiss: int = Field(
        2, ge=1, description="warnings after which an agent is dismissed"
    )
    # A node gone is noticed within seconds (its turns fail, whoever waits on them is told):
    # three heartbeats missed, and a look every quarter of that (mesh/liveness.py).
    heartbeat_seconds: float = Field(
        2.0, gt=0, description="how often a node tells the hub it is alive"
    )
    node_offline_after_seconds: float = Field(
        6.0,
        gt=0,
        description="a node unheard of for this long is offline: its running turns fail",
    )
    sweep_seconds: float = Field(
        5.0, gt=0, description="how often expired clones and drained agents are swept"
    )
    default_brain: str = Field("offline", description="brain of agents hired without --brain")
    brain_idle_seconds: float = Field(
        600.0, gt=0, description="a node closes a model brain's client unused for this long"
    )
    max_brains: int = Field(
        32, ge=1, description="most model brains a node keeps open (the least recently used goes)"
    )
    public_url: str | None = Field(
        None,
        description="the API's address as brains and peer installations reach it;"
        " default http://HOST:PORT",
    )
    openai_base_url: str = Field(
        "https://api.openai.com/v1",
        description="OpenAI-compatible API of openai: brains (Ollama: http://127.0.0.1:11434/v1)",
    )
    openai_api_key: SecretStr | None = Field(None, description="API key for openai: brains")
    anthropic_base_url: str = Field(
        "https://api.anthropic.com", description="API of anthropic: brains"
    )
    anthropic_api_key: SecretStr | None = Field(None, description="API key for anthropic: brains")
    max_body_bytes: int = Field(
        1_000_000,
        ge=1024,
        le=1_000_000_000,
        description="largest request body the API reads; larger ones are answered 413",
    )
    federation_max_frames: int = Field(
        1000, ge=1, le=100_000, description="most frames a peer's batch may hold"
    )
    federation_max_body_bytes: int = Field(
        4 * 1024 * 1024,
        ge=1024,
        le=1_000_000_000,
        description="largest batch of frames (bytes) a peer may send; larger ones get 413",
    )
    federation_send_frames: int = Field(
        500, ge=1, le=100_000, description="most frames this side sends a peer in one batch"
    )
    federation_send_batches: int = Field(
        2,
        ge=1,
        le=8,
        description="batches this side has out to a peer at once, each of other threads",
    )
    federation_queue_limit: int = Field(
        1000,
        ge=1,
        le=10_000_000,
        description="text a connection may hold waiting, each way (to be sent; sent to this"
        " side's agents and not yet taken up), unless `connection limit` set its own",
    )
    a2a_task_timeout_seconds: float = Field(
        600,
        gt=0,
        le=7 * 24 * 3600,
        description="how long a task of an A2A agent (connection add-a2a) may take before it is"
        " cancelled there and the role that sent the text is told",
    )
    a2a_push_allowed_hosts: str = Field(
        "",
        max_length=4000,
        description="hosts (comma-separated) A2A push notifications may go to although they"
        " resolve to a loopback, private or link-local address; others there are refused",
    )
    hop_budget: int = Field(
        200,
        ge=1,
        description="sends, subtasks and node questions agents may set off for one person's"
        " conversation or task (subtasks included) per hop_window_seconds; past it they fail",
    )
    hop_window_seconds: float = Field(
        3600.0, gt=0, description="the window of hop_budget, counted from its first hop"
    )
    stop_grace_seconds: float = Field(
        0.2, ge=0, description="how long a stopped command brain may take to exit before SIGKILL"
    )
    approval_timeout_seconds: float = Field(
        600.0,
        gt=0,
        le=7 * 24 * 3600,
        description="how long a tool call that asks first waits for a person's decision; past"
        " it, it is denied and the turn goes on",
    )
    node_sessions_may_run: bool = Field(
        False,
        description="let owners give a node session the run tool (commands on its node); a"
        " node session answers whoever asks its node, so by default it runs none",
    )
    confine_brains: bool = Field(
        True,
        description="run command brains under Landlock, unable to reach data_dir/private"
        " (false: unconfined, for kernels without Landlock)",
    )
    hidden_from_brains: tuple[Path, ...] = Field(
        (),
        description="more files and folders command brains can neither read nor change (~/.ssh,"
        " a node's credentials), beside data_dir/private and the configuration file",
    )
    web_session_hours: float = Field(
        168.0,
        gt=0,
        le=24 * 366,
        description="how long a sign-in on the web page lasts before the person signs in again",
    )
    auth_failure_burst: int = Field(
        20,
        ge=1,
        le=1_000_000,
        description="failed sign-ins and unknown API tokens one address may make in a row before"
        " it is refused (429) for a while",
    )
    auth_failures_per_minute: float = Field(
        30.0,
        gt=0,
        le=1_000_000,
        description="how fast an address that failed earns its tries back, per minute",
    )
    channels: ChannelsSettings = Field(
        default_factory=ChannelsSettings,
        description="per channel (web, discord, telegram, slack, matrix):"
        " thread_bindings.spawn_subagent_sessions (default false),"
        " thread_bindings.idle_timeout_seconds, thread_bindings.max_age_seconds",
    )

    @field_validator("log_level", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.lower() if isinstance(value, str) else value

    @field_validator("node_name", "owner_name")
    @classmethod
    def _a_name(cls, value: str) -> str:
        if not is_name(value):
            raise ValueError(f"{value!r} is not a name: use {NAME_RULE}")
        return value

    @property
    def resolved_database_url(self) -> str:
        return self.database_url or f"sqlite:///{DataFolder(self.data_dir).database}"

    @property
    def push_allowed_hosts(self) -> list[str]:
        return [h.strip().lower() for h in self.a2a_push_allowed_hosts.split(",") if h.strip()]

    @property
    def base_url(self) -> str:
        return self.public_url or f"http://{self.host}:{self.port}"

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, TomlConfigSettingsSource(settings_cls, config_file()))


def config_file() -> Path:
    """``parley.toml`` in the working directory, or the file ``PARLEY_CONFIG`` names."""
    return Path(os.environ.get("PARLEY_CONFIG", "parley.toml"))


def load_settings(**overrides: Any) -> Settings:
    """Build settings from every source; ``overrides`` (CLI flags) win. None means 'not given'."""
    given = {key: value for key, value in overrides.items() if value is not None}
    try:
        return Settings(**given)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'settings'}: {err['msg']}"
            for err in exc.errors()
        )
        raise Invalid(f"bad settings: {problems}") from exc
    except ValueError as exc:  # e.g. a parley.toml that is not TOML
        raise Invalid(f"bad settings: {exc}") from exc
