"""``net.*`` checks: can local processes talk to each other."""

AREA = "net"
