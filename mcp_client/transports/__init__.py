"""Transports: stdio (a child process), in-memory (a coroutine), and the contract they share with the session."""
