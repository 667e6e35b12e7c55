"""Agents as persistent employees: hiring, lifecycle, templates, policy, memory."""
