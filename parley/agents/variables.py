"""Variables an owner declares for an agent's command brain, stored with the agent.

A variable has a value given by the owner (``--env NAME=VALUE``), or comes from the environment
of the node's server at each turn (``--env-from-server NAME``: the value is never stored, so a
key rotated on the server reaches the next turn). Either way it is shown by name only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from parley.agents.model import Agent, AgentVariable
from parley.brains.environment import MAX_VARIABLES, check_variable_name, check_variable_value
from parley.errors import Invalid
from parley.store import Tx


@dataclass(frozen=True)
class EnvChange:
    values: Mapping[str, str] = field(default_factory=dict)
    from_server: Sequence[str] = ()
    unset: Sequence[str] = ()

    @property
    def is_empty(self) -> bool:
        return not (self.values or self.from_server or self.unset)

    def declared(self) -> list[AgentVariable]:
        """The variables to declare, checked; a name given twice is refused."""
        declared = set(self.values) | set(self.from_server)
        overlap = (set(self.values) & set(self.from_server)) | (set(self.unset) & declared)
        if overlap:
            raise Invalid(
                f"variable {', '.join(sorted(overlap))}: give each name once", field="env"
            )
        for name in self.unset:
            check_variable_name(name)
        given = [
            AgentVariable(check_variable_name(name), check_variable_value(name, value))
            for name, value in self.values.items()
        ]
        taken = [AgentVariable(check_variable_name(name), None) for name in self.from_server]
        return given + list({variable.name: variable for variable in taken}.values())


async def change_env(tx: Tx, agent: Agent, change: EnvChange) -> None:
    """Unset, then declare (replacing what had the same name); at most MAX_VARIABLES remain."""
    declared = change.declared()
    remaining = set(agent.env + agent.env_from_server) - set(change.unset)
    if len(remaining | {variable.name for variable in declared}) > MAX_VARIABLES:
        raise Invalid(f"an agent has at most {MAX_VARIABLES} variables", field="env")
    await tx.agents.unset_variables(agent.id, list(change.unset))
    await tx.agents.set_variables(agent.id, declared)
