"""The hub's moving parts: the scheduler, the outcome recorder, actions, the outbox worker and run
watching, wired together by the runtime and driven by what each committed transaction set in
motion."""
