"""``dist.*`` checks: debug mode and the timeouts in effect."""

AREA = "dist"
