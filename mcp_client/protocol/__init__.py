"""Era handling: how requests are stamped per protocol version, and how the era is settled with a server."""
