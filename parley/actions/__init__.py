"""What a run may do, defined once. ``table`` names each action with its parameters
and help; ``arguments`` checks what a caller gives against it. The brains' tools and prompt, the
wire's action calls, the hub's actions, the API's ``/act`` routes and ``parley act`` are all
derived from here, so no surface can offer an action or a parameter the others lack."""
