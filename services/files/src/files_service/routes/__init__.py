"""HTTP routes: one router per resource."""
